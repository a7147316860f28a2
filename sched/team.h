// The worker team: how every model's workers share the work of a step and wait for each other
// (docs/scheduler.md, "The team"). A Team runs on a Runtime's pinned workers. A call runs a
// sequence of steps; each step is cut into size() SHARES (a share is a part of the model's data,
// e.g. a range of rows, not a thread), and the shares of a step are taken from a shared counter
// by whichever worker is running. A step starts once every share of the previous one is done.
//
// The one waiting policy, for every wait in a call (a worker waiting for a step to complete, the
// caller of run() waiting for its shares): spin on the word with a pause instruction for at most
// kSpinFor, then block in the kernel (futex) until the last share of the step wakes it. It never
// yields: on a machine shared with other work a yield hands the core to another process for a
// whole time slice (the benchmark log, `git show b26f669:docs/BENCHMARKS.md`, Lasso, "One region
// a pass"; MF-CCD's old barrier spent 34.6 s against 3.3 s for one thread that way).
//
// Stepping aside. When a worker finishes the last share of a step while a teammate was blocked
// waiting for it, it looks at its own CPU time: if it ran for less than half of the time it was
// not waiting, another process holds its core, and it steps aside for kBenchFor (it takes no
// more shares: the teammates on free cores take them, and its core is left to the other
// process). A worker of the team stepping aside within a second of the last one's end doubles
// the time, up to kBenchMax. The last worker of a call never steps aside. While all workers but
// one stand aside, the calling thread runs the calls alone (no hand-off). So a team whose
// threads outnumber the free cores runs at about the speed of one thread instead of waiting at
// every step for a descheduled teammate, and tries its workers again now and then.
//
// Going solo when the workers do not pay. The team measures what its hand-offs buy: over a
// window of calls (kWindow of their wall time) it adds up the CPU time its threads spent running
// shares (each task's thread CPU time, less its spinning) and divides by the calls' wall time.
// That is the window's speedup over running every share on one thread; below kMinSpeedup (steps
// too small for a hand-off, or a teammate's core taken by another process) the calling thread
// runs the calls alone for kSoloFor, then tries the workers for one more window; each window in a
// row that does not pay doubles the time alone, up to kSoloMax, and one that pays resets it. The
// time alone is never shorter than kSoloCalls of the window's calls (their mean wall time): a
// window of long calls (MF-CCD's iteration, a third of a second on MovieLens-small) is one call,
// and a probe every kSoloFor would hand off every other call. A
// team of one worker always runs on the calling thread. Shares that each cost a fixed amount
// (their own sums, their own column slices) make a call run alone over P shares dearer than one
// thread's: such a model gives run() the step as ONE share too, which the calling thread runs
// instead while the team is alone, so that a team alone does one thread's work.
//
// Which worker runs which share varies from run to run: a share's work must depend only on the
// share and the step, never on the thread. Models keep per-share state (partial sums, clocks)
// indexed by the share, and get the same bits for any assignment.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "sched/runtime.h"

namespace rotor::sched {

namespace detail {
/// Which threads stand aside from a team, and until when: one slot per worker, keyed by thread;
/// and the CPU time the team's tasks spent on shares (work_ns). Thread-safe; shared by a Team and
/// its calls' tasks (which may outlive a call).
class TeamAside {
  public:
    explicit TeamAside(int slots);
    /// The calling thread stands aside from `now`; returns until when: Team::kBenchFor, or
    /// twice the team's last time (up to Team::kBenchMax) when the last one ended less than a
    /// second before `now` (or has not ended).
    std::chrono::steady_clock::time_point aside(std::chrono::steady_clock::time_point now) noexcept;
    /// Threads standing aside at `now`.
    int count(std::chrono::steady_clock::time_point now) const noexcept;

  private:
    struct Slot {
        std::atomic<std::uint64_t> thread{0};  ///< a hash of the thread's id, 0: free
        std::atomic<std::int64_t> until{0};    ///< steady_clock ticks
    };

  public:
    /// CPU nanoseconds the team's tasks spent running shares since the team last read it
    /// (a task that ends after its call adds to the next window's).
    std::atomic<std::int64_t> work_ns{0};

