#include "sched/block_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/base/timer.h"

namespace rotor::sched {
namespace {

using namespace std::chrono_literals;

/// Per-row and per-column occupancy counters, checked by a kernel while it holds a block: a
/// count above one means two concurrent blocks share a row or a column. Also a plain
/// (non-atomic) sum per row and per column, written like a model's row and column state (an LDA
/// doc-topic row, an MF row of W / column slice of H): ThreadSanitizer reports a race if the
/// loop ever lets two blocks touch the same one without ordering them.
class ConflictProbe {
  public:
    explicit ConflictProbe(int side)
        : rows_(std::make_unique<std::atomic<int>[]>(side)),
          cols_(std::make_unique<std::atomic<int>[]>(side)),
          row_sum_(side, 0),
          col_sum_(side, 0) {}

    /// Enters the block, holds it for `hold`, leaves it.
    void visit(Block b, std::chrono::microseconds hold = 0us) {
        if (rows_[b.row].fetch_add(1) != 0) violations_.fetch_add(1);
        if (cols_[b.col].fetch_add(1) != 0) violations_.fetch_add(1);
        ++row_sum_[b.row];
        ++col_sum_[b.col];
        if (hold.count() > 0) std::this_thread::sleep_for(hold);
        rows_[b.row].fetch_sub(1);
        cols_[b.col].fetch_sub(1);
    }
    int violations() const { return violations_.load(); }
    const std::vector<int>& row_sum() const { return row_sum_; }
    const std::vector<int>& col_sum() const { return col_sum_; }

  private:
    std::unique_ptr<std::atomic<int>[]> rows_;
    std::unique_ptr<std::atomic<int>[]> cols_;
    std::vector<int> row_sum_;
    std::vector<int> col_sum_;
    std::atomic<int> violations_{0};
};

/// Runs per (sweep, block), for "exactly once per sweep".
class RunCounter {
  public:
    RunCounter(int sweeps, int side)
        : side_(side), counts_(std::make_unique<std::atomic<int>[]>(sweeps * side * side)) {}
    void add(int sweep, Block b) { counts_[index(sweep, b)].fetch_add(1); }
    int count(int sweep, Block b) const { return counts_[index(sweep, b)].load(); }
    /// Blocks of `sweep` that ran at least once.
    int ran(int sweep) const {
        int n = 0;
        for (int r = 0; r < side_; ++r)
            for (int c = 0; c < side_; ++c) n += count(sweep, {r, c}) > 0;
        return n;
    }

