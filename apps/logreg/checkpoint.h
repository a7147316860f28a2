// Checkpoints of `rotor logreg train` (docs/formats.md, "Logistic-regression checkpoints"), on
// apps/state_checkpoint: rank 0's part holds the state, written between runs of the delayed
// trainer when every pull has been applied: the iterations done, w (every nonzero weight, the
// intercept's key last) and the margins of every example in data order. Margins are stored, not
// recomputed from w, because the trainer's margins are sums of the pulled changes in pull order:
// recomputing them would change their last bits, and τ = 0 resumes bitwise. Any rank layout
// resumes any checkpoint (each worker takes the margins of its examples, each server its keys).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/logreg/input.h"
#include "apps/logreg/trainer.h"
#include "comm/communicator.h"
#include "core/logreg/model_file.h"
#include "core/logreg/shard.h"
#include "train/resume.h"

namespace rotor::logreg {

/// The flags a checkpoint fixes (checked by name on --resume) and the run's targets. Plain struct.
struct CheckpointSettings {
    double lambda = 1;
    std::uint32_t blocks = 1;
    std::uint64_t seed = 1;
    double eta = 1;
    double max_step = 0;  ///< --max-step (0: none)
    std::string curvature = "bound";
    std::string delay = "0";
    bool intercept = true;
    bool hashed = false;
    std::string block_file;        ///< the --block-file's digest in hex ("": none)
    std::uint64_t iterations = 0;  ///< the total to reach (may change on --resume)
};

/// The state (whole on rank 0). Plain struct.
struct CheckpointState {
    std::uint64_t iterations_done = 0;
    double time_s = 0;                ///< training seconds so far (evaluations excluded)
    std::vector<std::uint64_t> keys;  ///< increasing; kInterceptKey last when present
    std::vector<double> weights;      ///< aligned with keys, nonzero
    std::vector<double> margins;      ///< every example's, in data order
};

/// What read_checkpoint() returns.
struct Checkpoint {
    CheckpointSettings settings;
    DataFingerprint data;
    int ranks = 1;
    CheckpointState state;
};

/// The settings a resumed run cannot change (train::refuse_resume_conflicts), as `ours` has them
/// and as the checkpoint's `theirs` does, named by their flags (kModelFlags: --lambda, --blocks,
/// --seed, --eta, --curvature, --delay, --no-intercept, --hash-features, --max-step,
/// --block-file).
std::vector<train::ResumeSetting> resume_settings(const CheckpointSettings& ours,
                                                  const CheckpointSettings& theirs);

/// Throws ConfigError(`flag`) when checkpoint `resume` was made on other data than `ours` (named
/// `name`), saying what differs (examples, nonzeros; or the same sizes, other values).
void check_same_data(const DataFingerprint& theirs, const DataFingerprint& ours,
                     const std::string& resume, const std::string& name,
                     const std::string& flag = "--resume");

/// The state to checkpoint after `done` iterations and `time_s` training seconds: `m`'s nonzero
/// weights (the intercept's key last when it is not 0) and every example's `margins`.
CheckpointState checkpoint_state(const Model& m, std::vector<double> margins, std::uint64_t done,
                                 double time_s);

/// A resumed run's start from `st`: the servers' w, and on a worker (`part` non-null, whose
/// examples begin at example `first_example` of the data) its copy of w over its keys and its
/// examples' margins, restored bit for bit.
void restore_state(const CheckpointState& st, Shard* part, std::uint64_t first_example,
                   DelayedStart& start);

/// Collective: writes checkpoint `dir` (rank 0's `state` is written; the others' ignored).
/// Failures are agreed (comm::AgreedError); `dir` is then left as it was.
void write_checkpoint(const std::string& dir, comm::Communicator& comm,
                      const CheckpointSettings& settings, const DataFingerprint& data,
                      const CheckpointState& state);

/// Reads and verifies checkpoint `dir` (strict JSON, part 0's size and checksum, shapes).
/// InputError naming the file on any failure. Local: every rank reads it.
Checkpoint read_checkpoint(const std::string& dir);

}  // namespace rotor::logreg