  private:
    std::vector<Slot> slots_;
    std::mutex mutex_;              ///< guards the two below
    std::int64_t last_length_ = 0;  ///< the last stepping aside's length, steady_clock ticks
    std::int64_t last_until_ = 0;   ///< the latest end of one
};
}  // namespace detail

/// What one Team call did.
struct TeamRun {
    /// Per worker task (indexed 0..size()-1, not by share): seconds spent waiting for a step to
    /// complete (spinning or blocked).
    std::vector<double> wait_s;
    std::uint64_t sleeps = 0;     ///< waits that outlasted the spin and blocked
    std::uint64_t benched = 0;    ///< workers that stepped aside during the call (or were aside)
    std::uint64_t by_caller = 0;  ///< shares the calling thread ran
    /// The calling thread ran every share: one worker, every worker but one aside, or the last
    /// window's hand-offs did not pay (see the file comment).
    bool solo = false;
};

/// P = runtime.threads() workers; borrows the runtime (which must outlive the team). Calls come
/// from one thread at a time, the runtime's coordinator, never from inside a worker; a team owns
/// the runtime's workers while a call runs (no other run_workers call may run meanwhile).
class Team {
  public:
    /// How long a waiter spins before it blocks.
    static constexpr std::chrono::microseconds kSpinFor{100};
    /// How long a worker that found its core taken stays aside (see the file comment); twice as
    /// long each time it steps aside again within a second of coming back, up to kBenchMax.
    static constexpr std::chrono::milliseconds kBenchFor{100};
    static constexpr std::chrono::milliseconds kBenchMax{3200};
    /// Hand-off calls whose wall time a measured window adds up; the least speedup a window must
    /// show for the team to keep handing off; the time alone after a window that did not, twice
    /// as long after each further one in a row, up to kSoloMax (see the file comment).
    static constexpr std::chrono::milliseconds kWindow{20};
    static constexpr double kMinSpeedup = 1.1;
    static constexpr std::chrono::milliseconds kSoloFor{100};
    static constexpr std::chrono::milliseconds kSoloMax{3200};
    /// ...but alone for at least this many of the unpaid window's calls (their mean wall time):
    /// a probe then costs at most about 1/kSoloCalls of the calls alone after it.
    static constexpr int kSoloCalls = 16;

    /// The work of one share of one step. Called concurrently for the shares of one step; every
    /// call of step s returns, and its writes are visible, before any call of step s + 1 begins.
    /// May throw: no share starts after that, and the call rethrows it once all have returned.
    using StepBody = std::function<void(std::size_t step, int share)>;

    explicit Team(Runtime& runtime);
    Team(const Team&) = delete;
    Team& operator=(const Team&) = delete;

    /// Shares per step: the runtime's worker count.
    int size() const noexcept { return size_; }
    Runtime& runtime() noexcept { return runtime_; }

    /// Runs steps 0..steps-1 of body with ONE hand-off to the workers for the whole sequence
    /// (for steps of a few microseconds, e.g. CCD++'s); the calling thread waits (or runs every
    /// share itself while all workers but one stand aside). If shares threw, rethrows the
    /// exception of the lowest (step, share) that threw.
    TeamRun run_steps(std::size_t steps, const StepBody& body);
    /// One step: body(share) for every share; the calling thread takes shares too, so that a
    /// short step needs no worker to wake up first.
    TeamRun run(const std::function<void(int share)>& body);
    /// One step as run(body), but when the team would run the call alone (see the file comment:
    /// one worker, every worker but one aside, or hand-offs that did not pay), the calling thread
    /// runs alone() ONCE instead of body for every share: the step's work as one share, for
    /// models whose shares each cost a fixed amount (a share's sums, its column slices) on top
    /// of their part of the data. alone() must do what the shares together do (the models' exact
    /// sums give the same bits). The returned TeamRun has solo set and by_caller = size().
    TeamRun run(const std::function<void(int share)>& body, const std::function<void()>& alone);

    /// The calling thread runs the calls alone for `d` from now, as after a window that did not
    /// pay (0: hands off again from the next call, unless workers stand aside). For tests that
    /// need both paths of a model; the team's own measurements may send it alone again.
    void stay_alone_for(std::chrono::steady_clock::duration d) noexcept;

    /// Totals over every call so far (the sums of the TeamRun fields but wait_s).
    std::uint64_t sleeps() const noexcept { return sleeps_; }
    std::uint64_t benched() const noexcept { return benched_; }
    /// Calls the calling thread ran alone, and measured windows whose hand-offs did not pay.
    std::uint64_t solo_calls() const noexcept { return solo_calls_; }
    std::uint64_t unpaid_windows() const noexcept { return unpaid_windows_; }

  private:
    /// Whether a call starting at `now` runs on the calling thread alone.
    bool alone_at(std::chrono::steady_clock::time_point now) const noexcept;
    TeamRun call(std::size_t steps, const StepBody& body, bool caller_takes_shares);
    /// Adds a hand-off call's wall seconds to the window; judges the window once it is full.
    void measured(double wall_s, std::chrono::steady_clock::time_point now);

    Runtime& runtime_;
    int size_;
    std::uint64_t id_;  ///< process-unique: which team a worker's stepping aside belongs to
    std::uint64_t sleeps_ = 0;
    std::uint64_t benched_ = 0;
    std::uint64_t solo_calls_ = 0;
    std::uint64_t unpaid_windows_ = 0;
    double window_s_ = 0;   ///< wall seconds of the hand-off calls in the current window
    int window_calls_ = 0;  ///< and their number
    std::chrono::steady_clock::duration solo_for_{0};  ///< the last time alone, 0: the last paid
    std::chrono::steady_clock::time_point solo_until_{};
    std::shared_ptr<detail::TeamAside> aside_;  ///< shared with the calls' tasks
};

}  // namespace rotor::sched
