// Per-thread time accounting (shared/ARCHITECTURE.md, "Metrics"): each worker adds the seconds
// it spends computing (inside a block) and waiting (inside BlockScheduler::acquire); the rest of
// the iteration's wall time is overhead. At the end of an iteration the clocks are summarized
// into effective_ratio, load_cv and overhead_ratio.
#pragma once

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
    /// Stops the wall clock and summarizes.
    IterationTimes end_iteration() const;

  private:
    std::vector<WorkerClock> clocks_;
    Stopwatch wall_;
};

}  // namespace rotor::sched
