// Per-thread time accounting (docs/architecture.md, "Metrics keys"): each worker adds the seconds
// it spends computing (inside a block) and waiting (inside BlockScheduler::acquire); the rest of
// the iteration's wall time is overhead. At the end of an iteration the clocks are summarized
// into effective_ratio, load_cv and overhead_ratio.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "core/base/timer.h"

namespace rotor::sched {

/// What a worker is doing.
enum class Phase { kCompute, kWait };

/// One worker's accumulators for the current iteration. Written only by its own worker (not
/// thread-safe); read by the coordinator after the workers have joined. Cache-line aligned so
/// that neighbouring workers do not share a line.
struct alignas(64) WorkerClock {
    double compute_s = 0;  ///< seconds inside blocks
    double wait_s = 0;     ///< seconds waiting for a free block

    void add(Phase phase, double seconds) noexcept {
        (phase == Phase::kCompute ? compute_s : wait_s) += seconds;
    }
};

/// Adds the seconds between its construction and destruction to one phase of a WorkerClock.
class PhaseTimer {
  public:
    PhaseTimer(WorkerClock& clock, Phase phase) : clock_(clock), phase_(phase) {}
    PhaseTimer(const PhaseTimer&) = delete;
    PhaseTimer& operator=(const PhaseTimer&) = delete;
    ~PhaseTimer() { clock_.add(phase_, watch_.seconds()); }

  private:
    WorkerClock& clock_;
    Phase phase_;
    Stopwatch watch_;
};

/// One iteration's accounting. All ratios are in [0, 1] except load_cv (>= 0).
struct IterationTimes {
    double wall_s = 0;
    std::vector<double> compute_s;  ///< per worker
    std::vector<double> wait_s;     ///< per worker
    std::vector<double> other_s;    ///< per worker: wall - compute - wait, clamped at 0
    double effective_ratio = 0;     ///< Σ compute / (P × wall)
    double load_cv = 0;             ///< population std / mean of compute; 0 when the mean is 0
    double overhead_ratio = 0;      ///< mean over workers of 1 - compute / wall
};

/// Population standard deviation / mean of `values`: 0 when empty or the mean is not positive
/// (IterationTimes::load_cv of the workers' compute seconds; the ranks' rank_load_cv).
double population_cv(std::span<const double> values);

/// Computes the ratios from per-worker seconds and the iteration's wall seconds (> 0).
IterationTimes summarize_times(std::span<const double> compute_s, std::span<const double> wait_s,
                               double wall_s);

/// The clocks of P workers plus the iteration's wall clock. begin_iteration() and
/// end_iteration() are called by the coordinator while no worker runs; between them worker w
/// writes only clock(w).
class WorkerClocks {
  public:
    explicit WorkerClocks(int workers);
    int workers() const noexcept { return static_cast<int>(clocks_.size()); }
    WorkerClock& clock(int worker);
    /// Zeroes every clock and starts the wall clock.
    void begin_iteration();
    /// Adds each worker's compute and wait seconds of `part` (one round of several in the
    /// iteration, e.g. a block loop's LoopResult::times) to its clock. Sizes must match.
    void add(const IterationTimes& part);
    /// Stops the wall clock and summarizes.
    IterationTimes end_iteration() const;

  private:
    std::vector<WorkerClock> clocks_;
    Stopwatch wall_;
};

/// Per-worker clocks that can be read while the workers run, for pipelined sweeps: a sweep ends
/// when its last block is released, while the other workers are inside blocks of the next one,
/// so its accounting must count their time up to that moment. Each worker enters and leaves
/// phases on its own slot (a mutex per slot, uncontended but for snapshots); snapshot() may be
/// called from any thread.
class LiveClocks {
  public:
    /// Cumulative seconds per worker since construction, and the wall seconds, at one moment.
    struct Snapshot {
        double wall_s = 0;
        std::vector<double> compute_s;
        std::vector<double> wait_s;
    };

    explicit LiveClocks(int workers);
    int workers() const noexcept { return workers_; }
    /// Worker `worker` starts `phase` (it must not be in a phase).
    void enter(int worker, Phase phase);
    /// Worker `worker` ends its phase, adding the elapsed seconds to it.
    void leave(int worker);
    /// Every worker's seconds so far, a phase in progress counted up to now.
    Snapshot snapshot() const;
    /// The accounting of the interval between two snapshots (`from` taken first).
    static IterationTimes between(const Snapshot& from, const Snapshot& to);

  private:
    struct alignas(64) Slot {
        mutable std::mutex mutex;
        double compute_s = 0;
        double wait_s = 0;
        int phase = -1;      ///< the Phase in progress, -1 for none
        double since_s = 0;  ///< when it began, on wall_
    };
    int workers_;
    std::unique_ptr<Slot[]> slots_;
    Stopwatch wall_;
};

/// Times one phase of one worker of LiveClocks, from construction to destruction.
class LivePhase {
  public:
    LivePhase(LiveClocks& clocks, int worker, Phase phase) : clocks_(clocks), worker_(worker) {
        clocks_.enter(worker, phase);
    }
    LivePhase(const LivePhase&) = delete;
    LivePhase& operator=(const LivePhase&) = delete;
    ~LivePhase() { clocks_.leave(worker_); }

  private:
    LiveClocks& clocks_;
    int worker_;
};

}  // namespace rotor::sched
