#include "sched/team.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "core/base/error.h"

namespace rotor::sched {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<std::uint64_t> next_team_id{1};

inline void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

double seconds_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

/// CPU seconds of the calling thread.
double thread_cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// What the calling thread knows about its own share of its core, across calls: the wall and
/// CPU seconds it spent inside team tasks (not blocked) since the window began, and whether it
/// stands aside for a team.
struct ThreadState {
    double wall_s = 0;  ///< inside tasks, not blocked, in the current window
    double cpu_s = 0;   ///< CPU seconds inside tasks in the current window
    std::uint64_t bench_team = 0;
    Clock::time_point bench_until{};
};

thread_local ThreadState tls_state;

/// A window shorter than this says nothing about the core (a time slice is a few ms).
constexpr double kWindowS = 2e-3;
/// A worker that ran less than this share of the time it wanted to run is being descheduled.
constexpr double kMinRunShare = 0.5;

/// A 32-bit word that threads wait on until it satisfies a condition; set by publish(). Waiters
/// follow the team's policy: spin (pause) for at most Team::kSpinFor, then block (futex on
/// Linux, atomic::wait elsewhere). publish() makes a system call only when someone is blocked.
class WaitWord {
  public:
    std::uint32_t load() const noexcept { return word_.load(std::memory_order_acquire); }

    /// Stores v (release) and wakes every blocked waiter.
    void publish(std::uint32_t v) noexcept {
        word_.store(v, std::memory_order_seq_cst);
        // seq_cst store then load, against the waiter's seq_cst increment then load: either this
        // sees the waiter, or the waiter sees v and does not block.
        if (blocked_.load(std::memory_order_seq_cst) > 0) wake_all();
    }
    bool someone_blocked() const noexcept { return blocked_.load(std::memory_order_seq_cst) > 0; }

    /// Waits until ready(word) is true. Adds the seconds spent blocked to `blocked_s`; returns
    /// whether it blocked. Acquires the publish that made ready() true.
    template <class Ready>
    bool wait(const Ready& ready, double& blocked_s) noexcept {
        if (ready(load())) return false;
        const Clock::time_point start = Clock::now();
        const Clock::time_point until = start + Team::kSpinFor;
        for (std::uint32_t spin = 1; !ready(load()); ++spin) {
            if (spin % 64 != 0 || Clock::now() < until) {
                pause();
                continue;
            }
            const Clock::time_point block_start = Clock::now();
            blocked_.fetch_add(1, std::memory_order_seq_cst);
            for (std::uint32_t v = word_.load(std::memory_order_seq_cst); !ready(v);
                 v = word_.load(std::memory_order_seq_cst)) {
                block(v);
            }
            blocked_.fetch_sub(1, std::memory_order_relaxed);
            (void)load();  // acquire what the publisher wrote before the word
            blocked_s += seconds_between(block_start, Clock::now());
            return true;
        }
        return false;
    }

  private:
    void block(std::uint32_t seen) noexcept {
#if defined(__linux__)
        static_assert(sizeof(word_) == sizeof(std::uint32_t));
        // Returns at once when the word no longer holds `seen`; spurious returns re-check.
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAIT_PRIVATE, seen,
                nullptr, nullptr, 0);
#else
        word_.wait(seen, std::memory_order_seq_cst);
#endif
    }
    void wake_all() noexcept {
#if defined(__linux__)
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAKE_PRIVATE, INT_MAX,
                nullptr, nullptr, 0);
#else
        word_.notify_all();
#endif
    }

    std::atomic<std::uint32_t> word_{0};
    std::atomic<int> blocked_{0};
};

constexpr std::uint32_t kFailed = 0xFFFFFFFFu;

/// One call's shared state. Tickets 0..total-1 are handed out in order: ticket t is share
/// t % shares of step t / shares. Owned jointly by the caller and the tasks (a task that a busy
/// core delays may start after the call has returned; it then finds no ticket left).
struct CallState {
    CallState(const Team::StepBody& b, std::size_t steps_, int shares_, std::uint64_t team_,
              bool caller_takes)
        : body(b),
          steps(steps_),
          shares(static_cast<std::uint64_t>(shares_)),
          total(steps_ * static_cast<std::uint64_t>(shares_)),
          team(team_),
          active(caller_takes ? 1 : 0),
          wait_s(static_cast<std::size_t>(shares_), 0.0) {}

