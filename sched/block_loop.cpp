#include "sched/block_loop.h"

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "sched/timer_control.h"

namespace rotor::sched {
namespace {

/// Sleeps `seconds` in steps of at most a millisecond, returning early once `stop` is set.
void slow_down(double seconds, const std::atomic<bool>& stop) {
    Stopwatch watch;
    while (!stop.load(std::memory_order_relaxed)) {
        const double left = seconds - watch.seconds();
        if (left <= 0) break;
        std::this_thread::sleep_for(std::chrono::duration<double>(std::min(left, 1e-3)));
    }
}

/// Every worker's events in one list, by start time (ties: by worker).
std::vector<ScheduleEvent> merge_events(std::vector<std::vector<ScheduleEvent>>& per_worker) {
    std::vector<ScheduleEvent> all;
    for (auto& events : per_worker) all.insert(all.end(), events.begin(), events.end());
    std::stable_sort(all.begin(), all.end(), [](const ScheduleEvent& a, const ScheduleEvent& b) {
        return a.start_s < b.start_s;
    });
    return all;
}

/// One run of run_dynamic_loop: the state the workers share.
class DynamicLoop {
  public:
    DynamicLoop(Runtime& runtime, BlockScheduler& scheduler, const DynamicLoopOptions& options,
                const BlockKernel& kernel, const SweepCallback& on_sweep)
        : runtime_(runtime),
          scheduler_(scheduler),
          options_(options),
          kernel_(kernel),
          on_sweep_(on_sweep),
          clocks_(runtime.threads()),
          units_(static_cast<std::size_t>(runtime.threads()), 0),
          events_(static_cast<std::size_t>(runtime.threads())) {}

    LoopResult run();

  private:
    void work(int w);
    /// Marks sweep s complete and reports every complete sweep not yet reported, in order.
    void close_sweeps(int s);
    /// Makes every worker finish soon: the flag ends kernels that poll it, stop() ends the
    /// hand-out of blocks.
    void stop_all() noexcept {
        stop_.store(true, std::memory_order_release);
        scheduler_.stop();
    }
    double now_s() const { return options_.origin ? options_.origin->seconds() : since_.seconds(); }

    Runtime& runtime_;
    BlockScheduler& scheduler_;
    const DynamicLoopOptions& options_;
    const BlockKernel& kernel_;
    const SweepCallback& on_sweep_;
    const Stopwatch since_;
    LiveClocks clocks_;
    std::atomic<bool> stop_{false};
    std::vector<std::uint64_t> units_;                ///< per worker, written by its worker
    std::vector<std::vector<ScheduleEvent>> events_;  ///< per worker, written by its worker

