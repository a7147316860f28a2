// Checkpoints of `rotor lasso train` (docs/formats.md, "Lasso checkpoints"): the trainer's whole
// state (TrainerState, the residuals gathered in row order) written by rank 0 as part 0 of a
// train::write_checkpoint_dir directory; the other ranks' parts are empty markers. Any number of
// ranks x threads resumes it bitwise: every rank reads part 0 and takes its rows
// (Trainer::restore). state.json holds the options, the progress and a fingerprint of the data,
// parsed strictly on reading.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "apps/lasso/trainer.h"
#include "comm/communicator.h"
#include "core/lasso/design.h"
#include "train/resume.h"

namespace rotor::lasso {

/// Identifies a data set surely enough to refuse resuming on another one.
struct DataFingerprint {
    std::uint64_t samples = 0;
    std::uint64_t features = 0;
    std::uint64_t entries = 0;
    std::uint64_t hash = 0;  ///< FNV-1a over the offsets, columns, values and targets
    friend bool operator==(const DataFingerprint&, const DataFingerprint&) = default;
};
DataFingerprint fingerprint(const RawData& data);
/// The same from the arrays of RawData where they lie (a mapped binary file's).
DataFingerprint fingerprint(std::uint32_t features, std::span<const std::uint64_t> row_offsets,
                            std::span<const std::uint32_t> cols, std::span<const double> values,
                            std::span<const double> targets);

/// Throws ConfigError(`flag`) when checkpoint `resume` was made on other data than `ours` (named
/// `name`), saying what differs (samples, features, entries; or the same sizes, other values).
void check_same_data(const DataFingerprint& theirs, const DataFingerprint& ours,
                     const std::string& resume, const std::string& name,
                     const std::string& flag = "--resume");

/// The settings a resumed run cannot change (train::refuse_resume_conflicts), as `a` has them and
/// as the checkpoint's `b` does, named by their flags (--lambda, --schedule, ...).
std::vector<train::ResumeSetting> resume_settings(const TrainOptions& a, const TrainOptions& b);

/// What a checkpoint holds, as read back.
struct Checkpoint {
    TrainOptions options;  ///< as the run was started
    DataFingerprint data;
    int ranks = 1;  ///< ranks that wrote it
    TrainerState state;
};

/// Collective: gathers the trainer's state and writes checkpoint `dir` (rank 0's part holds it).
/// Failures are agreed across ranks (comm::AgreedError); `dir` is then left as it was.
void write_checkpoint(const std::string& dir, Trainer& trainer, const TrainOptions& options,
                      const DataFingerprint& data, comm::Communicator& comm);

/// Reads and verifies checkpoint `dir` (strict JSON, format and version, the part's size and
/// checksum, shapes). InputError naming the file on any failure. Local: every rank reads it.
Checkpoint read_checkpoint(const std::string& dir);

}  // namespace rotor::lasso
