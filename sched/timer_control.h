// HarpLDA+ timer control (Peng et al., VLDB 2017, section 5.2): every rank stops sampling a
// round at the same moment, after a time budget tuned so that a round processes between `low`
// and `high` of its work. Pure logic here; the StopFlag and StopTimer carry the stop to workers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <thread>

namespace rotor::sched {

/// Parameters of the timer control.
struct TimerParams {
    double initial_s = 1.0;  ///< t0, the first round's budget in seconds, > 0
    double low = 0.4;        ///< L: below this processed ratio the budget doubles, in (0, 1)
    double high = 0.8;       ///< H: above this processed ratio the budget halves, in (low, 1]
    double min_s = 1e-3;     ///< the budget never goes below this, seconds, > 0
    double max_s = 3600.0;   ///< the budget never goes above this, seconds, >= min_s
    /// Throws ConfigError naming the bad key (e.g. "timer.low").
    void validate() const;
};

/// The budget of the next round. Not thread-safe (the coordinator owns it).
class TimerControl {
  public:
    /// Validates `params`; the first budget is initial_s clamped to [min_s, max_s].
    explicit TimerControl(const TimerParams& params);
    /// Seconds the next round may compute.
    double budget() const noexcept { return budget_; }
    /// Feeds the processed ratio R of the round just finished (work done / work available, in
    /// [0, 1]; ConfigError "processed_ratio" otherwise): R < low doubles the budget, R > high
    /// halves it, else it stays. Returns the new budget.
    double update(double processed_ratio);
    /// Sets the budget to `seconds` clamped to [min_s, max_s] (e.g. budget_for_ratio's, when the
    /// timer resumes after rounds that ran untimed); returns it.
    double reset(double seconds);
    const TimerParams& params() const noexcept { return params_; }

  private:
    TimerParams params_;
    double budget_;
};

/// The round budget b at which ranks of the measured `speeds` (work per second, one per rank),
/// each holding `amounts` of work cut into `rounds` equal rounds an iteration, would process
/// `ratio` of the total work in an iteration: Σ_q min(rounds · b · speed_q, amount_q) = ratio · Σ
/// amount (a rank sampling at its speed until the budget ends each round, or its round's work
/// does). 0 when there is no work or a rank has no speed; ratio in (0, 1].
double budget_for_ratio(std::span<const std::uint64_t> amounts, std::span<const double> speeds,
                        int rounds, double ratio);

/// A flag that tells workers to stop. Set by a timer thread or the coordinator, polled by
/// workers between tokens or blocks. Thread-safe; release/acquire ordered.
class StopFlag {
  public:
    void request() noexcept { flag_.store(true, std::memory_order_release); }
    bool requested() const noexcept { return flag_.load(std::memory_order_acquire); }
    void clear() noexcept { flag_.store(false, std::memory_order_release); }

  private:
    std::atomic<bool> flag_{false};
};

/// A one-shot timer thread: after `seconds` it calls `on_expire` (e.g. set a StopFlag and stop a
/// BlockScheduler) unless cancel() or the destructor came first. on_expire runs on the timer's
/// own thread and must not throw. cancel() and the destructor join the thread.
class StopTimer {
  public:
    StopTimer(double seconds, std::function<void()> on_expire);
    StopTimer(const StopTimer&) = delete;
    StopTimer& operator=(const StopTimer&) = delete;
    ~StopTimer();
    /// Stops the timer; returns true when on_expire had already run.
    bool cancel();

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool cancelled_ = false;
    bool fired_ = false;
    std::thread thread_;
};

}  // namespace rotor::sched