    const Team::StepBody& body;  ///< used only while a ticket < total is held
    const std::uint64_t steps;
    const std::uint64_t shares;
    const std::uint64_t total;
    const std::uint64_t team;
    std::atomic<std::uint64_t> next{0};     ///< the next ticket
    std::atomic<std::uint64_t> retired{0};  ///< tickets run (or skipped after a failure)
    WaitWord completed;                     ///< steps completed; kFailed after a failure
    WaitWord finished;                      ///< 1 once every ticket is retired
    std::atomic<bool> failed{false};
    /// Takers that may still take shares: the caller (run()) and the tasks that started and
    /// did not step aside. A task steps aside only while another taker remains.
    std::atomic<int> active;
    std::atomic<std::uint64_t> sleeps{0};
    std::atomic<std::uint64_t> benched{0};
    std::atomic<std::uint64_t> by_caller{0};
    std::vector<double> wait_s;  ///< per task, written by that task before it retires a ticket

    std::mutex error_mutex;
    std::exception_ptr error;
    std::uint64_t error_ticket = ~std::uint64_t{0};
    std::shared_ptr<detail::TeamAside> shared;  ///< the team's record of workers aside

    void fail(std::uint64_t ticket, std::exception_ptr e) {
        {
            std::lock_guard lock(error_mutex);
            if (ticket < error_ticket) {
                error_ticket = ticket;
                error = std::move(e);
            }
        }
        failed.store(true, std::memory_order_seq_cst);
        completed.publish(kFailed);
    }

    /// Marks ticket t done; the last of a step publishes the step, the last of all `finished`.
    /// Returns whether a waiter had blocked on the step this ticket completed.
    bool retire() {
        const std::uint64_t d = retired.fetch_add(1, std::memory_order_acq_rel) + 1;
        bool late = false;
        if (d % shares == 0 && !failed.load(std::memory_order_acquire)) {
            late = completed.someone_blocked();
            completed.publish(static_cast<std::uint32_t>(d / shares));
        }
        if (d == total) finished.publish(1);
        return late;
    }

    /// Tries to leave the takers: only while another one remains.
    bool leave() {
        int n = active.load(std::memory_order_relaxed);
        while (n > 1) {
            if (active.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel)) return true;
        }
        return false;
    }
};

bool aside_for(std::uint64_t team) {
    return tls_state.bench_team == team && Clock::now() < tls_state.bench_until;
}

