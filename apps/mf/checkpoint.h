// Checkpoints of `rotor mf train` (docs/formats.md, "MF checkpoints"): the trainer's whole state
// (TrainerState) gathered on rank 0 and written as part 0 of a train::write_checkpoint_dir
// directory; the other ranks' parts are empty markers. Any number of ranks resumes it: every rank
// reads part 0 and takes its rows (Trainer::restore). state.json holds the options, the progress
// and a fingerprint of the training ratings, parsed strictly on reading.
#pragma once

#include <cstdint>
#include <string>

#include "apps/mf/trainer.h"
#include "comm/communicator.h"
#include "core/mf/ratings.h"
#include "train/resume.h"

namespace rotor::mf {

/// Identifies a training matrix surely enough to refuse resuming on another one.
struct RatingsFingerprint {
    std::uint64_t users = 0;
    std::uint64_t items = 0;
    std::uint64_t ratings = 0;
    std::uint64_t hash = 0;  ///< FNV-1a over the CSR arrays and the ids
    friend bool operator==(const RatingsFingerprint&, const RatingsFingerprint&) = default;
};
RatingsFingerprint fingerprint(const RatingsFile& train);
/// The same of a matrix and its id maps held apart (rotor.MF names row i "i").
RatingsFingerprint fingerprint(const Ratings& ratings, const IdMap& users, const IdMap& items);
/// Throws ConfigError(`flag`) when checkpoint `resume` was made on other ratings than `ours`
/// (named `name`), saying what differs (users, items, ratings; or the same sizes, other values
/// or ids).
void check_same_ratings(const RatingsFingerprint& theirs, const RatingsFingerprint& ours,
                        const std::string& resume, const std::string& name,
                        const std::string& flag = "--resume");

/// The model-defining settings a resumed run cannot change (train::refuse_resume_conflicts), as
/// `a` has them and as the checkpoint's `b` does, named by their flags (--solver, --rank,
/// --lambda, ...).
std::vector<train::ResumeSetting> resume_settings(const TrainOptions& a, const TrainOptions& b);

/// What a checkpoint holds, as read back.
struct Checkpoint {
    TrainOptions options;  ///< as the run was started (iterations: its target)
    RatingsFingerprint ratings;
    int ranks = 1;  ///< ranks that wrote it
    TrainerState state;
};

/// The options of a run resumed from `c`: the checkpoint's, with `ours`' total (iterations, which
/// the caller has checked with train::check_resume_target), evaluation cadence and schedule
/// recording, which are monitoring. The caller refuses conflicts first (resume_settings).
TrainOptions resumed_options(const TrainOptions& ours, const Checkpoint& c);

/// Collective: gathers the trainer's state and writes checkpoint `dir` (rank 0's part holds it).
/// Failures are agreed across ranks (comm::AgreedError); `dir` is then left as it was.
void write_checkpoint(const std::string& dir, Trainer& trainer, const TrainOptions& options,
                      const RatingsFingerprint& ratings, comm::Communicator& comm);

/// Peak bytes a checkpoint adds on a rank (rank 0's gathered state beside its encoding on
/// writing; the part read beside the decoded state on --resume): for the memory plan.
std::uint64_t checkpoint_memory(const Ratings& train, const TrainOptions& options);

/// Reads and verifies checkpoint `dir` (strict JSON, format and version, the part's size and
/// checksum, shapes). InputError naming the file on any failure. Local: every rank reads it.
Checkpoint read_checkpoint(const std::string& dir);

}  // namespace rotor::mf
