// Checkpoints whose whole state is gathered on rank 0 (matrix factorization, the Lasso): part 0
// holds the state, the other ranks' parts are 9-byte markers (magic, version, 0), and every rank
// reads part 0 on --resume, so any number of ranks resumes any checkpoint (docs/formats.md, "MF
// checkpoints"). The framing is train::write_checkpoint_dir's; this adds the manifest's common
// keys and their strict reading.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/communicator.h"
#include "comm/wire.h"
#include "core/base/error.h"

namespace rotor::train {

/// What tells one model's checkpoints apart.
struct StateCheckpointFormat {
    const char* format;          ///< state.json's "format"
    int version;                 ///< state.json's "version"
    const char* name;            ///< in "not a <name> checkpoint"
    std::uint32_t part_magic;    ///< first u32 of every part
    std::uint32_t part_version;  ///< second u32 of every part
    const char* options_key;     ///< state.json's key of the run's settings ("options")
    const char* input_key;       ///< its key of the training input's fingerprint ("data")
    std::array<const char*, 4> input_fields;  ///< the fingerprint's fields (nullptr: unused)
};

/// A fingerprint of the training input: the values of StateCheckpointFormat::input_fields.
using InputFingerprint = std::array<std::uint64_t, 4>;

/// A part's writer, begun as every part begins: part_magic, part_version, then a byte 1 when the
/// part holds the state (part 0's), 0 for the other ranks' markers.
comm::WireWriter begin_state_part(const StateCheckpointFormat& f, bool holds_state = true);
/// Reads part 0's beginning as begin_state_part() writes it; CommError (r.fail) otherwise.
void expect_state_part(comm::WireReader& r, const StateCheckpointFormat& f);

/// Collective: writes checkpoint `dir`. Rank 0's part is `state` (the model's encoding, which
/// starts with part_magic, part_version and a byte 1); the others write the marker. state.json
/// holds format, version, options_key: `options`, iterations_done, ranks, then input_key: an
/// object of the input_fields and `input`'s values, and the parts. Failures are agreed
/// (comm::AgreedError).
void write_state_checkpoint(const std::string& dir, comm::Communicator& comm,
                            const StateCheckpointFormat& f, const std::vector<std::byte>& state,
                            const nlohmann::ordered_json& options, std::uint64_t iterations_done,
                            const InputFingerprint& input);

/// What read_state_checkpoint() checked and read.
struct StateCheckpointFiles {
    nlohmann::json manifest;  ///< state.json, format and version checked
    std::string path;         ///< of state.json
    int ranks = 1;            ///< ranks that wrote it
    std::string part;         ///< part 0's bytes, size and checksum checked
    std::string part_path;
};

/// Reads state.json strictly (format, version, ranks, one part per rank) and part 0 (present,
/// whole, checksum). InputError naming the file otherwise. Local.
StateCheckpointFiles read_state_checkpoint(const std::string& dir, const StateCheckpointFormat& f);

/// state.json's options_key object (InputError when missing).
const nlohmann::json& state_options(const StateCheckpointFiles& files,
                                    const StateCheckpointFormat& f);
/// state.json's input fingerprint (each field an unsigned integer; InputError otherwise).
InputFingerprint read_input_fingerprint(const StateCheckpointFiles& files,
                                        const StateCheckpointFormat& f);

/// InputError naming state.json unless its "iterations_done" (in 0..max_done) is `done`, part 0's.
void check_iterations_done(const StateCheckpointFiles& files, std::uint64_t done,
                           std::uint64_t max_done);

/// Part 0's state: `decode(bytes, part_path)` (the model's decoder; a CommError it throws becomes
/// an InputError naming the part), whose iterations_done state.json's must equal
/// (check_iterations_done).
template <class Decode>
auto decode_state_part(const StateCheckpointFiles& files, Decode decode,
                       std::uint64_t max_done = std::numeric_limits<std::uint64_t>::max()) {
    auto state = [&] {
        try {
            return decode(std::as_bytes(std::span(files.part.data(), files.part.size())),
                          files.part_path);
        } catch (const CommError& e) {
            throw InputError(files.part_path, e.what());
        }
    }();
    check_iterations_done(files, state.iterations_done, max_done);
    return state;
}

}  // namespace rotor::train