  private:
    int index(int sweep, Block b) const { return (sweep * side_ + b.row) * side_ + b.col; }
    int side_;
    std::unique_ptr<std::atomic<int>[]> counts_;
};

bool overlaps(const ScheduleEvent& a, const ScheduleEvent& b) {
    return a.start_s < b.end_s && b.start_s < a.end_s;
}

TEST(DynamicLoop, RunsEveryBlockOncePerSweepWithoutConflictsAndClosesSweepsInOrder) {
    constexpr int kWorkers = 3;
    constexpr int kSide = 4;
    constexpr int kSweeps = 3;
    Runtime rt(kWorkers, PinMode::kNone);
    BlockScheduler scheduler(kSide);
    ConflictProbe probe(kSide);
    RunCounter runs(kSweeps, kSide);
    scheduler.reset_sweeps(kSweeps);

    std::vector<int> closed;
    std::atomic<int> in_callback{0};
    int incomplete_at_close = 0;
    int bad_times = 0;
    const auto kernel = [&](int w, const Job& job, const std::atomic<bool>&) {
        EXPECT_GE(w, 0);
        EXPECT_LT(w, kWorkers);
        probe.visit(job.block, 200us);
        runs.add(job.sweep, job.block);
        return BlockResult{2, true};
    };
    const auto on_sweep = [&](int sweep, const IterationTimes& t) {
        if (in_callback.fetch_add(1) != 0) ADD_FAILURE() << "on_sweep calls overlap";
        closed.push_back(sweep);
        if (runs.ran(sweep) != kSide * kSide) ++incomplete_at_close;
        const bool sane = t.wall_s > 0 && t.compute_s.size() == kWorkers &&
                          t.wait_s.size() == kWorkers && t.effective_ratio >= 0 &&
                          t.effective_ratio <= 1 && t.overhead_ratio >= 0 && t.overhead_ratio <= 1;
        if (!sane) ++bad_times;
        in_callback.fetch_sub(1);
    };
    DynamicLoopOptions options;
    options.pick_seed = {11, 22};
    const LoopResult result = run_dynamic_loop(rt, scheduler, options, kernel, on_sweep);

    EXPECT_EQ(probe.violations(), 0);
    for (int s = 0; s < kSweeps; ++s)
        for (int r = 0; r < kSide; ++r)
            for (int c = 0; c < kSide; ++c) EXPECT_EQ(runs.count(s, {r, c}), 1) << s << r << c;
    for (int i = 0; i < kSide; ++i) {
        EXPECT_EQ(probe.row_sum()[i], kSweeps * kSide);
        EXPECT_EQ(probe.col_sum()[i], kSweeps * kSide);
    }
    EXPECT_EQ(closed, (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(incomplete_at_close, 0);
    EXPECT_EQ(bad_times, 0);
    EXPECT_EQ(result.sweeps_completed, kSweeps);
    EXPECT_FALSE(result.stopped);
    ASSERT_EQ(result.units.size(), static_cast<std::size_t>(kWorkers));
    EXPECT_EQ(std::accumulate(result.units.begin(), result.units.end(), std::uint64_t{0}),
              std::uint64_t{2} * kSweeps * kSide * kSide);
    EXPECT_TRUE(result.events.empty());  // recording off
    EXPECT_GT(result.times.wall_s, 0);
    double compute = 0;
    for (double c : result.times.compute_s) compute += c;
    EXPECT_GE(compute, kSweeps * kSide * kSide * 200e-6);
    EXPECT_EQ(scheduler.remaining(), 0);
}

TEST(DynamicLoop, RecordsEveryRunRelativeToTheOriginWithoutOverlaps) {
    constexpr int kWorkers = 2;
    constexpr int kSide = 3;
    constexpr int kSweeps = 2;
    Runtime rt(kWorkers, PinMode::kNone);
    BlockScheduler scheduler(kSide);
    const Stopwatch origin;
    std::this_thread::sleep_for(20ms);
    scheduler.reset_sweeps(kSweeps);
    DynamicLoopOptions options;
    options.record = true;
    options.origin = &origin;
    const auto kernel = [&](int, const Job&, const std::atomic<bool>&) {
        std::this_thread::sleep_for(100us);
        return BlockResult{1, true};
    };
    const LoopResult result = run_dynamic_loop(rt, scheduler, options, kernel);

    ASSERT_EQ(result.events.size(), static_cast<std::size_t>(kSweeps * kSide * kSide));
    std::vector<int> per_sweep(kSweeps, 0);
    for (std::size_t i = 0; i < result.events.size(); ++i) {
        const ScheduleEvent& e = result.events[i];
        EXPECT_GE(e.start_s, 0.02);
        EXPECT_LE(e.start_s, e.end_s);
        EXPECT_GE(e.worker, 0);
        EXPECT_LT(e.worker, kWorkers);
        EXPECT_TRUE(e.completed);
        ASSERT_GE(e.sweep, 0);
        ASSERT_LT(e.sweep, kSweeps);
        ++per_sweep[e.sweep];
        if (i > 0) {
            EXPECT_LE(result.events[i - 1].start_s, e.start_s);
        }
        for (std::size_t j = 0; j < i; ++j) {
            const ScheduleEvent& o = result.events[j];
            if (o.block.row == e.block.row || o.block.col == e.block.col) {
                EXPECT_FALSE(overlaps(o, e)) << "conflicting runs overlap";
            }
        }
    }
    for (int n : per_sweep) EXPECT_EQ(n, kSide * kSide);
}

TEST(DynamicLoop, WorkerPickStreamsAreTheCallersWordsThenTheWorker) {
    // One worker: the loop must take blocks in exactly the order a plain acquire loop with
    // Rng::from({words..., 0}) takes them (the trainers' streams stay as they were).
    constexpr int kSide = 5;
    Runtime rt(1, PinMode::kNone);
    BlockScheduler scheduler(kSide);
    scheduler.reset_sweeps(2);
    DynamicLoopOptions options;
    options.pick_seed = {3, 0x5049434b, 7};
    options.record = true;
    const auto kernel = [](int, const Job&, const std::atomic<bool>&) { return BlockResult{}; };
    const LoopResult result = run_dynamic_loop(rt, scheduler, options, kernel);

    BlockScheduler reference(kSide);
    reference.reset_sweeps(2);
    Rng pick = Rng::from({3, 0x5049434b, 7, 0});
    std::vector<Job> expected;
    while (const auto job = reference.acquire_job(pick, 0)) {
        expected.push_back(*job);
        reference.release(job->block, true);
    }
    ASSERT_EQ(result.events.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(result.events[i].block, expected[i].block) << i;
        EXPECT_EQ(result.events[i].sweep, expected[i].sweep) << i;
    }
}

TEST(DynamicLoop, TimerStopsEndlessKernelsAndLeavesTheirBlocksNotDone) {
    constexpr int kSide = 3;
    Runtime rt(2, PinMode::kNone);
    BlockScheduler scheduler(kSide);
    scheduler.reset();
    DynamicLoopOptions options;
    options.budget_s = 0.5;  // a worker starts well within it, even on a loaded machine
    options.record = true;
    std::atomic<int> started{0};
    // "Forever" is bounded by 20 s so that a broken timer fails the test instead of hanging it.
    const auto kernel = [&](int, const Job&, const std::atomic<bool>& stop) {
        started.fetch_add(1);
        const Stopwatch watch;
        while (!stop.load() && watch.seconds() < 20) std::this_thread::sleep_for(100us);
        return BlockResult{1, !stop.load()};
    };
    const Stopwatch watch;
    const LoopResult result = run_dynamic_loop(rt, scheduler, options, kernel);
    EXPECT_LT(watch.seconds(), 10.0);
    EXPECT_TRUE(result.stopped);
    EXPECT_TRUE(scheduler.stopped());
    EXPECT_EQ(scheduler.remaining(), kSide * kSide);
    EXPECT_EQ(scheduler.busy(), 0);
    EXPECT_EQ(result.sweeps_completed, 0);
    EXPECT_GE(started.load(), 1);
    EXPECT_LE(started.load(), 2);
    EXPECT_EQ(static_cast<int>(result.events.size()), started.load());
    for (const ScheduleEvent& e : result.events) EXPECT_FALSE(e.completed);
}

TEST(DynamicLoop, StragglerFactorMultipliesComputeTime) {
    constexpr int kSide = 2;
    Runtime rt(1, PinMode::kNone);
    BlockScheduler scheduler(kSide);
    const auto compute_with = [&](double factor, double& kernel_s) {
        scheduler.reset();
        DynamicLoopOptions options;
        options.straggler_factor = factor;
        kernel_s = 0;
        const auto kernel = [&](int, const Job&, const std::atomic<bool>&) {
            const Stopwatch watch;
            std::this_thread::sleep_for(2ms);
            kernel_s += watch.seconds();
            return BlockResult{1, true};
        };
        const LoopResult result = run_dynamic_loop(rt, scheduler, options, kernel);
        EXPECT_EQ(scheduler.remaining(), 0);
        return result.times.compute_s.at(0);
    };
    double plain_kernel = 0;
    double slow_kernel = 0;
    const double plain = compute_with(1, plain_kernel);
    const double slow = compute_with(4, slow_kernel);
    EXPECT_GE(plain, plain_kernel);
    EXPECT_LT(plain, 4 * plain_kernel);  // no straggler sleep at factor 1
    // Each block sleeps 3x its kernel's time on top of it, counted as compute.
    EXPECT_GE(slow, 4 * slow_kernel);
    EXPECT_GT(slow, plain);
}

TEST(DynamicLoop, StragglerSleepEndsWhenTheTimerStops) {
    Runtime rt(1, PinMode::kNone);
    BlockScheduler scheduler(2);
    scheduler.reset();
    DynamicLoopOptions options;
    options.straggler_factor = 1e6;  // 10 ms of work would sleep for hours
    // Long enough for the worker to start and finish its first block on a loaded machine
    // (under ThreadSanitizer at load 12, 50 ms was not), far below the sleep it ends.
    options.budget_s = 0.5;
    const auto kernel = [](int, const Job&, const std::atomic<bool>&) {
        std::this_thread::sleep_for(10ms);
        return BlockResult{1, true};
    };
    const Stopwatch watch;
    const LoopResult result = run_dynamic_loop(rt, scheduler, options, kernel);
    EXPECT_LT(watch.seconds(), 10.0);
    EXPECT_TRUE(result.stopped);
    EXPECT_EQ(result.units.at(0), 1u);  // the first block completed, then stop
    EXPECT_EQ(scheduler.remaining(), 3);
}

TEST(DynamicLoop, PollRunsOnTheCallingThreadWhileWorkersRun) {
    constexpr int kSide = 4;
    Runtime rt(2, PinMode::kNone);
    BlockScheduler scheduler(kSide);
    scheduler.reset();
    std::atomic<int> active{0};
    int polls = 0;
    int polls_while_active = 0;
    int polls_elsewhere = 0;
    const auto caller = std::this_thread::get_id();
    DynamicLoopOptions options;
    options.poll_period = 200us;
    options.poll = [&] {
        ++polls;
        if (active.load() > 0) ++polls_while_active;
        if (std::this_thread::get_id() != caller) ++polls_elsewhere;
    };
    const auto kernel = [&](int, const Job&, const std::atomic<bool>&) {
        active.fetch_add(1);
        std::this_thread::sleep_for(2ms);
        active.fetch_sub(1);
        return BlockResult{1, true};
    };
    const LoopResult result = run_dynamic_loop(rt, scheduler, options, kernel);
    EXPECT_GE(polls, 2);
    EXPECT_GE(polls_while_active, 1);
    EXPECT_EQ(polls_elsewhere, 0);
    EXPECT_EQ(scheduler.remaining(), 0);
    EXPECT_EQ(result.units[0] + result.units[1], static_cast<std::uint64_t>(kSide * kSide));
}

/// Runs a loop whose kernel throws on block (1, 1), with or without polling.
void expect_kernel_exception(bool poll) {
    Runtime rt(2, PinMode::kNone);
    BlockScheduler scheduler(3);
    scheduler.reset_sweeps(2);
    DynamicLoopOptions options;
    if (poll) options.poll = [] {};
    const auto kernel = [](int, const Job& job, const std::atomic<bool>&) {
        std::this_thread::sleep_for(100us);
        if (job.block == Block{1, 1}) throw std::runtime_error("kernel failed");
        return BlockResult{1, true};
    };
    EXPECT_THROW(run_dynamic_loop(rt, scheduler, options, kernel), std::runtime_error);
    EXPECT_TRUE(scheduler.stopped());
    EXPECT_EQ(scheduler.busy(), 0);  // the failing block was given back
    EXPECT_GE(scheduler.remaining(), 1);
    scheduler.reset();  // usable again: no block busy
}

TEST(DynamicLoop, KernelExceptionStopsTheLoopAndPropagates) { expect_kernel_exception(false); }

TEST(DynamicLoop, KernelExceptionPropagatesWhilePolling) { expect_kernel_exception(true); }

TEST(DynamicLoop, SweepCallbackExceptionPropagates) {
    Runtime rt(2, PinMode::kNone);
    BlockScheduler scheduler(3);
    scheduler.reset_sweeps(3);
    // The last sweep's blocks run until the loop stops (20 s at most), so that work remains when
    // sweep 0's callback throws however fast the others are (instant kernels could finish all
    // three sweeps before the stop reached the workers).
    const auto kernel = [](int, const Job& job, const std::atomic<bool>& stop) {
        if (job.sweep < 2) return BlockResult{1, true};
        const Stopwatch watch;
        while (!stop.load() && watch.seconds() < 20) std::this_thread::sleep_for(100us);
        return BlockResult{1, !stop.load()};
    };
    const auto on_sweep = [](int sweep, const IterationTimes&) {
        if (sweep == 0) throw InputError("sweep", "cannot close");
    };
    EXPECT_THROW(run_dynamic_loop(rt, scheduler, {}, kernel, on_sweep), InputError);
    EXPECT_EQ(scheduler.busy(), 0);
    EXPECT_GT(scheduler.remaining(), 0);
}

TEST(DynamicLoop, PollExceptionStopsTheWorkersAndPropagates) {
    Runtime rt(2, PinMode::kNone);
    BlockScheduler scheduler(3);
    scheduler.reset();
    DynamicLoopOptions options;
    options.poll_period = 1ms;
    int polls = 0;
    options.poll = [&] {
        if (++polls == 3) throw std::runtime_error("poll failed");
    };
    const auto kernel = [](int, const Job&, const std::atomic<bool>& stop) {
        const Stopwatch watch;
        while (!stop.load() && watch.seconds() < 20) std::this_thread::sleep_for(100us);
        return BlockResult{0, !stop.load()};
    };
    const Stopwatch watch;
    EXPECT_THROW(run_dynamic_loop(rt, scheduler, options, kernel), std::runtime_error);
    EXPECT_LT(watch.seconds(), 10.0);
    EXPECT_EQ(polls, 3);
    EXPECT_EQ(scheduler.busy(), 0);
    EXPECT_EQ(scheduler.remaining(), 9);
}

TEST(DynamicLoop, RejectsBadOptions) {
    Runtime rt(1, PinMode::kNone);
    BlockScheduler scheduler(2);
    scheduler.reset();
    const auto kernel = [](int, const Job&, const std::atomic<bool>&) { return BlockResult{}; };
    DynamicLoopOptions options;
    options.budget_s = -1;
    EXPECT_THROW(run_dynamic_loop(rt, scheduler, options, kernel), ConfigError);
    options.budget_s = 0;
    options.straggler_factor = 0.5;
    EXPECT_THROW(run_dynamic_loop(rt, scheduler, options, kernel), ConfigError);
    EXPECT_EQ(scheduler.remaining(), 4);
}

TEST(RunWorkersPolling, RethrowsWorkerExceptionsAndPollExceptions) {
    Runtime rt(2, PinMode::kNone);
    int polls = 0;
    EXPECT_THROW(run_workers_polling(
                     rt,
                     [](int w) {
                         if (w == 1) throw std::runtime_error("worker");
                     },
                     [&] { ++polls; }, 100us),
                 std::runtime_error);
    EXPECT_GE(polls, 1);

    std::atomic<bool> release{false};
    bool stopped = false;
    const auto worker = [&](int) {
        const Stopwatch watch;
        while (!release.load() && watch.seconds() < 20) std::this_thread::sleep_for(100us);
    };
    const auto poll = [] { throw InputError("poll", "failed"); };
    const auto on_error = [&] {
        stopped = true;
        release.store(true);
    };
    const Stopwatch watch;
    EXPECT_THROW(run_workers_polling(rt, worker, poll, 100us, on_error), InputError);
    EXPECT_TRUE(stopped);
    EXPECT_LT(watch.seconds(), 10.0);
}

TEST(DiagonalLoop, RunsEveryBlockOncePerRoundWithoutConflicts) {
    constexpr int kWorkers = 3;
    constexpr int kSide = 5;
    Runtime rt(kWorkers, PinMode::kNone);
    const DiagonalSchedule schedule(kSide);
    ConflictProbe probe(kSide);
    RunCounter runs(kSide, kSide);  // "sweep" = round here
    std::vector<int> rounds_closed;
    int wrong_blocks = 0;
    int early_or_late = 0;
    const auto kernel = [&](int w, const DiagonalJob& job) {
        EXPECT_GE(w, 0);
        EXPECT_LT(w, kWorkers);
        if (!(job.block == schedule.block(job.round, job.index))) ++wrong_blocks;
        probe.visit(job.block, 200us);
        runs.add(job.round, job.block);
        return std::uint64_t{3};
    };
    const auto after_round = [&](int r) {
        rounds_closed.push_back(r);
        if (runs.ran(r) != kSide) ++early_or_late;                   // all of round r ran
        if (r + 1 < kSide && runs.ran(r + 1) != 0) ++early_or_late;  // none of round r + 1
    };
    const DiagonalResult result =
        run_diagonal_loop(rt, schedule, kernel, after_round, /*record=*/true);

    EXPECT_EQ(probe.violations(), 0);
    EXPECT_EQ(wrong_blocks, 0);
    EXPECT_EQ(early_or_late, 0);
    EXPECT_EQ(rounds_closed, (std::vector<int>{0, 1, 2, 3, 4}));
    for (int r = 0; r < kSide; ++r)
        for (int i = 0; i < kSide; ++i) EXPECT_EQ(runs.count(r, schedule.block(r, i)), 1);
    int total_runs = 0;
    for (int r = 0; r < kSide; ++r) total_runs += runs.ran(r);
    EXPECT_EQ(total_runs, kSide * kSide);  // every block exactly once over the L rounds
    for (int i = 0; i < kSide; ++i) {
        EXPECT_EQ(probe.row_sum()[i], kSide);
        EXPECT_EQ(probe.col_sum()[i], kSide);
    }
    EXPECT_EQ(std::accumulate(result.units.begin(), result.units.end(), std::uint64_t{0}),
              std::uint64_t{3} * kSide * kSide);
    EXPECT_EQ(result.events.size(), static_cast<std::size_t>(kSide * kSide));
    for (const ScheduleEvent& e : result.events) {
        EXPECT_LE(e.start_s, e.end_s);
        EXPECT_TRUE(e.completed);
    }
    ASSERT_EQ(result.times.compute_s.size(), static_cast<std::size_t>(kWorkers));
    double compute = 0;
    for (double c : result.times.compute_s) compute += c;
    EXPECT_GE(compute, kSide * kSide * 200e-6);
    EXPECT_GE(result.times.wall_s, compute / kWorkers);
}

TEST(DiagonalLoop, KernelExceptionPropagatesBeforeTheRoundCloses) {
    Runtime rt(2, PinMode::kNone);
    const DiagonalSchedule schedule(4);
    std::vector<int> rounds_closed;
    const auto kernel = [](int, const DiagonalJob& job) -> std::uint64_t {
        if (job.round == 2 && job.index == 1) throw std::runtime_error("kernel failed");
        return 1;
    };
    EXPECT_THROW(
        run_diagonal_loop(rt, schedule, kernel, [&](int r) { rounds_closed.push_back(r); }),
        std::runtime_error);
    EXPECT_EQ(rounds_closed, (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace rotor::sched