/// Takes and runs shares until none is left or the call failed; a worker task (task >= 0) also
/// stops when it steps aside (stepping aside is decided after a late share, below).
/// `measure`: add the CPU time this thread spends on shares (less its spinning) to the team's
/// work_ns (always for a worker task), before it retires its last share: once the call's last
/// share is retired every share's time is counted.
void take_shares(CallState& c, int task, bool measure) {
    const bool worker = task >= 0;
    measure = measure || worker;
    const Clock::time_point start = Clock::now();
    const double cpu0 = measure ? thread_cpu_s() : 0.0;
    double blocked_s = 0;
    double waited_s = 0;
    double spun_s = 0;  // spinning, at most Team::kSpinFor a wait (more: off the CPU)
    double cpu_s = -1;  // this call's CPU seconds, once reported
    bool left = false;
    const auto take = [&]() -> std::uint64_t {
        if (worker && aside_for(c.team) && c.leave()) {
            left = true;
            c.benched.fetch_add(1, std::memory_order_relaxed);
            return c.total;
        }
        return c.next.fetch_add(1, std::memory_order_relaxed);
    };
    const auto report = [&] {
        if (!measure || cpu_s >= 0) return;
        cpu_s = thread_cpu_s() - cpu0;
        // Spinning is CPU time too, but no work (blocked time is not CPU time). A wait's
        // spinning counts at most kSpinFor: a longer one was off the CPU part of the time.
        const double work_s = cpu_s - spun_s;
        if (work_s > 0)
            c.shared->work_ns.fetch_add(static_cast<std::int64_t>(1e9 * work_s),
                                        std::memory_order_relaxed);
    };
    for (std::uint64_t t = take(); t < c.total;) {
        const std::uint64_t step = t / c.shares;
        if (!c.failed.load(std::memory_order_acquire)) {
            const Clock::time_point wait_start = Clock::now();
            const double blocked_before = blocked_s;
            if (c.completed.wait(
                    [&](std::uint32_t v) {
                        return v >= step || c.failed.load(std::memory_order_acquire);
                    },
                    blocked_s)) {
                c.sleeps.fetch_add(1, std::memory_order_relaxed);
            }
            const double waited = seconds_between(wait_start, Clock::now());
            waited_s += waited;
            spun_s += std::min(waited - (blocked_s - blocked_before),
                               std::chrono::duration<double>(Team::kSpinFor).count());
        }
        if (worker) c.wait_s[static_cast<std::size_t>(task)] = waited_s;
        if (!c.failed.load(std::memory_order_acquire)) {
            try {
                c.body(step, static_cast<int>(t % c.shares));
            } catch (...) {
                c.fail(t, std::current_exception());
            }
        }
        if (!worker) c.by_caller.fetch_add(1, std::memory_order_relaxed);
        // The next ticket before retiring this one: when there is none, this share may be the
        // call's last, and the work is reported first.
        const std::uint64_t next = take();
        if (next >= c.total) report();
        const bool late = c.retire();
        // Late: a teammate blocked waiting for this share. Was this thread held off its core?
        if (worker && late && c.shares > 1) {
            ThreadState& s = tls_state;
            const double wall = seconds_between(start, Clock::now()) - blocked_s + s.wall_s;
            const double cpu = thread_cpu_s() - cpu0 + s.cpu_s;
            if (wall >= kWindowS && cpu < kMinRunShare * wall) {
                s.bench_team = c.team;
                s.bench_until = c.shared->aside(Clock::now());
            }
        }
        t = next;
    }
    report();
    if (!worker) return;
    if (!left) c.active.fetch_sub(1, std::memory_order_acq_rel);
    // Carry this task's running time into the thread's window (restarted once long enough).
    ThreadState& s = tls_state;
    if (s.wall_s >= 4 * kWindowS) {
        s.wall_s = 0;
        s.cpu_s = 0;
    }
    s.wall_s += seconds_between(start, Clock::now()) - blocked_s;
    s.cpu_s += cpu_s;
}

}  // namespace

namespace detail {

TeamAside::TeamAside(int slots) : slots_(static_cast<std::size_t>(slots)) {}

std::chrono::steady_clock::time_point TeamAside::aside(
    std::chrono::steady_clock::time_point now) noexcept {
    const std::uint64_t me = std::hash<std::thread::id>{}(std::this_thread::get_id()) | 1;
    const std::int64_t now_ns = now.time_since_epoch().count();
    // The team's last stepping aside: doubled when this one comes within a second of its end.
    std::int64_t length = Clock::duration(Team::kBenchFor).count();
    {
        std::lock_guard lock(mutex_);
        if (last_length_ > 0 &&
            now_ns < last_until_ + Clock::duration(std::chrono::seconds(1)).count())
            length = std::min(2 * last_length_, Clock::duration(Team::kBenchMax).count());
        last_length_ = length;
        last_until_ = std::max(last_until_, now_ns + length);
    }
    const std::int64_t until_ns = now_ns + length;
    const auto until = Clock::time_point(Clock::duration(until_ns));
    for (Slot& s : slots_) {
        if (s.thread.load(std::memory_order_acquire) == me) {
            s.until.store(until_ns, std::memory_order_release);
            return until;
        }
    }
    for (Slot& s : slots_) {  // a free or expired slot
        std::uint64_t held = s.thread.load(std::memory_order_acquire);
        if ((held == 0 || s.until.load(std::memory_order_acquire) < now_ns) &&
            s.thread.compare_exchange_strong(held, me, std::memory_order_acq_rel)) {
            s.until.store(until_ns, std::memory_order_release);
            return until;
        }
    }
    return until;
}

int TeamAside::count(std::chrono::steady_clock::time_point now) const noexcept {
    const std::int64_t now_ns = now.time_since_epoch().count();
    int n = 0;
    for (const Slot& s : slots_) n += s.until.load(std::memory_order_acquire) > now_ns ? 1 : 0;
    return n;
}

}  // namespace detail

Team::Team(Runtime& runtime)
    : runtime_(runtime),
      size_(runtime.threads()),
      id_(next_team_id.fetch_add(1)),
      aside_(std::make_shared<detail::TeamAside>(size_)) {}

TeamRun Team::run_steps(std::size_t steps, const StepBody& body) {
    return call(steps, body, false);
}

