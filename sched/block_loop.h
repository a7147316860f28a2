// The block loop: the worker machinery every block-parallel model shares, so that a model
// brings only its kernel (docs/scheduler.md, "The block loop"). The dynamic loop runs a
// BlockScheduler's blocks on the Runtime's pinned workers (HarpLDA+, Peng et al., VLDB 2017,
// section 4.2; LIBMF's get_job / put_job) and owns acquire and release, the per-worker time
// accounting, the pick generators, schedule recording, the timer stop (section 5.2), a
// straggler simulation and the per-sweep completion callbacks. The diagonal loop runs the
// deterministic DiagonalSchedule round by round. run_workers_polling lets the calling thread
// poll something (e.g. a message in flight) while the workers run.
//
// Nothing here names a model: a block is a (row group, column group) pair of any matrix (LDA's
// documents × words, matrix factorization's rows of W × column slices of H), and a kernel
// reports "units" of work (tokens, ratings, ...).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/base/timer.h"
#include "sched/block_scheduler.h"
#include "sched/runtime.h"
#include "sched/worker_clock.h"

namespace rotor::sched {

/// What a kernel reports for one block.
struct BlockResult {
    std::uint64_t units = 0;  ///< work done in the block (tokens, ratings, ...)
    bool completed = true;    ///< false leaves the block not done, e.g. when stopped mid-block
};

/// The model's work on one block. Called by worker `worker` in [0, P) while it holds job.block:
/// no concurrent call has the same row or the same column. `stop` becomes true when the loop is
/// stopped (timer, failing poll, another worker's exception); a kernel may check it between
/// units and return early with completed = false. May throw: the loop stops and rethrows.
using BlockKernel =
    std::function<BlockResult(int worker, const Job& job, const std::atomic<bool>& stop)>;

/// Called when a release completes sweep `sweep` (0-based) of every active block, with the
/// accounting of the wall time since the previous sweep's completion (or the loop's start),
/// every worker's time counted up to this moment. Calls come in sweep order, one at a time, on a
/// worker thread (the one whose release completed the sweep, or, when two sweeps complete at
/// nearly the same time, the one closing the earlier sweep), while other workers may be running
/// blocks of the next sweep. May throw: the loop stops and rethrows.
using SweepCallback = std::function<void(int sweep, const IterationTimes& times)>;

/// How run_dynamic_loop runs.
struct DynamicLoopOptions {
    /// Worker w picks its blocks with Rng::from_words(pick_seed followed by w).
    std::vector<std::uint64_t> pick_seed;
    /// > 0: after this many seconds a StopTimer sets the stop flag and calls scheduler.stop();
    /// blocks not completed by then stay not done. 0: no timer.
    double budget_s = 0;
    /// Straggler simulation, >= 1: after a block whose kernel took t seconds the worker sleeps
    /// (factor - 1) * t, counted as compute, ending early when the loop is stopped. 1: none.
    double straggler_factor = 1;
    /// Record one ScheduleEvent per block run (LoopResult::events).
    bool record = false;
    /// Recorded times are origin->seconds() when set, else seconds since the loop started.
    const Stopwatch* origin = nullptr;
    /// When set, the workers run under a helper thread while the calling thread calls poll()
    /// every poll_period until they finish (run_workers_polling).
    std::function<void()> poll;
    std::chrono::microseconds poll_period{500};
    /// Throws ConfigError for budget_s < 0 ("budget_s") or straggler_factor < 1
    /// ("straggler_factor").
    void validate() const;
};

/// What a dynamic loop did.
struct LoopResult {
    std::vector<std::uint64_t> units;   ///< per worker: the sum of its kernels' units
    bool stopped = false;               ///< the timer fired before every block was done
    int sweeps_completed = 0;           ///< on_sweep calls made (completed sweeps)
    std::vector<ScheduleEvent> events;  ///< when recording: every block run, by start time
    IterationTimes times;               ///< the whole loop, from start to the workers' join
};

/// Runs the scheduler's current round: each of the Runtime's P workers acquires a job
/// (BlockScheduler::acquire_job with its pick generator), runs `kernel` on it and releases it
/// with the kernel's `completed`, until acquire returns nothing (every active block done, or
/// stopped). Before calling, the caller starts the round (reset, reset_sweeps, reset_columns or
/// reset_blocks); the scheduler's own recording is not used. Time inside acquire is wait, time
/// inside the kernel (and the straggler sleep) is compute (LiveClocks). Blocks until every worker
/// has finished. On an exception (kernel, on_sweep, poll) the loop sets the stop flag, stops the
/// scheduler, releases the throwing worker's block as not completed, waits for the workers and
/// rethrows the first exception (a poll exception takes precedence). Not reentrant: one loop per
/// scheduler at a time, called from the Runtime's coordinating thread.
LoopResult run_dynamic_loop(Runtime& runtime, BlockScheduler& scheduler,
                            const DynamicLoopOptions& options, const BlockKernel& kernel,
                            const SweepCallback& on_sweep = {});

/// One block of a diagonal round: the block, the round r and its index i in the round
/// (block == DiagonalSchedule::block(r, i)).
struct DiagonalJob {
    Block block;
    int round = 0;
    int index = 0;
};

/// The model's work on one block of a diagonal round; returns the units done. The round's blocks
/// share no row and no column. May throw: the round finishes its started blocks and rethrows.
using DiagonalKernel = std::function<std::uint64_t(int worker, const DiagonalJob& job)>;

/// What a diagonal loop did.
struct DiagonalResult {
    std::vector<std::uint64_t> units;   ///< per worker
    std::vector<ScheduleEvent> events;  ///< when recording: sweep 0, completed, by start time
    IterationTimes times;               ///< every round and every after_round call
};

/// Runs the L rounds of `schedule` one after the other. In round r the workers take the round's
/// blocks by an atomic counter (block i = schedule.block(r, i)) and run `kernel` on them; when
/// all have returned, after_round(r) runs on the calling thread (e.g. to reconcile per-block
/// copies), before round r + 1 starts. `record` and `origin` are as in DynamicLoopOptions.
/// Per-worker compute seconds are the time inside kernels (WorkerClocks).
DiagonalResult run_diagonal_loop(Runtime& runtime, const DiagonalSchedule& schedule,
                                 const DiagonalKernel& kernel,
                                 const std::function<void(int round)>& after_round = {},
                                 bool record = false, const Stopwatch* origin = nullptr);

/// Runs runtime.run_workers(worker) under a helper coordinator thread while the calling thread
/// calls poll() right away and then every `period` until the workers have finished (e.g. to
/// let MPI progress a message in flight: only the calling thread may call MPI). If poll throws,
/// polling ends, on_poll_error() is called (it must make the workers finish, e.g. by stopping
/// their scheduler; it must not throw), the workers are joined and poll's exception is
/// rethrown. Otherwise a worker's exception is rethrown as by run_workers().
void run_workers_polling(Runtime& runtime, const std::function<void(int worker)>& worker,
                         const std::function<void()>& poll, std::chrono::microseconds period,
                         const std::function<void()>& on_poll_error = {});

}  // namespace rotor::sched
