// The worker of the delayed trainer (apps/logreg/worker.h) with 1, 2 and 3 threads sharing its
// examples: the pushed values (the limbs of the exact sums), w and the margins are bitwise the
// same for every thread count, and equal BlockProx's when the pulled weights are its proximal
// steps. Runs under ThreadSanitizer (label tsan).
#include "apps/logreg/worker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <vector>

#include "core/base/error.h"
#include "tests/core/logreg/logreg_test_util.h"

namespace rotor::logreg {
namespace {

/// Runs `iterations` of a one-worker, one-server block proximal gradient with `threads` threads;
/// returns the concatenated pushed values, then w and the margins appended at the end. `fused`:
/// each pull is applied with the next push (apply_and_push), the last one by apply.
struct WorkerRun {
    std::vector<double> pushed;
    std::vector<double> weights;
    std::vector<double> margins;
};

/// `alone_every` > 0: the worker's team runs alone (one range over every row) in iterations
/// t % alone_every == 0 and hands off in the others (threads > 1).
WorkerRun run_worker(const Examples& ex, const BlockProxOptions& o, int threads,
                     std::uint64_t iterations, bool fused = false, std::uint64_t alone_every = 0) {
    Shard part(ex, true);
    Worker worker(part, o, threads);
    WorkerRun run;
    std::vector<double> values;
    const auto keys = part.keys();
    std::uint32_t held = 0;  // the block of `pulled`, when fused and t > 0
    std::vector<double> pulled;
    for (std::uint64_t t = 0; t < iterations; ++t) {
        if (alone_every > 0 && worker.team() != nullptr) {
            worker.team()->stay_alone_for(t % alone_every == 0 ? std::chrono::hours(1)
                                                               : std::chrono::seconds(0));
        }
        const std::uint32_t b = fused && t > 0 ? worker.apply_and_push(held, pulled, t, values)
                                               : worker.push_values(t, values);
        run.pushed.insert(run.pushed.end(), values.begin(), values.end());
        const auto block = worker.block(b);
        pulled.assign(block.size(), 0.0);
        for (std::size_t i = 0; i < block.size(); ++i) {
            std::array<std::int64_t, core::ExactSum::kLimbs> gl{}, ul{};
            for (std::size_t l = 0; l < core::ExactSum::kLimbs; ++l) {
                gl[l] = static_cast<std::int64_t>(values[i * kPushWidth + l]);
                ul[l] =
                    static_cast<std::int64_t>(values[i * kPushWidth + core::ExactSum::kLimbs + l]);
            }
            const auto at = static_cast<std::size_t>(
                std::lower_bound(keys.begin(), keys.end(), block[i]) - keys.begin());
            pulled[i] = prox_step(worker.weights()[at], core::ExactSum::from_limbs(gl).value(),
                                  core::ExactSum::from_limbs(ul).value(),
                                  penalty_of(block[i], o.lambda), o.eta, o.max_step);
        }
        held = b;
        if (!fused || t + 1 == iterations) worker.apply(b, pulled);
    }
    run.weights = worker.weights();
    run.margins.assign(part.margins().begin(), part.margins().end());
    return run;
}

/// λ = 0.5, 7 blocks, local curvature: enough blocks that examples span several.
BlockProxOptions seven_blocks() {
    BlockProxOptions o;
    o.lambda = 0.5;
    o.blocks = 7;
    o.curvature = Curvature::kLocal;
    return o;
}

TEST(Worker, OneTwoAndThreeThreadsAreBitwiseTheSameAndEqualBlockProx) {
    const Examples ex = testing::synthetic_examples(301, 60, 8, 31);
    const BlockProxOptions o = seven_blocks();
    constexpr std::uint64_t kIterations = 60;
    const WorkerRun one = run_worker(ex, o, 1, kIterations);
    std::vector<Shard> parts{Shard(ex, true)};
    BlockProx reference(parts, o);
    for (std::uint64_t t = 0; t < kIterations; ++t) reference.step(t);
    ASSERT_EQ(one.weights.size(), reference.weights().size());
    std::size_t nonzero = 0;
    for (std::size_t k = 0; k < one.weights.size(); ++k) {
        EXPECT_EQ(one.weights[k], reference.weights()[k]) << "key " << k;
        nonzero += one.weights[k] != 0;
    }
    EXPECT_GT(nonzero, 5u);
    for (std::size_t i = 0; i < one.margins.size(); ++i) {
        EXPECT_EQ(one.margins[i], parts[0].margins()[i]) << "example " << i;
    }
    for (const int threads : {2, 3}) {
        const WorkerRun many = run_worker(ex, o, threads, kIterations);
        EXPECT_EQ(many.pushed, one.pushed) << threads << " threads";
        EXPECT_EQ(many.weights, one.weights) << threads << " threads";
        EXPECT_EQ(many.margins, one.margins) << threads << " threads";
    }
}

TEST(Worker, ApplyAndPushGivesTheNumbersOfApplyThenPush) {
    const Examples ex = testing::synthetic_examples(301, 60, 8, 33);
    const BlockProxOptions o = seven_blocks();
    const WorkerRun apart = run_worker(ex, o, 1, 40);
    for (const int threads : {1, 2, 3}) {
        const WorkerRun fused = run_worker(ex, o, threads, 40, true);
        EXPECT_EQ(fused.pushed, apart.pushed) << threads << " threads";
        EXPECT_EQ(fused.weights, apart.weights) << threads << " threads";
        EXPECT_EQ(fused.margins, apart.margins) << threads << " threads";
    }
}

// While the team runs alone the calling thread pushes and applies one range over every row
// instead of the threads' ranges: the same numbers, alone, handed off, or mixed (a push alone
// after an apply handed off and the reverse, fused or not).
TEST(Worker, ATeamAloneRunsOneRangeWithTheSameNumbers) {
    const Examples ex = testing::synthetic_examples(301, 60, 8, 35);
    const BlockProxOptions o = seven_blocks();
    const WorkerRun one = run_worker(ex, o, 1, 40);
    for (const int threads : {2, 3}) {
        for (const bool fused : {false, true}) {
            for (const std::uint64_t every : {1u, 2u, 3u}) {
                const WorkerRun r = run_worker(ex, o, threads, 40, fused, every);
                EXPECT_EQ(r.pushed, one.pushed) << threads << " threads, every " << every;
                EXPECT_EQ(r.weights, one.weights) << threads << " threads, every " << every;
                EXPECT_EQ(r.margins, one.margins) << threads << " threads, every " << every;
            }
        }
    }
}

TEST(Worker, RowCutsBalanceNonzeros) {
    // Rows of very different lengths: 40 long ones first, then 400 short ones. Cutting the rows
    // in equal counts would give the first thread most of the work.
    Examples ex;
    for (int i = 0; i < 440; ++i) {
        std::vector<std::uint64_t> keys;
        std::vector<double> values;
        for (std::uint64_t k = 0; k < (i < 40 ? 50u : 2u); ++k) {
            keys.push_back(k * 3 + static_cast<std::uint64_t>(i % 3));
            values.push_back(1.0);
        }
        ex.add(i % 2 ? 1 : -1, keys, values);
    }
    const Shard part(ex, true);
    std::vector<std::uint64_t> per_row(part.examples(), 0);
    for (const std::uint32_t r : part.rows()) ++per_row[r];
    for (const int threads : {1, 2, 3, 7}) {
        const std::vector<std::uint32_t> cuts = row_cuts(part, threads);
        ASSERT_EQ(cuts.size(), static_cast<std::size_t>(threads) + 1);
        EXPECT_EQ(cuts.front(), 0u);
        EXPECT_EQ(cuts.back(), part.examples());
        EXPECT_TRUE(std::is_sorted(cuts.begin(), cuts.end()));
        const double share = static_cast<double>(part.rows().size()) / threads;
        for (int j = 0; j < threads; ++j) {
            std::uint64_t nz = 0;
            for (std::uint32_t r = cuts[j]; r < cuts[j + 1]; ++r) nz += per_row[r];
            EXPECT_LE(std::fabs(static_cast<double>(nz) - share), 50.0)
                << threads << " threads, range " << j;  // at most one row off
        }
    }
    const std::vector<std::uint32_t> many = row_cuts(part, 1000);  // more threads than rows
    EXPECT_EQ(many.back(), part.examples());
    EXPECT_TRUE(std::is_sorted(many.begin(), many.end()));
}

TEST(Worker, MoreThreadsThanExamplesAndZeroThreads) {
    const Examples ex = testing::synthetic_examples(3, 10, 4, 32);
    BlockProxOptions o;
    o.blocks = 2;
    const WorkerRun one = run_worker(ex, o, 1, 6);
    const WorkerRun five = run_worker(ex, o, 5, 6);
    EXPECT_EQ(five.pushed, one.pushed);
    EXPECT_EQ(five.margins, one.margins);
    Shard part(ex, true);
    EXPECT_THROW(Worker(part, o, 0), ConfigError);
}

}  // namespace
}  // namespace rotor::logreg
