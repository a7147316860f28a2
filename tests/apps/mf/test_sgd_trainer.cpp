// The SGD trainer (apps/mf/sgd_trainer.h) on one rank and on 2 and 3 in-process ranks: bitwise
// reproducibility with --deterministic, the dynamic scheduler's exclusivity (under TSan), planted
// recovery, the ring with and without the timer, the gathered model and state round trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <vector>

#include "apps/mf/sgd_trainer.h"
#include "apps/mf/trainer.h"
#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/mf/sgd.h"
#include "sched/runtime.h"
#include "tests/apps/mf/sgd_test_cases.h"

namespace rotor::mf {
namespace {

using namespace rotor::mf::testing;

/// One rank with `threads` workers over its own one-rank communicator.
struct Local {
    Local(const Problem& p, const TrainOptions& o, int threads)
        : rt(threads, sched::PinMode::kNone),
          trainer(make_trainer({p.train, &p.test, o, rt, group.at(0)})) {}
    comm::InProcessGroup group{1};
    sched::Runtime rt;
    std::unique_ptr<Trainer> trainer;
};

TEST(SgdTrainer, DeterministicGivesTheSameModelAtAnyThreadCount) {
    const Problem p = make_problem(200, 150);
    TrainOptions o = sgd_options(4);
    o.deterministic = true;
    std::optional<Model> first;
    for (const int threads : {1, 2, 4}) {
        Local run(p, o, threads);
        for (int e = 0; e < 4; ++e) EXPECT_EQ(run.trainer->iterate().processed, p.train.nnz());
        const Model m = run.trainer->gather_model();
        if (!first) {
            first = m;
        } else {
            SCOPED_TRACE(threads);
            expect_same_model(m, *first);
        }
    }
}

// The CLI lets the trainer release the matrix as its blocks fill: the same model, the matrix's
// shape left (one rank: neither values nor items, since the trainer gives the model its items
// back from its blocks, as the matrix had them).
TEST(SgdTrainer, ReleasingTheMatrixChangesNothing) {
    const Problem p = make_problem(120, 90);
    TrainOptions o = sgd_options(4);
    o.deterministic = true;
    Local kept(p, o, 2);
    Ratings owned = p.train;
    comm::InProcessGroup group(1);
    sched::Runtime rt(2, sched::PinMode::kNone);
    const std::unique_ptr<Trainer> released =
        make_trainer({owned, &p.test, o, rt, group.at(0), &owned});
    EXPECT_TRUE(owned.user_values().empty());
    EXPECT_TRUE(owned.user_items().empty());
    EXPECT_EQ(owned.nnz(), p.train.nnz());
    EXPECT_EQ(owned.num_users(), p.train.num_users());
    for (int e = 0; e < 2; ++e) {
        kept.trainer->iterate();
        released->iterate();
    }
    expect_same_model(released->gather_model(), kept.trainer->gather_model());
    ASSERT_TRUE(released->gives_seen_items());
    const auto [offsets, items] = released->release_seen_items();
    EXPECT_TRUE(std::equal(offsets.begin(), offsets.end(), p.train.user_offsets().begin(),
                           p.train.user_offsets().end()));
    EXPECT_TRUE(std::equal(items.begin(), items.end(), p.train.user_items().begin(),
                           p.train.user_items().end()));
}

// A block's rating packs its row and column offsets into 32 bits; a row group with more rows
// than the column group's width leaves room for is cut into pages (segments). 70,000 users in
// one row group and 70,000 items in one column group (--blocks 1): 17 bits for the column,
// pages of 2^15 rows, three of them. The epochs must be plain SGD over the ratings in user, then
// item order from the trainer's start (the scalar sgd_update, which gives the kernel's bits).
TEST(SgdTrainer, RowGroupsWiderThanAKeyAreCutIntoPages) {
    constexpr std::uint32_t kN = 70000, kM = 70000;
    std::vector<RatingTriple> t;
    Rng rng(5);
    for (std::uint32_t u = 0; u < kN; u += 1 + static_cast<std::uint32_t>(rng.below(3)))
        for (int r = 0; r < 3; ++r)
            t.push_back({u, static_cast<std::uint32_t>((u * 7919ull + 104729ull * r) % kM),
                         static_cast<float>(1 + rng.below(5))});
    t.push_back({kN - 1, kM - 1, 2.0f});  // the last row and column used: full widths
    const Ratings train = Ratings::from_triples(kN, kM, t);
    TrainOptions o = sgd_options(2);
    o.rank = 3;
    o.blocks = 1;
    o.deterministic = true;
    comm::InProcessGroup group(1);
    sched::Runtime rt(1, sched::PinMode::kNone);
    const std::unique_ptr<Trainer> trainer = make_trainer({train, nullptr, o, rt, group.at(0)});
    for (std::uint32_t e = 0; e < o.iterations; ++e)
        EXPECT_EQ(trainer->iterate().processed, train.nnz());
    const Model m = trainer->gather_model();

    const auto high = static_cast<float>(1.0 / std::sqrt(3.0));  // the trainer's 1/sqrt(K)
    std::vector<std::uint32_t> users(kN), items(kM);
    std::iota(users.begin(), users.end(), 0u);
    std::iota(items.begin(), items.end(), 0u);
    Factors w(kN, 3), h(kM, 3);
    w.init_uniform(o.seed, detail::kSgdInitWStream, 0.0f, high, users);
    h.init_uniform(o.seed, detail::kSgdInitHStream, 0.0f, high, items);
    SgdState ws(kN, true), hs(kM, true);
    SgdSide rows = ws.side(w), cols = hs.side(h);
    const double mu = rating_sum(train.user_values()).value() / static_cast<double>(train.nnz());
    for (std::uint32_t e = 0; e < o.iterations; ++e)
        for (std::uint32_t u = 0; u < kN; ++u) {
            const auto its = train.items_of(u);
            const auto vals = train.values_of_user(u);
            for (std::size_t i = 0; i < its.size(); ++i)
                sgd_update(u, its[i], vals[i], rows, cols, mu, o.sgd());
        }
    EXPECT_TRUE(m.w == w);
    EXPECT_TRUE(m.h == h);
    EXPECT_EQ(m.row_bias, ws.bias);
    EXPECT_EQ(m.col_bias, hs.bias);
}

TEST(SgdTrainer, DeterministicRestoreContinuesBitwise) {
    const Problem p = make_problem(200, 150);
    TrainOptions o = sgd_options(4);
    o.deterministic = true;
    Local straight(p, o, 2);
    for (int e = 0; e < 4; ++e) straight.trainer->iterate();
    TrainerState half;
    {
        Local first(p, o, 2);
        for (int e = 0; e < 2; ++e) first.trainer->iterate();
        half = first.trainer->gather_state();
    }
    Local second(p, o, 2);
    second.trainer->restore(half);
    for (int e = 0; e < 2; ++e) second.trainer->iterate();
    expect_same_state(second.trainer->gather_state(), straight.trainer->gather_state());
}

bool overlaps(const train::BlockRun& a, const train::BlockRun& b) {
    return a.start_s < b.end_s && b.start_s < a.end_s;
}

TEST(SgdTrainer, DynamicSchedulerNeverRunsBlocksSharingARowOrColumnAtOnce) {
    const Problem p = make_problem(300, 200);
    TrainOptions o = sgd_options(4);
    o.record_schedule = true;
    o.blocks = 4;
    Local run(p, o, 3);
    // One epoch, then three pipelined ones (a block of the next epoch may start while the last
    // blocks of the previous one run, never on the same row or column).
    EXPECT_EQ(run.trainer->iterate().processed, p.train.nnz());
    std::vector<std::uint32_t> early;
    const train::Record last = run.trainer->iterate_span(3, [&](train::Record& r) {
        early.push_back(r.iter);
        EXPECT_EQ(r.processed, p.train.nnz());
    });
    EXPECT_EQ(early, (std::vector<std::uint32_t>{2, 3}));
    EXPECT_EQ(last.iter, 4u);
    EXPECT_EQ(last.processed, p.train.nnz());
    EXPECT_EQ(run.trainer->iterations_done(), 4u);
    const auto schedule = run.trainer->gather_schedule();
    ASSERT_EQ(schedule.size(), 1u);
    const std::vector<train::BlockRun>& runs = schedule[0];
    EXPECT_EQ(runs.size(), 4u * 16u) << "every block once per epoch";
    for (std::uint32_t e = 1; e <= 4; ++e)
        EXPECT_EQ(std::count_if(runs.begin(), runs.end(),
                                [e](const train::BlockRun& b) { return b.iter == e; }),
                  16)
            << "epoch " << e;
    int conflicts = 0;
    for (std::size_t a = 0; a < runs.size(); ++a) {
        for (std::size_t b = a + 1; b < runs.size(); ++b) {
            const bool shared = runs[a].row == runs[b].row || runs[a].col == runs[b].col;
            if (shared && overlaps(runs[a], runs[b])) ++conflicts;
        }
    }
    EXPECT_EQ(conflicts, 0);
}

TEST(SgdTrainer, RecoversAPlantedMatrixWithinFivePercentOfSigma) {
    // The kernel test's problem (docs/mf.md, "Measurements"): enough ratings per row and column
    // that the estimate's error is small beside σ.
    const Problem p = make_problem(1000, 800, 0.3);
    Local run(p, sgd_options(20), 2);
    const train::Record r = train_epochs(*run.trainer, 20);
    EXPECT_LT(*r.get("test_rmse"), 1.05 * kSigma) << "train RMSE " << *r.get("train_rmse");
    EXPECT_GT(*r.get("test_mae"), 0.0);
    EXPECT_EQ(run.trainer->iterations_done(), 20u);
    std::printf("planted: test RMSE %.4f\n", *r.get("test_rmse"));
}

TEST(SgdTrainer, EvaluationMatchesTheGatheredModel) {
    Problem p = make_problem(120, 90);
    add_unseen(p);
    Local run(p, sgd_options(3), 2);
    train::Record r = train_epochs(*run.trainer, 3);
    const Model m = run.trainer->gather_model();
    const ErrorStats test = evaluate(p.test.users, p.test.items, p.test.values, m.view());
    EXPECT_NEAR(*r.get("test_rmse"), test.rmse, 1e-12);
    EXPECT_NEAR(*r.get("test_mae"), test.mae, 1e-12);
    const double sq = squared_error_of(m, p.train);
    EXPECT_NEAR(*r.get("train_rmse"), std::sqrt(sq / p.train.nnz()), 1e-9);
    std::vector<std::uint64_t> items(p.train.num_items());
    for (std::uint32_t j = 0; j < p.train.num_items(); ++j) items[j] = p.train.item_degree(j);
    std::vector<std::uint64_t> users(p.train.num_users());
    for (std::uint32_t u = 0; u < p.train.num_users(); ++u) users[u] = p.train.user_degree(u);
    const ObjectiveParams& o = m.params;
    const double f = sq + penalty(m.w, m.row_bias, users, o) + penalty(m.h, m.col_bias, items, o);
    EXPECT_NEAR(*r.get("objective"), f, 1e-9 * f);
}

TEST(SgdTrainer, RefusesDeterministicOnSeveralRanksAndABadState) {
    const Problem p = make_problem(60, 40);
    TrainOptions o = sgd_options(1);
    o.deterministic = true;
    comm::run_ranks(2, [&](comm::Communicator& c) {
        sched::Runtime rt(1, sched::PinMode::kNone);
        EXPECT_THROW(make_trainer({p.train, &p.test, o, rt, c}), ConfigError);
    });
    Local run(p, sgd_options(1), 1);
    TrainerState s = run.trainer->gather_state();
    s.h_gsum.pop_back();
    EXPECT_THROW(run.trainer->restore(s), InputError);
}

class SgdRanks : public ::testing::TestWithParam<int> {};

TEST_P(SgdRanks, RingWithoutTimerProcessesEveryRatingAndConverges) {
    const Problem p = make_problem();
    TrainOptions o = sgd_options(20);
    const double one = one_rank_test_rmse(p, o, 20);
    comm::run_ranks(GetParam(), [&](comm::Communicator& c) { case_ring_trains(c, false, one); });
}

TEST_P(SgdRanks, RingWithTimerConverges) {
    const Problem p = make_problem();
    const double one = one_rank_test_rmse(p, sgd_options(20), 20);
    comm::run_ranks(GetParam(), [&](comm::Communicator& c) { case_ring_trains(c, true, one); });
}

TEST_P(SgdRanks, GatheredModelIsWhole) {
    comm::run_ranks(GetParam(), [](comm::Communicator& c) { case_gather_model(c); });
}

TEST_P(SgdRanks, StateRestoresOnAnotherRankCount) {
    const Problem p = make_problem();
    TrainerState state;
    comm::run_ranks(GetParam(), [&](comm::Communicator& c) {
        sched::Runtime rt(1, sched::PinMode::kNone);
        auto t = make_trainer({p.train, &p.test, sgd_options(6), rt, c});
        for (int e = 0; e < 6; ++e) t->iterate();
        TrainerState s = t->gather_state();
        if (c.rank() == 0) state = std::move(s);
    });
    ASSERT_EQ(state.iterations_done, 6u);
    for (const int ranks : {1, GetParam() == 2 ? 3 : 2}) {
        SCOPED_TRACE(ranks);
        comm::run_ranks(ranks,
                        [&](comm::Communicator& c) { case_restore_and_continue(c, state, p); });
    }
}

INSTANTIATE_TEST_SUITE_P(Ranks, SgdRanks, ::testing::Values(2, 3));

// The memory plan by phase (trainer.cpp): at small K sgd's peak is reading, 20 bytes a rating (the
// triples while they are sorted into the CSR; building the trainer takes 8: the blocks fill in
// the place of the CSR), below ccd's, which keeps the matrix and a copy of its users' ratings; at
// large K the factors and the gathered model take over.
TEST(SgdMemoryPlan, RatingsDominateAtSmallKFactorsAtLargeK) {
    const auto ratings = [](std::uint32_t n) {
        std::vector<RatingTriple> t;
        for (std::uint32_t u = 0; u < n; ++u)
            for (std::uint32_t i = 0; i < 20; ++i) t.push_back({u, (u + 7 * i) % 500, 1.0f});
        return Ratings::from_triples(n, 500, t);
    };
    const Ratings small = ratings(1000), big = ratings(2000);
    TrainOptions sgd;
    sgd.rank = 4;
    TrainOptions ccd = sgd;
    ccd.solver = Solver::kCcd;
    // 20,000 more ratings and 1,000 more users: 20 bytes a rating and 16 a user while reading
    // (the triples and the CSR, the user counts and offsets).
    EXPECT_EQ(estimate_memory(big, sgd, 1, 2) - estimate_memory(small, sgd, 1, 2),
              20u * 20000 + 16u * 1000);
    EXPECT_LT(estimate_memory(big, sgd, 1, 2), estimate_memory(big, ccd, 1, 2));
    TrainOptions wide = sgd;
    wide.rank = 512;
    // At K = 512 the end of training is the peak: W's rows, H and the gathered model (4 K bytes a
    // row: N + M + (N + M) rows; one rank evaluates against its slice, no gathered H), far above
    // the 20 bytes a rating.
    const std::uint64_t n = 2000, m = 500, k = 512;
    EXPECT_GE(estimate_memory(big, wide, 1, 2),
              (std::uint64_t{12} << 20) + 4 * k * (n + 1) + 4 * k * m + 4 * k * (n + m));
}

}  // namespace
}  // namespace rotor::mf
