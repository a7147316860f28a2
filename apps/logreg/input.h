// A rank's part of the training data for `rotor logreg train` (docs/logreg.md, "Sharded input"):
// counted before loading (the memory plan and the line numbers of a byte-range part need it),
// then read, each worker reading only its part; and a fingerprint of the whole data that does not
// depend on how it was split (checkpoints refuse other data). Local functions: the CLI gathers
// the counts and fingerprints between them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/logreg/examples.h"
#include "core/logreg/examples_input.h"

namespace rotor::logreg {

/// Part w of W of a training file, counted before it is read. Plain struct.
struct PartCount {
    ExamplesForm form = ExamplesForm::kText;
    std::uint64_t newlines = 0;         ///< text: the '\n' of the part's byte range
    std::uint64_t examples = 0;         ///< at most this many examples (exact for the binary form)
    std::uint64_t nonzeros = 0;         ///< at most this many nonzeros (exact for the binary form)
    std::uint64_t keys = 0;             ///< at most this many distinct keys in the whole data
    std::uint64_t parsed_nonzeros = 0;  ///< nonzeros parsed on the way (gzip: the whole file)
    std::uint64_t parsed_examples = 0;
};

/// Counts part `w` of `workers` of `path` (a cheap pass: no parsing). InputError if unreadable.
PartCount count_part(const std::string& path, std::size_t w, std::size_t workers);

/// Reads part `w` of `workers`, numbering its lines from `first_line` (the earlier parts'
/// newlines + 1). `hashed` is set when the file is a binary form of hashed features.
Examples read_part(const std::string& path, const PartCount& count, std::size_t w,
                   std::size_t workers, std::uint64_t first_line,
                   const ReadExamplesOptions& options, bool& hashed);

/// Every example of `path`: text (plain or gzip) or the binary form. `hashed`: whether features
/// are hashed, as `by` decides ("the model", "--hash-features"); a binary form that disagrees is
/// an InputError naming both.
Examples read_whole(const std::string& path, bool hashed, const std::string& by);

/// Identifies training data surely enough to refuse resuming on other data; the same whether
/// the data was read whole or in parts.
struct DataFingerprint {
    std::uint64_t examples = 0;
    std::uint64_t nonzeros = 0;
    std::uint64_t hash = 0;  ///< Σ_i h_i P^(n-1-i) mod 2^64, h_i FNV-1a of example i
    friend bool operator==(const DataFingerprint&, const DataFingerprint&) = default;
};

/// The fingerprint of a part (as if it were all the data).
DataFingerprint fingerprint(const Examples& part);
/// The fingerprint of parts' data concatenated in order, from the parts' fingerprints.
DataFingerprint combine(std::span<const DataFingerprint> parts);

/// The memory plan of one rank: the bytes it will hold at its peak. Plain struct of inputs.
struct PlanInputs {
    PartCount count;                 ///< this rank's (zeros on a pure server)
    std::uint64_t all_examples = 0;  ///< Σ over workers (bounds)
    std::uint64_t all_keys = 0;      ///< a bound of the distinct keys of the whole data
    std::size_t servers = 1;
    bool server = false;
    bool rank0 = false;  ///< gathers the model, evaluations and checkpoints
    std::uint32_t blocks = 1;
    std::int64_t delay = 0;  ///< τ, or -1 (infinite)
    int threads = 1;         ///< the worker's threads (each holds its column slices)
};
std::uint64_t estimate_memory(const PlanInputs& in);

}  // namespace rotor::logreg