    std::mutex close_mutex_;  ///< guards the three below
    std::vector<std::uint8_t> complete_;
    std::size_t next_to_close_ = 0;
    LiveClocks::Snapshot previous_;
};

LoopResult DynamicLoop::run() {
    const LiveClocks::Snapshot start = clocks_.snapshot();
    previous_ = start;
    // The timer stops the round: the flag ends the block being run (if its kernel polls it),
    // stop() ends the hand-out of new blocks. Blocks left not done wait for a later round.
    std::optional<StopTimer> timer;
    if (options_.budget_s > 0) timer.emplace(options_.budget_s, [this] { stop_all(); });
    const auto worker = [this](int w) { work(w); };
    if (options_.poll) {
        run_workers_polling(runtime_, worker, options_.poll, options_.poll_period,
                            [this] { stop_all(); });
    } else {
        runtime_.run_workers(worker);
    }
    if (timer) timer->cancel();

    LoopResult result;
    result.units = units_;
    result.stopped = stop_.load(std::memory_order_acquire);
    result.sweeps_completed = static_cast<int>(next_to_close_);
    result.events = merge_events(events_);
    result.times = LiveClocks::between(start, clocks_.snapshot());
    return result;
}

void DynamicLoop::work(int w) {
    // Worker w's pick stream: the caller's words, then w, so streams match Rng::from({..., w}).
    std::vector<std::uint64_t> words = options_.pick_seed;
    words.push_back(static_cast<std::uint64_t>(w));
    Rng pick = Rng::from_words(words);
    const bool slow = options_.straggler_factor > 1;
    const double extra = options_.straggler_factor - 1;
    std::optional<Block> held;
    try {
        for (;;) {
            std::optional<Job> job;
            {
                LivePhase t(clocks_, w, Phase::kWait);
                job = scheduler_.acquire_job(pick, w);
            }
            if (!job) return;
            held = job->block;
            const double start = options_.record ? now_s() : 0.0;
            BlockResult r;
            {
                LivePhase t(clocks_, w, Phase::kCompute);
                Stopwatch block_watch;
                r = kernel_(w, *job, stop_);
                if (slow) slow_down(extra * block_watch.seconds(), stop_);
            }
            if (options_.record)
                events_[w].push_back({job->block, job->sweep, w, start, now_s(), r.completed});
            units_[w] += r.units;
            held.reset();
            const int completed = scheduler_.release(job->block, r.completed);
            if (completed > 0) close_sweeps(completed - 1);
        }
    } catch (...) {
        stop_all();
        if (held) scheduler_.release(*held, false);
        throw;
    }
}

void DynamicLoop::close_sweeps(int s) {
    std::lock_guard lock(close_mutex_);
    const auto sweep = static_cast<std::size_t>(s);
    if (complete_.size() <= sweep) complete_.resize(sweep + 1, 0);
    complete_[sweep] = 1;
    while (next_to_close_ < complete_.size() && complete_[next_to_close_]) {
        const std::size_t c = next_to_close_++;
        const LiveClocks::Snapshot now = clocks_.snapshot();
        const IterationTimes times = LiveClocks::between(previous_, now);
        previous_ = now;
        if (on_sweep_) on_sweep_(static_cast<int>(c), times);
    }
}

}  // namespace

void DynamicLoopOptions::validate() const {
    if (!(budget_s >= 0)) throw ConfigError("budget_s", "must be >= 0 seconds");
    if (!(straggler_factor >= 1)) throw ConfigError("straggler_factor", "must be >= 1");
}

LoopResult run_dynamic_loop(Runtime& runtime, BlockScheduler& scheduler,
                            const DynamicLoopOptions& options, const BlockKernel& kernel,
                            const SweepCallback& on_sweep) {
    options.validate();
    DynamicLoop loop(runtime, scheduler, options, kernel, on_sweep);
    return loop.run();
}

DiagonalResult run_diagonal_loop(Runtime& runtime, const DiagonalSchedule& schedule,
                                 const DiagonalKernel& kernel,
                                 const std::function<void(int round)>& after_round, bool record,
                                 const Stopwatch* origin) {
    const int workers = runtime.threads();
    const int side = schedule.side();
    const Stopwatch since;
    const auto now_s = [&] { return origin ? origin->seconds() : since.seconds(); };
    WorkerClocks clocks(workers);
    std::vector<std::uint64_t> units(static_cast<std::size_t>(workers), 0);
    std::vector<std::vector<ScheduleEvent>> events(static_cast<std::size_t>(workers));

    clocks.begin_iteration();
    for (int r = 0; r < schedule.rounds(); ++r) {
        std::atomic<int> next{0};
        runtime.run_workers([&](int w) {
            WorkerClock& clock = clocks.clock(w);
            try {
                for (int i = next.fetch_add(1); i < side; i = next.fetch_add(1)) {
                    PhaseTimer t(clock, Phase::kCompute);
                    const DiagonalJob job{schedule.block(r, i), r, i};
                    const double start = record ? now_s() : 0.0;
                    units[w] += kernel(w, job);
                    if (record) events[w].push_back({job.block, 0, w, start, now_s(), true});
                }
            } catch (...) {
                next.store(side);  // no new block of this round starts
                throw;
            }
        });
        if (after_round) after_round(r);
    }
    DiagonalResult result;
    result.times = clocks.end_iteration();
    result.units = std::move(units);
    result.events = merge_events(events);
    return result;
}

void run_workers_polling(Runtime& runtime, const std::function<void(int worker)>& worker,
                         const std::function<void()>& poll, std::chrono::microseconds period,
                         const std::function<void()>& on_poll_error) {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    std::exception_ptr error;  // written by the helper before `done`, read after the join
    std::thread helper([&] {
        try {
            runtime.run_workers(worker);
        } catch (...) {
            error = std::current_exception();
        }
        std::lock_guard lock(mutex);
        done = true;
        cv.notify_all();
    });
    try {
        // poll() runs at least once, even when the workers finish before this thread gets here.
        std::unique_lock lock(mutex);
        do {
            lock.unlock();
            poll();
            lock.lock();
            cv.wait_for(lock, period, [&] { return done; });
        } while (!done);
    } catch (...) {
        if (on_poll_error) on_poll_error();
        helper.join();
        throw;
    }
    helper.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace rotor::sched
