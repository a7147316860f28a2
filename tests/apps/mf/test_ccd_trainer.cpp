// make_ccd_trainer on in-process ranks (comm::run_ranks) x threads: bitwise the same model for
// any split, the core kernels' result, a non-increasing objective, planted recovery, restore on
// another rank count, unseen test users and items.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "apps/mf/ccd_parallel.h"
#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "tests/apps/mf/ccd_test_util.h"

namespace rotor::mf {
namespace {

using testing::ccd_options;
using testing::CcdRun;
using testing::expect_bitwise_equal;

TEST(CcdTrainer, SplitRowsByRatingsBalancesAndCovers) {
    const std::vector<std::uint64_t> offsets{0, 5, 5, 6, 10, 12, 20};
    EXPECT_EQ(split_rows_by_ratings(offsets, 1), (std::vector<std::uint32_t>{0, 6}));
    EXPECT_EQ(split_rows_by_ratings(offsets, 2), (std::vector<std::uint32_t>{0, 4, 6}));
    EXPECT_EQ(split_rows_by_ratings(offsets, 4), (std::vector<std::uint32_t>{0, 1, 4, 6, 6}));
    const std::vector<std::uint64_t> empty{0, 0, 0};
    EXPECT_EQ(split_rows_by_ratings(empty, 3), (std::vector<std::uint32_t>{0, 0, 0, 2}));
    const std::vector<std::uint64_t> none{0};
    EXPECT_EQ(split_rows_by_ratings(none, 2), (std::vector<std::uint32_t>{0, 0, 0}));
}

TEST(CcdTrainer, AnyRanksAndThreadsGiveBitwiseTheSameModel) {
    const Ratings r = testing::small_ratings();
    for (const bool weighted : {true, false}) {
        TrainOptions o = ccd_options(3);
        o.objective.form = weighted ? LambdaForm::kWeighted : LambdaForm::kPlain;
        o.objective.bias = weighted;  // plain form without bias: the STRADS objective
        const CcdRun one = testing::run_ccd_ranks(r, o, 1, 1, 2);
        ASSERT_EQ(one.model.w.rows(), r.num_users());
        for (int ranks = 1; ranks <= 4; ++ranks) {
            for (int threads = 1; threads <= 2; ++threads) {
                if (!weighted && ranks % 2 == threads % 2) continue;  // a few splits suffice
                const CcdRun many = testing::run_ccd_ranks(r, o, ranks, threads, 2);
                expect_bitwise_equal(
                    many.model, one.model,
                    fmt::format("{} ranks x {} threads, weighted {}", ranks, threads, weighted));
                EXPECT_EQ(many.state.residuals, one.state.residuals);
            }
        }
    }
}

TEST(CcdTrainer, RanksWithoutUsersChangeNothing) {
    // 3 users (one without ratings) on 4 ranks: at least one rank holds no user.
    testing::Csr m;
    m.cols = 5;
    for (const auto& row :
         {std::vector<std::uint32_t>{0, 2, 3}, std::vector<std::uint32_t>{1, 3}}) {
        for (const std::uint32_t j : row) m.add(j, static_cast<float>(1 + j));
        m.end_row();
    }
    const Ratings r = testing::to_ratings(m, 1, 1);
    const TrainOptions o = ccd_options(3);
    const CcdRun one = testing::run_ccd_ranks(r, o, 1, 1, 3);
    for (int threads = 1; threads <= 2; ++threads) {
        expect_bitwise_equal(testing::run_ccd_ranks(r, o, 4, threads, 3).model, one.model,
                             fmt::format("4 ranks x {} threads", threads));
    }
    EXPECT_EQ(one.model.w.row(2)[0], 0.0f);  // the user without ratings
}

TEST(CcdTrainer, SumsTooLargeForTheNarrowLimbsGoWideAndStayExact) {
    // One rating of 1e12 among ratings near 1: its residual (about 1e12 - μ) alone makes its
    // column's pushed sum in the bias step exceed the narrow limbs' 2^38, so on several ranks
    // that pull goes again with the wide limbs; the model stays bitwise the one of one rank.
    testing::Csr m = testing::random_csr(37, 28, 0.2, 7);
    ASSERT_FALSE(m.values.empty());
    m.values[m.values.size() / 2] = 1e12f;
    const Ratings r = testing::to_ratings(m, 3, 2);
    const TrainOptions o = ccd_options(3);
    const CcdRun one = testing::run_ccd_ranks(r, o, 1, 1, 2);
    for (const auto& [ranks, threads] : {std::pair{2, 1}, std::pair{3, 2}}) {
        expect_bitwise_equal(testing::run_ccd_ranks(r, o, ranks, threads, 2).model, one.model,
                             fmt::format("{} ranks x {} threads", ranks, threads));
    }
}

TEST(CcdTrainer, MatchesTheCoreIterationOnOnePart) {
    const testing::Csr m = testing::random_csr(30, 20, 0.3, 11);
    const Ratings r = testing::to_ratings(m);
    const TrainOptions o = ccd_options(3);
    const CcdRun run = testing::run_ccd_ranks(r, o, 1, 2, 2);
    // The same start as the trainer: W uniform in [0, 0.1) on its stream, H = 0.
    Factors w(m.rows(), 3), h(m.cols, 3);
    w.init_uniform(o.seed, 0x43434457, 0.0f, 0.1f);
    std::vector<float> b(m.rows(), 0.0f), c(m.cols, 0.0f), res(m.values.size());
    const double mu = rating_sum(m.values).value() / double(m.values.size());
    compute_residuals(m.view(), w, b, h, c, mu, res);
    CcdParams p;
    p.objective = o.objective;
    p.inner = o.inner;
    const CcdPart all{m.view(), &w, b, res};
    for (int it = 0; it < 2; ++it) ccd_iteration(all, h, c, p);
    EXPECT_TRUE(testing::same_bits(run.model.w.values(), w.values()));
    EXPECT_TRUE(testing::same_bits(run.model.h.values(), h.values()));
    EXPECT_TRUE(testing::same_bits(run.model.row_bias, b));
    EXPECT_TRUE(testing::same_bits(run.model.col_bias, c));
    EXPECT_TRUE(testing::same_bits(run.state.residuals, res));
}

TEST(CcdTrainer, ObjectiveNeverIncreases) {
    const Ratings r = testing::small_ratings(8);
    const CcdRun run = testing::run_ccd_ranks(r, ccd_options(5), 2, 2, 8);
    ASSERT_EQ(run.objectives.size(), 8u);
    for (std::size_t i = 1; i < run.objectives.size(); ++i) {
        EXPECT_LE(run.objectives[i], run.objectives[i - 1] * (1 + 1e-9)) << "iteration " << i;
    }
    EXPECT_LT(run.objectives.back(), run.objectives.front());
    const train::Record& rec = run.records.back();
    EXPECT_EQ(rec.iter, 8u);
    EXPECT_EQ(rec.processed, r.nnz());
    EXPECT_DOUBLE_EQ(rec.processed_ratio, 1.0);
    ASSERT_NE(rec.array("thread_compute_s"), nullptr);
    EXPECT_EQ(rec.array("thread_compute_s")->size(), 2u);
    EXPECT_TRUE(rec.has("train_rmse"));
}

// Planted rank-4 matrix with noise σ: the held-out RMSE approaches σ (as in
// tests/core/mf/test_ccd.cpp, here on 2 threads; other splits give the same model).
TEST(CcdTrainer, RecoversAPlantedMatrix) {
    constexpr double kSigma = 0.1;
    const testing::Planted pl = testing::planted(1000, 800, 4, kSigma, 0.3, 0.05, 31);
    const Ratings r = testing::to_ratings(pl.train);
    TrainOptions o = ccd_options(4);
    o.inner = 3;
    o.objective.lambda = 0.002;
    o.objective.lambda_bias = 0.002;
    const TestRatings test{pl.test.users, pl.test.items, pl.test.values};
    const CcdRun run = testing::run_ccd_ranks(r, o, 1, 2, 10, nullptr, &test);
    const double rmse = *run.records.back().get("test_rmse");
    EXPECT_LT(rmse, 1.05 * kSigma);
    EXPECT_LT(*run.records.back().get("train_rmse"), kSigma);
}

TEST(CcdTrainer, RestoreOnAnotherRankCountContinuesBitwise) {
    const Ratings r = testing::small_ratings(9);
    const TrainOptions o = ccd_options(4);
    const CcdRun whole = testing::run_ccd_ranks(r, o, 1, 2, 5);
    const CcdRun first = testing::run_ccd_ranks(r, o, 3, 1, 2);
    ASSERT_EQ(first.state.iterations_done, 2u);
    ASSERT_EQ(first.state.residuals.size(), r.nnz());
    for (const int ranks : {1, 2, 4}) {
        const CcdRun rest = testing::run_ccd_ranks(r, o, ranks, 2, 3, &first.state);
        expect_bitwise_equal(rest.model, whole.model, fmt::format("restored on {} ranks", ranks));
        EXPECT_EQ(rest.model.iterations, 5u);
        EXPECT_EQ(rest.objectives.back(), whole.objectives.back());
    }
}

TEST(CcdTrainer, RestoreRefusesAStateThatDoesNotFit) {
    const Ratings r = testing::small_ratings(9);
    const CcdRun first = testing::run_ccd_ranks(r, ccd_options(4), 1, 1, 1);
    TrainerState bad = first.state;
    bad.residuals.pop_back();
    EXPECT_THROW(testing::run_ccd_ranks(r, ccd_options(4), 2, 1, 1, &bad), InputError);
    EXPECT_THROW(testing::run_ccd_ranks(r, ccd_options(3), 1, 1, 1, &first.state), InputError);
}

TEST(CcdTrainer, UnseenTestUsersAndItemsGiveFiniteErrors) {
    const Ratings r = testing::small_ratings(10);
    const std::uint32_t n = r.num_users(), m = r.num_items();
    const TestRatings test{
        {0, n, n + 1, 3, 5}, {m, 1, m + 2, 2, 4}, {3.0f, 4.0f, 2.0f, 1.0f, 5.0f}};
    for (const int ranks : {1, 3}) {
        const CcdRun run = testing::run_ccd_ranks(r, ccd_options(3), ranks, 1, 2, nullptr, &test);
        const train::Record& rec = run.records.back();
        ASSERT_TRUE(rec.has("test_rmse"));
        EXPECT_TRUE(std::isfinite(*rec.get("test_rmse")));
        EXPECT_TRUE(std::isfinite(*rec.get("test_mae")));
        EXPECT_GT(*rec.get("test_rmse"), 0.0);
    }
    // Every rank's share counted exactly once: the same errors on 1 and 3 ranks.
    const auto one =
        testing::run_ccd_ranks(r, ccd_options(3), 1, 1, 2, nullptr, &test).records.back();
    const auto three =
        testing::run_ccd_ranks(r, ccd_options(3), 3, 2, 2, nullptr, &test).records.back();
    EXPECT_NEAR(*one.get("test_rmse"), *three.get("test_rmse"), 1e-12);
    EXPECT_NEAR(*one.get("test_mae"), *three.get("test_mae"), 1e-12);
    EXPECT_NEAR(*one.get("objective"), *three.get("objective"), 1e-9 * *one.get("objective"));
}

}  // namespace
}  // namespace rotor::mf
