// The SGD trainer's cases over any communicator: in-process ranks (test_sgd_trainer.cpp, under
// TSan) and MPI ranks under mpiexec (test_sgd_trainer_mpi.cpp). Every case is collective: all
// ranks call it together.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/mf/trainer.h"
#include "comm/communicator.h"
#include "comm/inprocess_communicator.h"
#include "core/mf/ratings.h"
#include "sched/runtime.h"
#include "tests/core/mf/mf_test_util.h"

namespace rotor::mf::testing {

inline constexpr double kSigma = 0.1;

/// A planted rank-4 problem with noise σ = kSigma: training ratings and held-out ones. The
/// default 400 x 300 at 60% density has enough ratings per row and column that SGD from LIBMF's
/// nonnegative start reaches about 1.02 σ in 20 epochs whatever the grid; sparser small problems
/// leave the start's saddle after a number of epochs that varies with the seed and the grid.
struct Problem {
    Ratings train;
    TestRatings test;
};

inline Problem make_problem(std::uint32_t rows = 400, std::uint32_t cols = 300,
                            double density = 0.6, std::uint64_t seed = 31) {
    Planted pl = planted(rows, cols, 4, kSigma, density, 0.05, seed);
    Problem p;
    const std::uint32_t n = pl.train.rows();  // before the arrays move
    p.train = Ratings::from_csr(n, pl.train.cols, std::move(pl.train.offsets),
                                std::move(pl.train.ids), std::move(pl.train.values), "planted");
    p.test.users = std::move(pl.test.users);
    p.test.items = std::move(pl.test.items);
    p.test.values = std::move(pl.test.values);
    return p;
}

/// SGD with the kernel test's λ (small: the planted noise is small), K = 4.
inline TrainOptions sgd_options(std::uint32_t iterations) {
    TrainOptions o;
    o.solver = Solver::kSgd;
    o.rank = 4;
    o.objective.lambda = 0.002;
    o.objective.lambda_bias = 0.002;
    o.iterations = iterations;
    o.seed = 7;
    return o;
}

/// Trains `epochs` epochs over `comm` with `threads` workers; returns the last record, evaluated.
inline train::Record train_epochs(Trainer& t, std::uint32_t epochs) {
    train::Record r;
    for (std::uint32_t e = 0; e < epochs; ++e) r = t.iterate();
    t.evaluate_record(r);
    return r;
}

/// Test RMSE of `epochs` epochs on one rank of its own (every caller computes the same).
inline double one_rank_test_rmse(const Problem& p, const TrainOptions& o, std::uint32_t epochs) {
    comm::InProcessGroup group(1);
    sched::Runtime rt(1, sched::PinMode::kNone);
    auto t = make_trainer({p.train, &p.test, o, rt, group.at(0)});
    return *train_epochs(*t, epochs).get("test_rmse");
}

inline void expect_same_model(const Model& a, const Model& b) {
    EXPECT_TRUE(a.w == b.w);
    EXPECT_TRUE(a.h == b.h);
    EXPECT_EQ(a.row_bias, b.row_bias);
    EXPECT_EQ(a.col_bias, b.col_bias);
    EXPECT_EQ(a.mu, b.mu);
}

inline void expect_same_state(const TrainerState& a, const TrainerState& b) {
    expect_same_model(a.model, b.model);
    EXPECT_EQ(a.w_gsum, b.w_gsum);
    EXPECT_EQ(a.h_gsum, b.h_gsum);
    EXPECT_EQ(a.b_gsum, b.b_gsum);
    EXPECT_EQ(a.c_gsum, b.c_gsum);
    EXPECT_EQ(a.iterations_done, b.iterations_done);
}

/// Without the timer every rating is processed once per epoch, and the ranks converge about as
/// one rank does. With a timer whose first budget is far too short, rounds stop early (processed
/// ratio below 1), every rank keeps the same budget, and the model still converges once EVERY
/// rank has done the work of 20 full epochs over its own ratings (rank_processed_ratio is
/// allgathered, so every rank runs the same epochs). How many epochs that takes depends on the
/// machine's speed and load, so the loop counts work, not epochs: on a loaded machine (load 8 on
/// 2 cores) a fixed 30 epochs, or 20 epochs of work summed over the ranks, left a descheduled
/// rank's users undertrained (test RMSE 0.22-0.58 against 0.2).
inline void case_ring_trains(comm::Communicator& c, bool timer, double one_rank_rmse) {
    const Problem p = make_problem();
    TrainOptions o = sgd_options(20);
    o.timer = timer;
    o.timer_params.initial_s = 1e-4;
    o.timer_params.min_s = 1e-5;
    sched::Runtime rt(1, sched::PinMode::kNone);
    auto t = make_trainer({p.train, &p.test, o, rt, c});
    train::Record r;
    int stopped = 0;
    double first_rmse = 0;
    constexpr double kWork = 20;  // full epochs of its own ratings every rank must do
    constexpr std::uint32_t kMaxEpochs = 2000;
    std::vector<double> done(static_cast<std::size_t>(c.size()), 0.0);  // per rank, in epochs
    const auto least = [&] { return *std::min_element(done.begin(), done.end()); };
    std::uint32_t epochs = 0;
    std::string ratios;  // per epoch, for a failure's message
    for (std::uint32_t e = 0; timer ? least() < kWork && e < kMaxEpochs : e < 20; ++e) {
        epochs = e + 1;
        r = t->iterate();
        if (e == 0) {
            train::Record first = r;
            t->evaluate_record(first);
            first_rmse = *first.get("test_rmse");
        }
        EXPECT_EQ(r.iter, e + 1);
        EXPECT_LE(r.processed, p.train.nnz());
        EXPECT_DOUBLE_EQ(r.processed_ratio, static_cast<double>(r.processed) / p.train.nnz());
        stopped += r.processed < p.train.nnz();
        const std::vector<double>* mine = r.array("rank_processed_ratio");
        ASSERT_NE(mine, nullptr);
        ASSERT_EQ(mine->size(), done.size());
        for (std::size_t k = 0; k < done.size(); ++k) done[k] += (*mine)[k];
        ratios += " " + std::to_string(r.processed_ratio).substr(0, 4);
        if (!timer) {
            EXPECT_EQ(r.processed, p.train.nnz()) << "epoch " << e + 1;
            EXPECT_EQ(*r.get("timer_budget_s"), 0.0);
            continue;
        }
        std::vector<double> budget{*r.get("timer_budget_s"), -*r.get("timer_budget_s")};
        c.allreduce_max(budget);
        EXPECT_EQ(budget[0], -budget[1]) << "the ranks' budgets differ";
    }
    t->evaluate_record(r);
    const double rmse = *r.get("test_rmse");
    EXPECT_TRUE(std::isfinite(*r.get("objective")));
    if (timer) {
        // (A slow machine may process nothing in the first epochs: the budget then doubles.)
        EXPECT_GT(stopped, 0) << "a 0.1 ms first budget stops the first rounds";
        EXPECT_GE(least(), kWork) << "every rank's 20 epochs of work in " << kMaxEpochs;
        EXPECT_LT(rmse, 2 * kSigma) << epochs << " epochs, processed ratios" << ratios;
        EXPECT_LT(rmse, 0.5 * first_rmse);
        return;
    }
    EXPECT_LT(rmse, 1.05 * one_rank_rmse + 0.005) << "one rank: " << one_rank_rmse;
    EXPECT_LT(rmse, 1.2 * kSigma);
    EXPECT_LT(*r.get("train_rmse"), 1.2 * kSigma);
}

/// Held-out ratings of unseen users and items (indices >= N, >= M) appended to p's test set.
inline void add_unseen(Problem& p) {
    const std::uint32_t n = p.train.num_users(), m = p.train.num_items();
    const std::uint32_t users[] = {n, 0, n + 3};
    const std::uint32_t items[] = {0, m + 1, m + 3};
    const float values[] = {3.5f, 2.0f, 4.0f};
    for (int t = 0; t < 3; ++t) {
        p.test.users.push_back(users[t]);
        p.test.items.push_back(items[t]);
        p.test.values.push_back(values[t]);
    }
}

/// Σ (a − â)² of a model over every training rating.
inline double squared_error_of(const Model& m, const Ratings& a) {
    double sq = 0;
    for (std::uint32_t u = 0; u < a.num_users(); ++u) {
        const auto items = a.items_of(u);
        const auto values = a.values_of_user(u);
        for (std::size_t k = 0; k < items.size(); ++k) {
            const double e = values[k] - m.view().predict(u, items[k]);
            sq += e * e;
        }
    }
    return sq;
}

/// The initial model does not depend on the split, and gather_model places every row: before
/// training, P ranks gather bitwise one rank's model; after, every value is finite and the ranks'
/// evaluation (test ratings of unseen users and items included) is the gathered model's.
inline void case_gather_model(comm::Communicator& c) {
    Problem p = make_problem(120, 90);
    add_unseen(p);
    const TrainOptions o = sgd_options(1);
    sched::Runtime rt(1, sched::PinMode::kNone);
    auto t = make_trainer({p.train, &p.test, o, rt, c});
    comm::InProcessGroup group(1);
    auto one = make_trainer({p.train, &p.test, o, rt, group.at(0)});
    const Model first = t->gather_model();
    if (c.rank() == 0) {
        expect_same_model(first, one->gather_model());
        EXPECT_EQ(first.solver, "sgd");
        EXPECT_EQ(first.w.rows(), p.train.num_users());
        EXPECT_EQ(first.h.rows(), p.train.num_items());
    } else {
        EXPECT_EQ(first.w.rows(), 0u);
    }
    train::Record r = t->iterate();
    t->evaluate_record(r);
    const Model m = t->gather_model();
    if (c.rank() != 0) return;
    EXPECT_EQ(m.iterations, 1u);
    EXPECT_EQ(m.row_bias.size(), p.train.num_users());
    EXPECT_EQ(m.col_bias.size(), p.train.num_items());
    int changed = 0;
    for (std::uint32_t u = 0; u < m.w.rows(); ++u) changed += m.w.row(u)[0] != first.w.row(u)[0];
    EXPECT_EQ(changed, static_cast<int>(m.w.rows())) << "every user has ratings: every row moves";
    for (const float x : m.h.values()) ASSERT_TRUE(std::isfinite(x));
    const ErrorStats test = evaluate(p.test.users, p.test.items, p.test.values, m.view());
    EXPECT_NEAR(*r.get("test_rmse"), test.rmse, 1e-9 * test.rmse);
    EXPECT_NEAR(*r.get("test_mae"), test.mae, 1e-9 * test.mae);
    const double sq = squared_error_of(m, p.train);
    EXPECT_NEAR(*r.get("train_rmse"), std::sqrt(sq / p.train.nnz()), 1e-9);
    EXPECT_GT(*r.get("objective"), sq);
}

/// `state` (from any rank count) restored here gives it back bitwise through gather_state (the
/// timer's budget too, with more than one rank), and training continues to a good model (without
/// the timer, whose budget would make the result depend on the machine's speed).
inline void case_restore_and_continue(comm::Communicator& c, const TrainerState& state,
                                      const Problem& p) {
    TrainOptions o = sgd_options(6);
    sched::Runtime rt(1, sched::PinMode::kNone);
    {
        auto t = make_trainer({p.train, &p.test, o, rt, c});
        t->restore(state);
        EXPECT_EQ(t->iterations_done(), state.iterations_done);
        const TrainerState back = t->gather_state();
        if (c.rank() == 0) {
            expect_same_state(back, state);
            if (c.size() > 1 && state.timer_budget > 0) {
                EXPECT_EQ(back.timer_budget, state.timer_budget);
            }
        }
    }
    o.timer = false;
    auto t = make_trainer({p.train, &p.test, o, rt, c});
    t->restore(state);
    const train::Record r = train_epochs(*t, 14);
    EXPECT_EQ(r.iter, state.iterations_done + 14);
    EXPECT_LT(*r.get("test_rmse"), 1.2 * kSigma);
}

}  // namespace rotor::mf::testing
