// make_als_trainer (implicit feedback) on in-process ranks x threads: the same model for any
// split, a decreasing objective, restore continuing bitwise, ranking metrics that find planted
// groups, and the options refused by name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "tests/apps/mf/ccd_test_util.h"

namespace rotor::mf {
namespace {

using testing::CcdRun;

TrainOptions als_options(std::uint32_t k) {
    TrainOptions o;
    o.solver = Solver::kAls;
    o.implicit = true;
    o.objective.bias = false;
    o.objective.form = LambdaForm::kPlain;
    o.objective.lambda = 0.1;
    o.alpha = 2.0;
    o.rank = k;
    o.seed = 3;
    return o;
}

TEST(AlsTrainer, AnyRanksAndThreadsGiveBitwiseTheSameModel) {
    const Ratings r = testing::small_ratings();
    for (const std::uint32_t k : {5U, 20U}) {
        const TrainOptions o = als_options(k);
        const CcdRun one = testing::run_ccd_ranks(r, o, 1, 1, 3);
        ASSERT_EQ(one.model.w.rows(), r.num_users());
        EXPECT_EQ(one.model.solver, "als");
        for (const auto& [ranks, threads] : {std::pair{1, 2}, {2, 1}, {3, 2}}) {
            const CcdRun many = testing::run_ccd_ranks(r, o, ranks, threads, 3);
            testing::expect_bitwise_equal(
                many.model, one.model,
                fmt::format("K {}: {} ranks x {} threads", k, ranks, threads));
            EXPECT_EQ(many.objectives, one.objectives);
        }
    }
}

TEST(AlsTrainer, ObjectiveDecreasesWithExactSolves) {
    const Ratings r = testing::small_ratings(4);
    TrainOptions o = als_options(4);
    o.cg_steps = 20;
    const CcdRun run = testing::run_ccd_ranks(r, o, 1, 2, 6);
    for (std::size_t i = 1; i < run.objectives.size(); ++i)
        EXPECT_LE(run.objectives[i], run.objectives[i - 1] * (1 + 1e-6)) << "iteration " << i;
    EXPECT_LT(run.objectives.back(), 0.9 * run.objectives.front());
}

TEST(AlsTrainer, RestoreContinuesBitwise) {
    const Ratings r = testing::small_ratings(9);
    const TrainOptions o = als_options(6);
    const CcdRun whole = testing::run_ccd_ranks(r, o, 1, 2, 4);
    const CcdRun first = testing::run_ccd_ranks(r, o, 2, 1, 2);
    ASSERT_EQ(first.state.iterations_done, 2U);
    const CcdRun rest = testing::run_ccd_ranks(r, o, 1, 2, 2, &first.state);
    testing::expect_bitwise_equal(rest.model, whole.model, "restored");
    EXPECT_EQ(rest.model.iterations, 4U);
    EXPECT_EQ(rest.objectives.back(), whole.objectives.back());
}

/// 4 groups of 15 users, each consuming most of its own group's 10 items: the held-out items of
/// a user are its group's, and the model must rank them first. A user has ~4 unseen items in its
/// group, ~2 of them held out, so precision@3 is about 0.5 at best, and ~0.06 for a random
/// ranking of the ~34 unseen items.
TEST(AlsTrainer, RankingMetricsFindPlantedGroups) {
    testing::Csr m;
    m.cols = 40;
    TestRatings test;
    Rng rng(17);
    for (std::uint32_t u = 0; u < 60; ++u) {
        const std::uint32_t group = u % 4;
        for (std::uint32_t j = 10 * group; j < 10 * group + 10; ++j) {
            const double x = rng.uniform();
            if (x < 0.6) {
                m.add(j, 1.0f + static_cast<float>(rng.uniform()));
            } else if (x < 0.8) {
                test.users.push_back(u);
                test.items.push_back(j);
                test.values.push_back(1.0f);
            }
        }
        if (rng.uniform() < 0.3) m.add((10 * group + 17) % 40, 1.0f);  // noise in another group
        std::sort(m.ids.begin() + static_cast<std::ptrdiff_t>(m.offsets.back()), m.ids.end());
        m.end_row();
    }
    const Ratings r = testing::to_ratings(m);
    TrainOptions o = als_options(8);
    o.alpha = 10;
    o.ranking_k = 3;
    const CcdRun run = testing::run_ccd_ranks(r, o, 2, 2, 8, nullptr, &test);
    const train::Record& last = run.records.back();
    EXPECT_GT(*last.get("test_precision_at_k"), 0.4);
    EXPECT_GT(*last.get("test_ndcg_at_k"), 0.6);
    EXPECT_LE(*last.get("test_ndcg_at_k"), 1.0);
    EXPECT_GT(*last.get("test_map_at_k"), 0.5);
}

TEST(AlsTrainer, OptionsAreRefusedByName) {
    TrainOptions o = als_options(4);
    o.implicit = false;
    try {
        o.validate(1);
        FAIL() << "als without --implicit";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("--solver"), std::string::npos) << e.what();
    }
    o = als_options(4);
    o.solver = Solver::kCcd;
    EXPECT_THROW(o.validate(1), ConfigError);
    o = als_options(4);
    o.alpha = -1;
    EXPECT_THROW(o.validate(1), ConfigError);
    o = als_options(4);
    o.objective.bias = true;
    EXPECT_THROW(o.validate(1), ConfigError);
}

}  // namespace
}  // namespace rotor::mf
