// The flags every `rotor <model> train` has, registered once: threads, seed, iterations,
// evaluation cadence, output, metrics, trace, checkpoints and resume, the memory limit, pinning
// and quiet. A model's CLI adds its own flags beside them and copies these into its options.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>

#include "core/io/atomic_file.h"
#include "sched/runtime.h"

namespace rotor::train {

/// Values of the common flags. Set the defaults a model wants before add_common_train_flags
/// (they are shown in --help).
struct CommonTrainFlags {
    std::string out;                 ///< --out: the model to write (required)
    int threads = 0;                 ///< --threads: 0 = every core (per rank under mpiexec)
    std::uint64_t seed = 1;          ///< --seed
    std::uint32_t iterations = 100;  ///< --iterations: the total a run (or a resumed run) reaches
    bool iterations_set = false;     ///< whether --iterations was given
    std::uint32_t eval_every = 10;   ///< --eval-every: evaluate every N iterations (0: last only)
    std::string metrics;             ///< --metrics: JSON-lines file, one record per iteration
    std::string trace;               ///< --trace: Chrome trace-event timeline of the blocks
    std::uint32_t checkpoint_every = 0;  ///< --checkpoint-every N (0: never)
    std::string checkpoint_dir;          ///< --checkpoint-dir (default <out>.checkpoint)
    std::string resume;                  ///< --resume DIR: continue a checkpointed run
    std::string max_memory;              ///< --max-memory: refuse runs needing more
    bool quiet = false;                  ///< --quiet: no progress lines
    bool no_pin = false;                 ///< --no-pin: do not pin workers to cores
    bool overwrite = false;              ///< --overwrite: replace an earlier model at --out

    /// Worker threads to run: `threads`, or for 0 this host's cores shared out among the
    /// `host_ranks` processes on it. ConfigError("--threads") if < 0.
    int resolved_threads(int host_ranks = 1) const;
    /// A warning when `threads` workers on each of the `host_ranks` ranks of this host exceed
    /// the processors this process may run on ("" otherwise): the workers take turns, and the
    /// grid follows the processors (sched::default_grid_side). The CLI prints it once. A
    /// process bound to fewer processors than the host's (mpiexec binds ranks to their own
    /// cores) counts only its own threads against them.
    static std::string oversubscription_warning(int threads, int host_ranks = 1);
    /// The same for a process allowed `cpus` of the host's `online` processors.
    static std::string oversubscription_warning(int threads, int host_ranks, int cpus, int online);
    /// kNone with --no-pin, else kAuto (pinned when the workers fill the CPUs the rank may use).
    sched::PinMode pin_mode() const;
    /// --checkpoint-dir, or <out>.checkpoint when checkpoints are on and it is not given.
    std::string resolved_checkpoint_dir() const;
    /// Before any work (on the rank that writes): --out may be written, a model of this `kind`
    /// recognised by `marker` (core::check_output: new, an empty directory, or an earlier model
    /// with --overwrite, or with --resume: a resumed run continues the run that wrote its --out,
    /// and writes it in place), and the directories --metrics, --trace and the checkpoints go
    /// into exist. Throws ConfigError naming the flag.
    void check_outputs(core::OutputKind kind, std::string_view marker) const;
};

/// Registers a feature switch: `--<name>` turns it on, `--no-<name>` off (the two exclude each
/// other); the help of each says which is the default, taken from `value`'s value now (CLI11's
/// own negated flags print a misleading "{false}"). `value` must outlive `c`.
void add_switch(CLI::App& c, const std::string& name, bool& value, const std::string& help);

/// Under mpiexec every rank must have work: throws ConfigError("mpiexec -n") when fewer `units`
/// (documents, samples, users, ...: named by `what`) than the `ranks` sharing them, saying how
/// many ranks would do; every rank computes the same, so all agree. Passes for an empty input
/// (refused elsewhere with its own message) and for one rank.
void check_work_per_rank(std::uint64_t units, std::uint64_t ranks, const std::string& what);

/// `path` made absolute and normal (lexically), as an output records its input (params.json),
/// so that it still names the file from another directory. `path` itself if that fails.
std::string absolute_path(const std::string& path);

/// Registers `--overwrite` (replace an earlier output of rotor at --out) bound to `value`.
void add_overwrite_flag(CLI::App& c, bool& value);

/// --delay of the key-value trainers: "0", "3", "inf" → τ (-1 for inf, comm::kInfiniteDelay).
/// ConfigError("--delay") otherwise.
std::int64_t parse_delay(const std::string& s);

/// --simulate-straggler of the key-value trainers: "RANK:FACTOR" (FACTOR >= 1) → (rank, factor).
/// ConfigError("--simulate-straggler") otherwise.
std::pair<int, double> parse_straggler(const std::string& text);

/// Registers the common flags of a `train` subcommand, bound to `f` (which must outlive `c`).
/// `unit` names one iteration in the help ("Gibbs sweeps", "epochs", ...).
void add_common_train_flags(CLI::App& c, CommonTrainFlags& f,
                            const std::string& unit = "iterations");

}  // namespace rotor::train
