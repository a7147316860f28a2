// A barrier for the P workers of one Runtime::run_workers() call, so that a model can run many
// short steps inside ONE call (one oneTBB hand-off) instead of one call a step (docs/lasso.md,
// "Rounds in one region"). Steps of a few hundred microseconds are shorter than a futex
// wake-up, so a waiter first spins (a pause instruction) for 100 µs, then sleeps on the atomic
// (atomic::wait), woken by the last arrival. It never yields: on a shared machine a yield can
// give the core away for a whole time slice, and a sleeper woken by its partner is scheduled
// sooner than a thread that kept the core busy.
//
// A worker that fails can break() the barrier: every present and later wait returns false at
// once, so the others leave their loops instead of waiting for a partner that never comes.
#pragma once

#include <atomic>
#include <cstdint>

namespace rotor::sched {

/// A reusable barrier of a fixed number of parties with adaptive waiting. Thread-safe; one object
/// per group of workers that meet. Not copyable or movable.
class WorkerBarrier {
  public:
    /// `parties` >= 1 threads meet at each generation. ConfigError("parties") otherwise.
    explicit WorkerBarrier(int parties);
    WorkerBarrier(const WorkerBarrier&) = delete;
    WorkerBarrier& operator=(const WorkerBarrier&) = delete;

    /// Blocks until all parties have arrived at this generation; the last arrival releases the
    /// others and opens the next. Returns true, or false (at once, now or later) once the barrier
    /// is broken. Everything a party wrote before arriving is visible to every party after.
    bool arrive_and_wait() noexcept;
    /// Breaks the barrier for good: every waiter returns false, and so will every later wait.
    void break_barrier() noexcept;
    bool broken() const noexcept { return broken_.load(std::memory_order_acquire); }

    int parties() const noexcept { return parties_; }
    /// Sleeps in atomic::wait (waits that outlasted the spinning), since construction: a
    /// diagnostic of how often a partner was late by more than the 100 µs of spinning.
    std::uint64_t sleeps() const noexcept { return sleeps_.load(std::memory_order_relaxed); }

  private:
    const int parties_;
    std::atomic<int> arrived_{0};
    std::atomic<std::uint32_t> generation_{0};
    std::atomic<bool> broken_{false};
    std::atomic<std::uint64_t> sleeps_{0};
};

}  // namespace rotor::sched
