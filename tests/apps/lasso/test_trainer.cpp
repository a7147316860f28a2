// lasso::Trainer on in-process ranks (comm::run_ranks) x threads: bitwise the same coefficients
// for any split and schedule, the KKT conditions met at convergence, the slice design's
// statistics, the split by entries.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "comm/inprocess_communicator.h"
#include "core/lasso/libsvm_reader.h"
#include "tests/apps/lasso/lasso_trainer_util.h"
#include "tests/core/lasso/lasso_test_util.h"

namespace rotor::lasso {
namespace {

using testing::LassoRun;
using testing::same_bits;

LassoRun run_ranks(const RawData& data, const TrainOptions& o, int ranks, int threads,
                   std::uint32_t iterations) {
    LassoRun out;
    comm::run_ranks(ranks, [&](comm::Communicator& c) {
        LassoRun run = testing::run_lasso(c, data, o, threads, iterations);
        if (c.rank() == 0) out = std::move(run);
    });
    return out;
}

/// The same iterations, updates, coefficients, offset, objective, gap, λ_max and scales, bit
/// for bit.
void expect_same_run(const LassoRun& many, const LassoRun& one, const std::string& what) {
    EXPECT_EQ(many.iterations, one.iterations) << what;
    EXPECT_EQ(many.updates, one.updates) << what;
    EXPECT_TRUE(same_bits(many.b, one.b)) << what;
    EXPECT_EQ(std::bit_cast<std::uint64_t>(many.offset), std::bit_cast<std::uint64_t>(one.offset))
        << what;
    EXPECT_EQ(many.last.objective, one.last.objective) << what;
    EXPECT_EQ(many.last.gap, one.last.gap) << what;
    EXPECT_EQ(many.lambda_max, one.lambda_max) << what;
    EXPECT_TRUE(same_bits(many.standardization.scales, one.standardization.scales)) << what;
}

TrainOptions options(Schedule s, double lambda) {
    TrainOptions o;
    o.schedule = s;
    o.lambda = lambda;
    o.strads.candidates = 12;
    o.strads.parallel = 4;
    o.strads.rho = 0.5;
    o.seed = 7;
    o.tol = 0;             // run every iteration asked for
    o.inline_entries = 0;  // every step on the workers
    return o;
}

TEST(LassoTrainer, SplitByEntriesBalancesAndCovers) {
    const std::vector<std::uint64_t> offsets{0, 5, 5, 6, 10, 12, 20};  // costs 6 1 2 5 3 9
    EXPECT_EQ(split_by_entries(offsets, 1), (std::vector<std::uint32_t>{0, 6}));
    EXPECT_EQ(split_by_entries(offsets, 2), (std::vector<std::uint32_t>{0, 4, 6}));
    const std::vector<std::uint32_t> three = split_by_entries(offsets, 3);
    EXPECT_EQ(three, (std::vector<std::uint32_t>{0, 3, 5, 6}));  // cost 26: cuts at 8, 17
    EXPECT_EQ(split_by_entries(std::vector<std::uint64_t>{0}, 2),
              (std::vector<std::uint32_t>{0, 0, 0}));
}

TEST(LassoTrainer, SliceDesignOfOneSliceIsCloseToBuildDesign) {
    for (const double density : {0.3, 1.0}) {
        RawData raw = testing::random_data(60, 9, density, 3, 5);
        raw.values[3] = 1e6;  // a large value: the sums are scaled by powers of two
        const Design d = build_design(raw);
        const SliceDesign s = build_slice_design(raw, {}, Reducer::single());
        ASSERT_EQ(s.total_samples, 60u);
        const Standardization& a = d.standardization();
        const Standardization& b = s.rows.standardization();
        EXPECT_NEAR(a.y_mean, b.y_mean, 1e-12 * std::fabs(a.y_mean));
        EXPECT_NEAR(a.y_scale, b.y_scale, 1e-12 * a.y_scale);
        for (std::uint32_t j = 0; j < 9; ++j) {
            EXPECT_NEAR(a.means[j], b.means[j], 1e-12 * (1 + std::fabs(a.means[j]))) << j;
            EXPECT_NEAR(a.scales[j], b.scales[j], 1e-12 * a.scales[j]) << j;
            EXPECT_NEAR(d.sq_norms()[j], s.rows.sq_norms()[j], 1e-12) << j;
            EXPECT_NEAR(d.shifts()[j], s.rows.shifts()[j], 1e-12) << j;
        }
        EXPECT_NEAR(d.target_sum(), s.total_target_sum, 1e-12);
    }
}

TEST(LassoTrainer, AnyRanksAndThreadsGiveBitwiseTheSameCoefficients) {
    const RawData sparse = testing::random_data(50, 14, 0.3, 4, 21);
    const RawData dense = testing::correlated_data(40, 12, 4, 0.5, 22);
    for (const RawData* data : {&sparse, &dense}) {
        for (const auto& [s, active] :
             {std::pair{Schedule::kCyclic, false}, std::pair{Schedule::kCyclic, true},
              std::pair{Schedule::kShotgun, false}, std::pair{Schedule::kShotgun, true},
              std::pair{Schedule::kStrads, false}, std::pair{Schedule::kStrads, true}}) {
            TrainOptions o = options(s, 0.02);
            o.active_set = active;
            const LassoRun one = run_ranks(*data, o, 1, 1, 3);
            // Active sets settle to the exact optimum (gap <= 0 meets tol = 0) sooner.
            if (active) {
                ASSERT_GE(one.iterations, 1u);
            } else {
                ASSERT_EQ(one.iterations, 3u);
            }
            EXPECT_GT(one.last.nonzeros, 0u);
            for (int ranks = 1; ranks <= 3; ++ranks) {
                for (int threads = 1; threads <= 2; ++threads) {
                    if (ranks == 1 && threads == 1) continue;
                    const std::string what =
                        fmt::format("{} x {}, {}{}, dense {}", ranks, threads, schedule_name(s),
                                    active ? " (active set)" : "", data->dense);
                    expect_same_run(run_ranks(*data, o, ranks, threads, 3), one, what);
                    TrainOptions inlined = o;  // small steps on the coordinator: the same bits
                    inlined.inline_entries = 1000;
                    EXPECT_TRUE(same_bits(run_ranks(*data, inlined, ranks, threads, 3).b, one.b))
                        << what << ", inlined";
                }
            }
        }
    }
}

// Row tiles (TrainOptions::tile_rows) change where a worker's steps walk its rows, not the
// operations: the same bits as one tile a worker, for every schedule, ranks and threads.
TEST(LassoTrainer, RowTilesGiveBitwiseTheSameCoefficients) {
    const RawData sparse = testing::random_data(60, 10, 0.4, 4, 31);
    const RawData dense = testing::correlated_data(48, 10, 4, 0.5, 32);
    // The cut: at most tile_rows rows a tile, never fewer than column_entries entries a column
    // a tile on average.
    EXPECT_EQ(row_tiles(1000, 1'000'000, 10, 0, 512), 1u);
    EXPECT_EQ(row_tiles(100, 1'000'000, 10, 100, 512), 1u);
    EXPECT_EQ(row_tiles(101, 1'000'000, 10, 100, 512), 2u);
    EXPECT_EQ(row_tiles(1000, 1'000'000, 10, 64, 512), 16u);
    EXPECT_EQ(row_tiles(1000, 51'200, 10, 64, 512), 10u);  // 512 entries a column a tile
    EXPECT_EQ(row_tiles(1000, 5'119, 10, 64, 512), 1u);
    EXPECT_EQ(row_tiles(1000, 400, 10, 64, 4), 10u);
    for (const RawData* data : {&sparse, &dense}) {
        comm::run_ranks(1, [&](comm::Communicator& solo) {
            sched::Runtime runtime(1, sched::PinMode::kNone);
            TrainOptions o = options(Schedule::kShotgun, 0.02);
            o.tile_rows = 5;
            o.tile_column_entries = 4;
            const std::size_t entries = data->row_offsets.back();
            const std::size_t tiles = Trainer(*data, o, runtime, solo).tiles();
            EXPECT_GT(tiles, 1u) << "dense " << data->dense;
            EXPECT_LE(tiles, entries / (4 * 10)) << "dense " << data->dense;
            o.tile_column_entries = 512;  // the default: too few entries to cut these
            EXPECT_EQ(Trainer(*data, o, runtime, solo).tiles(), 1u);
            o.tile_rows = 0;
            EXPECT_EQ(Trainer(*data, o, runtime, solo).tiles(), 1u);
        });
        for (const Schedule s : {Schedule::kCyclic, Schedule::kShotgun, Schedule::kStrads}) {
            for (const bool active : {false, true}) {
                TrainOptions o = options(s, 0.02);
                o.active_set = active;
                o.tile_rows = 0;
                const LassoRun one = run_ranks(*data, o, 1, 1, 3);
                EXPECT_GT(one.last.nonzeros, 0u);
                o.tile_rows = 4;
                o.tile_column_entries = 1;
                for (int ranks = 1; ranks <= 2; ++ranks) {
                    for (int threads = 1; threads <= 2; ++threads) {
                        const std::string what =
                            fmt::format("{} x {}, {}, active {}, dense {}", ranks, threads,
                                        schedule_name(s), active, data->dense);
                        expect_same_run(run_ranks(*data, o, ranks, threads, 3), one, what);
                    }
                }
            }
        }
    }
}

// One rank x 2 threads runs a shotgun pass's rounds in one region (one hand-off a pass); on
// several ranks every round is its own hand-offs (the allreduce sits between them).
TEST(LassoTrainer, ShotgunPassesOnOneRankAreOneHandOff) {
    const RawData data = testing::random_data(50, 14, 0.3, 4, 21);
    TrainOptions o = options(Schedule::kShotgun, 0.02);
    o.active_set = false;  // one pass an iteration: ceil(14 / 4) = 4 rounds
    const auto handoffs = [&](int ranks) {
        train::Record r;
        comm::run_ranks(ranks, [&](comm::Communicator& c) {
            const std::vector<std::uint32_t> begin = split_by_entries(data.row_offsets, ranks);
            const RawData slice = slice_rows(data, begin[c.rank()], begin[c.rank() + 1]);
            sched::Runtime runtime(2, sched::PinMode::kNone);
            Trainer t(slice, o, runtime, c);
            train::Record mine = t.iterate();
            if (c.rank() == 0) r = std::move(mine);
        });
        EXPECT_EQ(r.get("rounds").value_or(-1), 4.0);
        return r.get("handoffs").value_or(-1);
    };
    EXPECT_EQ(handoffs(1), 2.0);   // the region, and the flush of its last changes
    EXPECT_GE(handoffs(2), 12.0);  // per round: the push, the adding, the pull
}

TEST(LassoTrainer, ConvergesToTheKktConditions) {
    const RawData data = testing::random_data(80, 20, 0.4, 5, 31);
    for (const Schedule s : {Schedule::kCyclic, Schedule::kStrads}) {
        TrainOptions o = options(s, 0.05);
        o.tol = 1e-10;
        const LassoRun run = run_ranks(data, o, 2, 2, 2000);
        EXPECT_TRUE(run.converged) << schedule_name(s);
        EXPECT_LT(run.last.relative_gap, 1e-10);
        EXPECT_LT(run.last.kkt_violation, 1e-4 * run.standardization.y_scale);
        EXPECT_GT(run.last.nonzeros, 0u);
        // Cyclic descent never increases the objective.
        if (s == Schedule::kCyclic) {
            for (std::size_t i = 1; i < run.objectives.size(); ++i)
                EXPECT_LE(run.objectives[i], run.objectives[i - 1] * (1 + 1e-12)) << i;
        }
    }
}

TEST(LassoTrainer, ActiveSetsReachTheSameOptimumInFewerUpdates) {
    const RawData data = testing::random_data(120, 80, 0.2, 6, 33);
    TrainOptions full = options(Schedule::kCyclic, 0);
    full.lambda = 0.3 * run_ranks(data, full, 1, 1, 1).lambda_max;
    full.tol = 1e-12;
    full.active_set = false;
    TrainOptions active = full;
    active.active_set = true;
    const LassoRun a = run_ranks(data, active, 2, 2, 500);
    const LassoRun f = run_ranks(data, full, 2, 2, 500);
    ASSERT_TRUE(a.converged);
    ASSERT_TRUE(f.converged);
    EXPECT_NEAR(a.last.objective, f.last.objective, 1e-11 * f.last.objective);
    EXPECT_EQ(a.last.nonzeros, f.last.nonzeros);
    EXPECT_LT(a.last.nonzeros, 40u);  // a sparse solution: most columns outside the active set
    EXPECT_LT(a.updates * 2, f.updates);
    for (std::size_t i = 1; i < a.objectives.size(); ++i)
        EXPECT_LE(a.objectives[i], a.objectives[i - 1] * (1 + 1e-12)) << i;
}

TEST(LassoTrainer, ParallelSchedulesWithActiveSetsReachTheOptimumInFewerUpdates) {
    const RawData data = testing::random_data(120, 80, 0.2, 6, 33);
    for (const Schedule s : {Schedule::kShotgun, Schedule::kStrads}) {
        TrainOptions full = options(s, 0);
        full.lambda = 0.3 * run_ranks(data, full, 1, 1, 1).lambda_max;
        full.strads.parallel = 4;
        full.strads.candidates = 8;
        full.strads.rho = 0.5;
        full.tol = 1e-12;
        full.active_set = false;
        TrainOptions active = full;
        active.active_set = true;
        const LassoRun a = run_ranks(data, active, 2, 2, 2000);
        const LassoRun f = run_ranks(data, full, 2, 2, 2000);
        ASSERT_TRUE(a.converged) << schedule_name(s);
        ASSERT_TRUE(f.converged) << schedule_name(s);
        EXPECT_NEAR(a.last.objective, f.last.objective, 1e-11 * f.last.objective);
        EXPECT_EQ(a.last.nonzeros, f.last.nonzeros);
        EXPECT_LT(a.updates * 2, f.updates) << schedule_name(s);
        EXPECT_LT(a.last.kkt_violation, 1e-4 * a.standardization.y_scale);
    }
}

// Issue 37, item 5. On the shared-factor design (every pair of columns at 0.155) shotgun's rounds
// of 16 and 64 diverge, and strads' did too (the pairs pass ρ = 0.3). Now shotgun goes back to
// its last evaluation, halves L and goes on, and strads keeps no round that could raise the
// objective (the row-sum bound): both reach cyclic's optimum, bitwise alike on any ranks x
// threads, rollbacks included.
TEST(LassoTrainer, DivergingRoundsAreUndoneAndTheRunReachesTheOptimum) {
    const RawData data = testing::shared_factor_data(80, 160, 6, 51);
    TrainOptions cyc = options(Schedule::kCyclic, 0);
    cyc.lambda = 0.05 * run_ranks(data, cyc, 1, 1, 1).lambda_max;
    cyc.tol = 1e-13;
    const LassoRun opt = run_ranks(data, cyc, 1, 1, 2000);
    ASSERT_TRUE(opt.converged);
    for (const Schedule s : {Schedule::kShotgun, Schedule::kStrads}) {
        for (const std::uint32_t l : {16U, 64U}) {
            const std::string what = fmt::format("{}, L = {}", schedule_name(s), l);
            TrainOptions o = cyc;
            o.schedule = s;
            o.strads.parallel = l;
            o.strads.candidates = 2 * l;
            o.strads.rho = 0.3;
            o.tol = 1e-10;
            const LassoRun one = run_ranks(data, o, 1, 1, 3000);
            ASSERT_TRUE(one.converged) << what;
            EXPECT_NEAR(one.last.objective, opt.last.objective, 1e-6 * opt.last.objective) << what;
            for (std::size_t i = 1; i < one.objectives.size(); ++i)
                EXPECT_LE(one.objectives[i], one.objectives[i - 1] * (1 + 1e-12)) << what << i;
            if (s == Schedule::kShotgun) {
                EXPECT_GT(one.rollbacks, 0u) << what;
                EXPECT_LT(one.parallel, l) << what;
            } else {
                EXPECT_EQ(one.rollbacks, 0u) << what;
                EXPECT_EQ(one.parallel, l) << what;
            }
            const LassoRun many = run_ranks(data, o, 2, 2, 3000);
            expect_same_run(many, one, what + ", 2 x 2");
            EXPECT_EQ(many.rollbacks, one.rollbacks) << what;
        }
    }
}

// A state gathered after rollbacks (the lowered L, the rollbacks) and restored on 2 threads
// continues as the uninterrupted run on 1, bit for bit (checkpoints, --resume).
TEST(LassoTrainer, AStateAfterRollbacksContinuesBitwise) {
    const RawData data = testing::shared_factor_data(80, 160, 6, 51);
    TrainOptions o = options(Schedule::kShotgun, 0);
    o.lambda = 0.05 * run_ranks(data, o, 1, 1, 1).lambda_max;
    o.strads.parallel = 64;
    o.tol = 1e-10;
    const LassoRun whole = run_ranks(data, o, 1, 1, 3000);
    ASSERT_TRUE(whole.converged);
    ASSERT_GT(whole.rollbacks, 0u);
    comm::run_ranks(1, [&](comm::Communicator& solo) {
        TrainerState state;
        {
            sched::Runtime runtime(1, sched::PinMode::kNone);
            Trainer t(data, o, runtime, solo);
            while (t.rollbacks() == 0) {
                train::Record r = t.iterate();
                t.evaluate_record(r);
            }
            state = t.gather_state();
        }
        EXPECT_EQ(state.rollbacks, 1u);
        EXPECT_EQ(state.parallel, 32u);
        sched::Runtime runtime(2, sched::PinMode::kNone);
        Trainer t(data, o, runtime, solo);
        t.restore(state, 0);
        EXPECT_EQ(t.parallel(), 32u);
        while (!t.converged()) {
            train::Record r = t.iterate();
            t.evaluate_record(r);
        }
        EXPECT_EQ(t.rollbacks(), whole.rollbacks);
        EXPECT_EQ(t.total_updates(), whole.updates);
        EXPECT_TRUE(same_bits({t.coefficients().b.begin(), t.coefficients().b.end()}, whole.b));
    });
}

// Issue 37, item 6: without --threads, a rank takes one thread when a round reads too few
// stored entries for a second to pay (cyclic on text: one short column) or when other processes
// keep the cores busy, else the free cores.
TEST(LassoTrainer, DefaultThreadsFollowTheCostOfARoundAndTheFreeCores) {
    TrainOptions o;  // cyclic
    // debian-size's training set: 56,983 x 21,728, 866,812 entries: ~39 a cyclic round.
    ThreadChoice c = choose_threads(866'812, 21'728, o, 2, 0.0);
    EXPECT_EQ(c.threads, 1);
    EXPECT_NE(c.reason.find("~39 stored entries, under the 65536"), std::string::npos) << c.reason;
    // Tall dense columns: a cyclic round of 100,000 entries.
    EXPECT_EQ(choose_threads(100'000 * 50, 50, o, 2, 0.0).threads, 2);
    // Shotgun at L = 4096 on debian-size: ~160,000 entries a round; one when the machine is busy.
    o.schedule = Schedule::kShotgun;
    o.strads.parallel = 4096;
    c = choose_threads(866'812, 21'728, o, 2, 0.2);
    EXPECT_EQ(c.threads, 2);
    EXPECT_NE(c.reason.find("2 of 2 cores free"), std::string::npos) << c.reason;
    c = choose_threads(866'812, 21'728, o, 2, 1.0);
    EXPECT_EQ(c.threads, 1);
    EXPECT_NE(c.reason.find("the load average is 1.0 on 2 cores"), std::string::npos) << c.reason;
    EXPECT_EQ(choose_threads(866'812, 21'728, o, 8, 3.0).threads, 5);
    EXPECT_EQ(choose_threads(866'812, 21'728, o, 8, 40.0).threads, 1);
    EXPECT_EQ(choose_threads(866'812, 21'728, o, 1, 0.0).threads, 1);
    o.strads.parallel = 1024;  // ~40,000 a round: one thread
    EXPECT_EQ(choose_threads(866'812, 21'728, o, 2, 0.0).threads, 1);
}

TEST(LassoTrainer, LambdaMaxGivesZeroAndBelowItDoesNot) {
    const RawData data = testing::random_data(40, 10, 0.5, 3, 41);
    TrainOptions o = options(Schedule::kCyclic, 0);
    const double lmax = run_ranks(data, o, 1, 1, 1).lambda_max;
    ASSERT_GT(lmax, 0);
    o.lambda = lmax * (1 + 1e-9);
    EXPECT_EQ(run_ranks(data, o, 2, 1, 5).last.nonzeros, 0u);
    o.lambda = lmax * 0.9;
    EXPECT_GT(run_ranks(data, o, 2, 1, 5).last.nonzeros, 0u);
}

TEST(LassoTrainer, ConstantAndEmptyColumnsStayZero) {
    RawData d;
    d.features = 4;  // column 3 never appears; column 1 is constant 2
    const std::vector<std::uint32_t> cols{0, 1, 2};
    for (int i = 0; i < 12; ++i) {
        const std::vector<double> v{double(i % 5), 2.0, double((i * 7) % 3)};
        d.add_sample(0.5 * v[0] - v[2] + 0.01 * i, cols, v);
    }
    const LassoRun run = run_ranks(d, options(Schedule::kCyclic, 0.01), 3, 2, 50);
    EXPECT_EQ(run.b[1], 0.0);
    EXPECT_EQ(run.b[3], 0.0);
    EXPECT_NE(run.b[0], 0.0);
}

TEST(LassoTrainer, RejectsBadOptions) {
    TrainOptions o;
    o.lambda = -1;
    EXPECT_THROW(o.validate(), ConfigError);
    o.lambda = 1;
    o.max_iterations = 0;
    EXPECT_THROW(o.validate(), ConfigError);
    EXPECT_THROW(parse_schedule("random"), ConfigError);
    EXPECT_THROW(parse_stop_rule("never"), ConfigError);
}

}  // namespace
}  // namespace rotor::lasso
