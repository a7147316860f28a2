// `rotor logreg train` behind its flags (docs/logreg.md, "Command line"): the data read in parts
// (each worker its own), the memory plan, the delayed trainer run between evaluations and
// checkpoints, the metrics file, --resume, and the model written by rank 0. Used by cli.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "apps/logreg/trainer.h"
#include "comm/communicator.h"
#include "core/logreg/objective.h"
#include "train/common_flags.h"

namespace rotor::logreg {

/// The flags of `rotor logreg train`. Plain struct.
struct TrainFlags {
    std::string data;
    std::string test;
    std::string delay = "0";
    std::string solver = "auto";  ///< auto, newton or prox (apps/logreg/newton_run.h)
    std::string curvature;        ///< bound, local, or "" (auto: local with max-step 1 at τ = 0)
    bool no_intercept = false;
    bool hash_features = false;
    bool deterministic = false;  ///< --deterministic: exact pushes at any delay (PushValues)
    bool quiet = false;          ///< no progress lines (the CLI copies common.quiet)
    int servers = 0;
    std::uint64_t eval_every = 0;  ///< 0: at the end only (default: see auto_settings)
    double tol = kDefaultTol;      ///< the stopping rule (subgradient_converged; 0: never)
    double time_limit = 0;         ///< --time-limit: stop at the first evaluation after (0: none)
    std::string straggler;         ///< --simulate-straggler RANK:FACTOR
    // Filters (apps/logreg/filters.h): the --filters list and the --stats file.
    std::string filters;
    std::string stats;
    // --block-file (core/logreg/block_groups.h) and the digest of its lines (0: none).
    std::string block_file;
    std::uint64_t block_file_digest = 0;
    DelayedOptions options;
    /// The flags every `rotor <model> train` has (train/common_flags.h): --out, --overwrite,
    /// --metrics, --checkpoint-every, --checkpoint-dir, --resume and --max-memory are read from
    /// here; the CLI copies --threads, --seed, --iterations, --eval-every and --quiet into
    /// options, eval_every and quiet (which the Python package sets directly).
    train::CommonTrainFlags common;
    /// The model-defining flags given on the command line (with --resume they must agree with
    /// the checkpoint).
    std::vector<std::string> given;
};

/// Defaults chosen from the data (docs/logreg.md, "Defaults"): block iterations cap, passes.
inline constexpr std::uint64_t kDefaultPasses = 1000;  ///< --iterations: this many passes
inline constexpr std::uint64_t kEvalPasses = 4;        ///< --eval-every with --tol: passes

/// --blocks when not given: about 8 keys a block, at most 1,024 (256 with threads, whose
/// rounds need work, or with several ranks, whose pushes and answers then carry more keys for
/// their fixed cost; docs/logreg.md, "Speed").
std::uint32_t auto_blocks(std::uint64_t keys, int threads, int ranks = 1);

/// Whether `flag` was given on the command line (f.given).
bool flag_given(const TrainFlags& f, std::string_view flag);

/// The line saying whether a run converged and why it stopped (docs/logreg.md, "Stopping and
/// defaults"): "converged <where>: <rule> <= --tol T" when `why` is empty, else "NOT converged:
/// stopped <where>, <why>: <rule> > --tol T"; the rule's value is `ratio` (NaN: not evaluated).
std::string stop_sentence(const std::string& where, const std::string& why, double ratio,
                          double tol);

/// The flags --resume compares with the checkpoint.
inline constexpr const char* kModelFlags[] = {
    "--lambda", "--blocks",       "--seed",          "--eta",      "--curvature",
    "--delay",  "--no-intercept", "--hash-features", "--max-step", "--block-file"};

/// "0", "3", "inf" → τ (comm::kInfiniteDelay for inf). ConfigError("--delay") otherwise.
std::int64_t parse_delay(const std::string& s);

/// "RANK:FACTOR" (FACTOR >= 1) into options. ConfigError("--simulate-straggler") otherwise.
void parse_straggler(const std::string& text, DelayedOptions& options);

/// Collective over `world`: trains and writes the model (rank 0). Throws rotor errors (agreed).
void run_train(TrainFlags& f, comm::Communicator& world);

}  // namespace rotor::logreg