TeamRun Team::run(const std::function<void(int)>& body) {
    const StepBody step_body = [&body](std::size_t, int share) { body(share); };
    return call(1, step_body, true);
}

TeamRun Team::run(const std::function<void(int)>& body, const std::function<void()>& alone) {
    if (!alone_at(Clock::now())) return run(body);
    alone();
    ++solo_calls_;
    TeamRun out;
    out.wait_s.assign(static_cast<std::size_t>(size_), 0.0);
    out.by_caller = static_cast<std::uint64_t>(size_);
    out.solo = true;
    return out;
}

void Team::stay_alone_for(Clock::duration d) noexcept { solo_until_ = Clock::now() + d; }

bool Team::alone_at(Clock::time_point now) const noexcept {
    return size_ == 1 || now < solo_until_ || aside_->count(now) + 1 >= size_;
}

TeamRun Team::call(std::size_t steps, const StepBody& body, bool caller_takes_shares) {
    ROTOR_ASSERT(steps < kFailed, "Team: too many steps in one call");
    TeamRun out;
    out.wait_s.assign(static_cast<std::size_t>(size_), 0.0);
    if (steps == 0) return out;
    // Alone: one worker; or every worker but one is aside, so the caller runs the shares
    // itself, with no hand-off, until one comes back; or the last windows' hand-offs did not pay.
    const Clock::time_point start = Clock::now();
    const bool solo = alone_at(start);
    auto state = std::make_shared<CallState>(body, steps, size_, id_, caller_takes_shares || solo);
    state->shared = aside_;
    if (!solo) {
        runtime_.launch_workers([state](int task) {
            state->active.fetch_add(1, std::memory_order_acq_rel);
            take_shares(*state, task, true);
        });
    }
    CallState& c = *state;
    double blocked_s = 0;
    if (solo) {
        take_shares(c, -1, false);
        out.solo = true;
        ++solo_calls_;
    } else if (caller_takes_shares) {
        take_shares(c, -1, true);
        // The last step's completion, waited for on `completed` so that the worker finishing it
        // sees a blocked teammate (and may step aside) as in run_steps.
        if (c.completed.wait(
                [&](std::uint32_t v) {
                    return v >= steps || c.failed.load(std::memory_order_acquire);
                },
                blocked_s)) {
            c.sleeps.fetch_add(1, std::memory_order_relaxed);
        }
    }
    (void)c.finished.wait([](std::uint32_t v) { return v == 1; }, blocked_s);
    // Every ticket is retired: no task touches `body` or the wait times any more.
    out.wait_s = c.wait_s;
    out.sleeps = c.sleeps.load(std::memory_order_relaxed);
    out.benched = c.benched.load(std::memory_order_relaxed);
    out.by_caller = c.by_caller.load(std::memory_order_relaxed);
    sleeps_ += out.sleeps;
    benched_ += out.benched;
    if (!solo) {
        const Clock::time_point end = Clock::now();
        measured(seconds_between(start, end), end);
    }
    if (c.failed.load(std::memory_order_acquire)) {
        // Taken out of the shared state: a worker task may drop the last reference to `state`
        // after this thread has caught the exception, and must not be the one that destroys it
        // (exception_ptr counts references inside libstdc++, out of ThreadSanitizer's sight).
        std::exception_ptr error;
        {
            std::lock_guard lock(c.error_mutex);
            error = std::exchange(c.error, nullptr);
        }
        std::rethrow_exception(error);
    }
    return out;
}

void Team::measured(double wall_s, Clock::time_point now) {
    window_s_ += wall_s;
    ++window_calls_;
    if (window_s_ < std::chrono::duration<double>(kWindow).count()) return;
    const double work_s = 1e-9 * static_cast<double>(aside_->work_ns.exchange(0));
    const double speedup = work_s / window_s_;
    const auto calls_alone = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(kSoloCalls * window_s_ / window_calls_));
    window_s_ = 0;
    window_calls_ = 0;
    if (speedup >= kMinSpeedup) {
        solo_for_ = Clock::duration::zero();
        return;
    }
    ++unpaid_windows_;
    solo_for_ = solo_for_ == Clock::duration::zero()
                    ? Clock::duration(kSoloFor)
                    : std::min(2 * solo_for_, Clock::duration(kSoloMax));
    solo_for_ = std::max(solo_for_, calls_alone);
    solo_until_ = now + solo_for_;
}

}  // namespace rotor::sched
