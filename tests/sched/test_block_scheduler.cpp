// The block scheduler on plain std::threads, so that ThreadSanitizer sees every synchronization.
#include "sched/block_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "core/base/error.h"
#include "sched/block_grid.h"
#include "sched/timer_control.h"

namespace rotor::sched {
namespace {

using namespace std::chrono_literals;

/// Busy work of about `us` microseconds that the optimizer cannot drop.
std::uint64_t spin_work(std::uint64_t us, std::uint64_t salt) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
    std::uint64_t x = salt;
    while (std::chrono::steady_clock::now() < until) {
        for (int i = 0; i < 64; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    }
    return x;
}

TEST(BlockScheduler, SingleWorkerGetsEveryBlockOnce) {
    BlockScheduler s(4);
    EXPECT_EQ(s.remaining(), 0);
    Rng rng(1);
    EXPECT_FALSE(s.acquire(rng).has_value());  // nothing active before reset()
    s.reset();
    EXPECT_EQ(s.remaining(), 16);
    std::set<std::pair<int, int>> seen;
    while (auto b = s.acquire(rng)) {
        EXPECT_EQ(s.busy(), 1);
        EXPECT_TRUE(seen.emplace(b->row, b->col).second);
        s.release(*b, true);
    }
    EXPECT_EQ(seen.size(), 16u);
    EXPECT_EQ(s.remaining(), 0);
    EXPECT_THROW(BlockScheduler(0), ConfigError);
}

TEST(BlockScheduler, FirstBlockIsUniform) {
    // Chi-square over the 9 blocks of a 3x3 grid, 9000 draws: 0.999 quantile with 8 dof is 26.1.
    BlockScheduler s(3);
    Rng rng(7);
    std::vector<int> hist(9, 0);
    for (int i = 0; i < 9000; ++i) {
        s.reset();
        const auto b = s.acquire(rng);
        ASSERT_TRUE(b.has_value());
        ++hist[static_cast<std::size_t>(b->row * 3 + b->col)];
        s.release(*b, false);
    }
    double chi2 = 0;
    for (int h : hist) chi2 += (h - 1000.0) * (h - 1000.0) / 1000.0;
    EXPECT_LT(chi2, 26.1);
}

TEST(BlockScheduler, ConflictingBlocksAreNotHandedOut) {
    BlockScheduler s(2);
    s.reset();
    Rng rng(3);
    const auto a = s.acquire(rng);
    const auto b = s.acquire(rng);
    ASSERT_TRUE(a && b);
    EXPECT_NE(a->row, b->row);
    EXPECT_NE(a->col, b->col);
    s.release(*a, true);
    s.release(*b, true);
    EXPECT_EQ(s.remaining(), 2);
}

TEST(BlockScheduler, UncompletedBlockComesBack) {
    BlockScheduler s(1);
    s.reset();
    Rng rng(3);
    auto b = s.acquire(rng);
    ASSERT_TRUE(b);
    s.release(*b, false);
    EXPECT_EQ(s.remaining(), 1);
    b = s.acquire(rng);
    ASSERT_TRUE(b);
    s.release(*b, true);
    EXPECT_FALSE(s.acquire(rng));
}

TEST(BlockScheduler, AcquireWaitsForARelease) {
    BlockScheduler s(1);
    s.reset();
    Rng rng(1);
    const auto held = s.acquire(rng);
    ASSERT_TRUE(held);
    std::atomic<bool> returned{false};
    std::optional<Block> got;
    std::thread waiter([&] {
        Rng r(2);
        got = s.acquire(r);
        returned = true;
    });
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(returned.load()) << "acquire returned while the only block was busy";
    s.release(*held, false);  // not done: the waiter must get it
    waiter.join();
    ASSERT_TRUE(got);
    s.release(*got, true);
    EXPECT_FALSE(s.acquire(rng));
}

TEST(BlockScheduler, WaiterSeesTheEndOfTheRound) {
    BlockScheduler s(1);
    s.reset();
    Rng rng(1);
    const auto held = s.acquire(rng);
    std::optional<Block> got{Block{5, 5}};
    std::thread waiter([&] {
        Rng r(2);
        got = s.acquire(r);
    });
    std::this_thread::sleep_for(10ms);
    s.release(*held, true);
    waiter.join();
    EXPECT_FALSE(got.has_value());
}

TEST(BlockScheduler, ResetColumnsSchedulesOnlyThoseColumns) {
    BlockScheduler s(4);
    const std::vector<int> cols{1, 3, 3};
    s.reset_columns(cols);
    EXPECT_EQ(s.remaining(), 8);
    Rng rng(5);
    std::set<std::pair<int, int>> seen;
    while (auto b = s.acquire(rng)) {
        EXPECT_TRUE(b->col == 1 || b->col == 3);
        seen.emplace(b->row, b->col);
        s.release(*b, true);
    }
    EXPECT_EQ(seen.size(), 8u);
    const std::vector<int> bad{4};
    EXPECT_THROW(s.reset_columns(bad), ConfigError);
    const std::vector<Block> blocks{{0, 0}, {2, 1}};
    s.reset_blocks(blocks);
    EXPECT_EQ(s.remaining(), 2);
    const std::vector<Block> outside{{0, -1}};
    EXPECT_THROW(s.reset_blocks(outside), ConfigError);
}

/// P threads, many iterations, small random work per block. Checks, independently of the
/// scheduler's own bookkeeping: (1) occupancy counters per row and column never exceed one,
/// (2) the recorded intervals of blocks sharing a row or column never overlap, (3) every block
/// runs exactly once per iteration. Plain (non-atomic) per-row and per-column counters are
/// written inside blocks, so ThreadSanitizer reports any missing synchronization.
void run_conflict_check(int threads, int iterations) {
    const int l = default_grid_side(threads);
    BlockScheduler s(l);
    std::vector<std::atomic<int>> row_occupancy(static_cast<std::size_t>(l));
    std::vector<std::atomic<int>> col_occupancy(static_cast<std::size_t>(l));
    std::vector<long> row_data(static_cast<std::size_t>(l), 0);
    std::vector<long> col_data(static_cast<std::size_t>(l), 0);
    std::atomic<int> violations{0};
    std::atomic<std::uint64_t> sink{0};
    for (int it = 0; it < iterations; ++it) {
        s.reset();
        s.set_recording(true);
        std::vector<std::thread> workers;
        for (int w = 0; w < threads; ++w) {
            workers.emplace_back([&, w] {
                Rng rng =
                    Rng::from({99, static_cast<std::uint64_t>(it), static_cast<std::uint64_t>(w)});
                while (auto b = s.acquire(rng, w)) {
                    const auto r = static_cast<std::size_t>(b->row);
                    const auto c = static_cast<std::size_t>(b->col);
                    if (row_occupancy[r].fetch_add(1) != 0) ++violations;
                    if (col_occupancy[c].fetch_add(1) != 0) ++violations;
                    ++row_data[r];
                    ++col_data[c];
                    sink += spin_work(rng.below(40), rng.next());
                    row_occupancy[r].fetch_sub(1);
                    col_occupancy[c].fetch_sub(1);
                    s.release(*b, true);
                }
            });
        }
        for (auto& t : workers) t.join();
        const std::vector<ScheduleEvent> events = s.take_record();
        // Every block exactly once.
        ASSERT_EQ(events.size(), static_cast<std::size_t>(l * l));
        std::vector<int> count(static_cast<std::size_t>(l * l), 0);
        for (const ScheduleEvent& e : events) {
            ++count[static_cast<std::size_t>(e.block.row * l + e.block.col)];
            EXPECT_TRUE(e.completed);
            EXPECT_GE(e.worker, 0);
            EXPECT_LE(e.start_s, e.end_s);
        }
        for (int c : count) ASSERT_EQ(c, 1);
        // No overlap between blocks sharing a row or a column.
        for (std::size_t i = 0; i < events.size(); ++i) {
            for (std::size_t j = i + 1; j < events.size(); ++j) {
                const ScheduleEvent& a = events[i];
                const ScheduleEvent& b = events[j];
                if (a.block.row != b.block.row && a.block.col != b.block.col) continue;
                const bool disjoint = a.end_s <= b.start_s || b.end_s <= a.start_s;
                ASSERT_TRUE(disjoint)
                    << "blocks (" << a.block.row << "," << a.block.col << ") and (" << b.block.row
                    << "," << b.block.col << ") overlap in iteration " << it;
            }
        }
    }
    EXPECT_EQ(violations.load(), 0);
    for (long d : row_data) EXPECT_EQ(d, static_cast<long>(l) * iterations);
    for (long d : col_data) EXPECT_EQ(d, static_cast<long>(l) * iterations);
}

TEST(BlockSchedulerThreads, NoConflictsP2) { run_conflict_check(2, 40); }
TEST(BlockSchedulerThreads, NoConflictsP3) { run_conflict_check(3, 30); }
TEST(BlockSchedulerThreads, NoConflictsP4) { run_conflict_check(4, 20); }
TEST(BlockSchedulerThreads, NoConflictsP8) { run_conflict_check(8, 10); }

/// Pipelined sweeps on P threads: every block runs exactly `sweeps` times, its sweeps in order;
/// conflicting runs never overlap; no block starts a sweep more than one ahead of the slowest;
/// release() reports each sweep's completion exactly once, after every block has completed it.
void run_pipelined_check(int threads, int side, int sweeps, int rounds) {
    BlockScheduler s(side);
    const auto n = static_cast<std::size_t>(side * side);
    for (int round = 0; round < rounds; ++round) {
        std::vector<std::atomic<int>> done(n);
        std::vector<std::atomic<int>> row_occupancy(static_cast<std::size_t>(side));
        std::vector<std::atomic<int>> col_occupancy(static_cast<std::size_t>(side));
        std::vector<std::atomic<int>> completions(static_cast<std::size_t>(sweeps) + 1);
        std::atomic<int> violations{0};
        std::atomic<std::uint64_t> sink{0};
        s.reset_sweeps(sweeps);
        s.set_recording(true);
        std::vector<std::thread> workers;
        for (int w = 0; w < threads; ++w) {
            workers.emplace_back([&, w] {
                Rng rng = Rng::from(
                    {7, static_cast<std::uint64_t>(round), static_cast<std::uint64_t>(w)});
                while (auto job = s.acquire_job(rng, w)) {
                    const auto id =
                        static_cast<std::size_t>(job->block.row * side + job->block.col);
                    // Our counters are bumped before release(), so they are at least the
                    // scheduler's: the slowest block has done >= sweep - 1.
                    int slowest = sweeps;
                    for (const auto& d : done) slowest = std::min(slowest, d.load());
                    if (slowest < job->sweep - 1) ++violations;
                    if (done[id].load() != job->sweep) ++violations;  // sweeps of a block in order
                    const auto r = static_cast<std::size_t>(job->block.row);
                    const auto c = static_cast<std::size_t>(job->block.col);
                    if (row_occupancy[r].fetch_add(1) != 0) ++violations;
                    if (col_occupancy[c].fetch_add(1) != 0) ++violations;
                    sink += spin_work(rng.below(30), rng.next());
                    row_occupancy[r].fetch_sub(1);
                    col_occupancy[c].fetch_sub(1);
                    done[id].fetch_add(1);
                    const int completed = s.release(job->block, true);
                    if (completed > 0) {
                        ASSERT_LE(completed, sweeps);
                        ++completions[static_cast<std::size_t>(completed)];
                        for (const auto& d : done)
                            if (d.load() < completed) ++violations;
                    }
                }
            });
        }
        for (auto& t : workers) t.join();
        EXPECT_EQ(violations.load(), 0);
        EXPECT_EQ(completions[0].load(), 0);
        for (int k = 1; k <= sweeps; ++k) EXPECT_EQ(completions[static_cast<std::size_t>(k)], 1);
        for (const auto& d : done) EXPECT_EQ(d.load(), sweeps);
        EXPECT_EQ(s.sweeps_done(), sweeps);
        const std::vector<ScheduleEvent> events = s.take_record();
        ASSERT_EQ(events.size(), n * static_cast<std::size_t>(sweeps));
        for (std::size_t i = 0; i < events.size(); ++i) {
            for (std::size_t j = i + 1; j < events.size(); ++j) {
                const ScheduleEvent& a = events[i];
                const ScheduleEvent& b = events[j];
                if (a.block.row != b.block.row && a.block.col != b.block.col) continue;
                ASSERT_TRUE(a.end_s <= b.start_s || b.end_s <= a.start_s);
                if (a.block == b.block) {
                    // The same block's runs are ordered by sweep.
                    EXPECT_EQ(a.sweep < b.sweep, a.end_s <= b.start_s);
                }
            }
        }
    }
}

TEST(BlockSchedulerThreads, PipelinedSweepsP2) { run_pipelined_check(2, 3, 6, 10); }
TEST(BlockSchedulerThreads, PipelinedSweepsP3) { run_pipelined_check(3, 5, 4, 6); }
TEST(BlockSchedulerThreads, PipelinedSweepsP4Side2) { run_pipelined_check(4, 2, 5, 10); }

/// On a 2 x 2 grid: completes three blocks of sweep 0 one after the other, then acquires the
/// fourth and keeps it running. Returns that block.
Block hold_last_block_of_first_sweep(BlockScheduler& s, Rng& rng) {
    for (int i = 0; i < 3; ++i) {
        auto job = s.acquire_job(rng);
        EXPECT_TRUE(job.has_value());
        EXPECT_EQ(job->sweep, 0);
        EXPECT_EQ(s.release(job->block, true), 0);
    }
    auto last = s.acquire_job(rng);  // the slowest sweep comes first
    EXPECT_TRUE(last.has_value());
    EXPECT_EQ(last->sweep, 0);
    EXPECT_EQ(s.sweeps_done(), 0);
    return last->block;
}

TEST(BlockScheduler, NextSweepFillsTheTail) {
    // While the last block of sweep 0 runs, a one-sweep round would leave a second worker idle;
    // with two sweeps it gets the one block that shares nothing with it, in sweep 1.
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
        BlockScheduler s(2);
        s.reset_sweeps(2);
        Rng rng(seed);
        const Block running = hold_last_block_of_first_sweep(s, rng);
        auto next = s.acquire_job(rng);
        ASSERT_TRUE(next.has_value());
        EXPECT_EQ(next->sweep, 1);
        EXPECT_EQ(next->block, (Block{1 - running.row, 1 - running.col}));
        EXPECT_EQ(s.release(next->block, true), 0);
        EXPECT_EQ(s.release(running, true), 1);  // sweep 0 complete
        EXPECT_EQ(s.sweeps_done(), 1);
        int completed = 0;
        int runs = 0;
        while (auto job = s.acquire_job(rng)) {
            EXPECT_EQ(job->sweep, 1);
            completed = s.release(job->block, true);
            ++runs;
        }
        EXPECT_EQ(runs, 3);
        EXPECT_EQ(completed, 2);
        EXPECT_EQ(s.remaining(), 0);
    }
}

TEST(BlockScheduler, BlockTwoSweepsAheadWaits) {
    // The block opposite the running one does sweep 1; it may not start sweep 2 before the
    // running block finishes sweep 0, although its row and column are free.
    BlockScheduler s(2);
    s.reset_sweeps(3);
    Rng rng(3);
    const Block running = hold_last_block_of_first_sweep(s, rng);
    const Block opposite{1 - running.row, 1 - running.col};
    auto ahead = s.acquire_job(rng);
    ASSERT_TRUE(ahead.has_value());
    EXPECT_EQ(ahead->block, opposite);
    EXPECT_EQ(ahead->sweep, 1);
    EXPECT_EQ(s.release(ahead->block, true), 0);
    std::atomic<bool> got{false};
    std::optional<Job> waited;
    std::thread waiter([&] {
        Rng r(5);
        waited = s.acquire_job(r);
        got = true;
    });
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(got.load());
    EXPECT_EQ(s.release(running, true), 1);
    waiter.join();
    ASSERT_TRUE(waited.has_value());
    EXPECT_EQ(waited->sweep, 1);  // a block of the slowest sweep, not the opposite one's third
    EXPECT_FALSE(waited->block == opposite);
    s.release(waited->block, true);
    EXPECT_THROW(s.reset_sweeps(0), ConfigError);
}

TEST(BlockSchedulerThreads, StopEndsAllWorkersPromptly) {
    constexpr int kThreads = 4;
    BlockScheduler s(default_grid_side(kThreads));
    s.reset();
    std::atomic<long> blocks_run{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < kThreads; ++w) {
        workers.emplace_back([&, w] {
            Rng rng(static_cast<std::uint64_t>(w));
            // Never completes a block: without stop() this loop would run forever.
            while (auto b = s.acquire(rng, w)) {
                spin_work(100, rng.next());
                ++blocks_run;
                s.release(*b, false);
            }
        });
    }
    std::this_thread::sleep_for(30ms);
    const auto stop_at = std::chrono::steady_clock::now();
    StopTimer timer(0.0, [&] { s.stop(); });  // stop from another thread, as the timer does
    for (auto& t : workers) t.join();
    const auto joined = std::chrono::steady_clock::now() - stop_at;
    EXPECT_TRUE(timer.cancel());
    EXPECT_TRUE(s.stopped());
    EXPECT_GT(blocks_run.load(), 0);
    EXPECT_LT(joined, 2s);  // generous: one block is 100 us; this only guards against a hang
    EXPECT_EQ(s.busy(), 0);
    Rng rng(1);
    EXPECT_FALSE(s.acquire(rng));
    s.reset();
    EXPECT_FALSE(s.stopped());
    EXPECT_TRUE(s.acquire(rng).has_value());
}

TEST(DiagonalSchedule, RoundsAreConflictFreeAndCoverTheGrid) {
    for (int l : {1, 2, 5, 12}) {
        DiagonalSchedule d(l);
        EXPECT_EQ(d.rounds(), l);
        std::vector<int> count(static_cast<std::size_t>(l * l), 0);
        for (int r = 0; r < d.rounds(); ++r) {
            const auto blocks = d.round(r);
            ASSERT_EQ(blocks.size(), static_cast<std::size_t>(l));
            std::set<int> rows;
            std::set<int> cols;
            for (const Block& b : blocks) {
                rows.insert(b.row);
                cols.insert(b.col);
                ++count[static_cast<std::size_t>(b.row * l + b.col)];
            }
            EXPECT_EQ(rows.size(), static_cast<std::size_t>(l));
            EXPECT_EQ(cols.size(), static_cast<std::size_t>(l));
        }
        for (int c : count) EXPECT_EQ(c, 1);
    }
    EXPECT_THROW(DiagonalSchedule(0), ConfigError);
}

}  // namespace
}  // namespace rotor::sched
