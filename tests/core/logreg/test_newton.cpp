// The newGLMNET solver (core/logreg/newton.h): the block proximal gradient's optimum, the
// stopping rule, the cap, determinism.
#include "core/logreg/newton.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/logreg/block_prox.h"
#include "tests/core/logreg/logreg_test_util.h"

namespace rotor::logreg {
namespace {

/// Σ log-loss + λ‖w‖₁ of a part's margins and w over its keys.
double objective_of(const Shard& part, std::span<const double> w, double lambda) {
    core::ExactSum loss;
    push_loss(part, loss);
    return loss.value() + penalty(part.keys(), w, lambda);
}

// Both solvers to their optimum (newton's rule at 1e-10, block prox 3,000 passes of local
// steps): the same objective to 1e-10 and the same weights to 1e-5, the intercept unpenalised
// and the zeros the same.
TEST(Newton, ReachesTheBlockProximalGradientsOptimum) {
    const Examples ex = testing::synthetic_examples(300, 40, 6, 7);
    for (const bool intercept : {false, true}) {
        Shard a(ex, intercept);
        NewtonOptions no;
        no.lambda = 1.5;
        no.tol = 1e-8;
        NewtonSolver newton(a, no);
        ASSERT_EQ(newton.run(), NewtonStop::kConverged);
        EXPECT_LT(newton.status().iteration, 40U);
        std::vector<Shard> b{Shard(ex, intercept)};
        BlockProxOptions bo;
        bo.lambda = 1.5;
        bo.blocks = 4;
        bo.curvature = Curvature::kLocal;
        bo.max_step = 1;
        BlockProx prox(b, bo);
        for (std::uint64_t t = 0; t < 3000 * bo.blocks; ++t) prox.step(t);
        const ProxEvaluation pe = prox.evaluate();
        ASSERT_LT(pe.kkt_violation, 1e-8);
        const double fn = objective_of(a, newton.weights(), no.lambda);
        EXPECT_NEAR(fn, pe.objective, 1e-10 * pe.objective) << "intercept " << intercept;
        ASSERT_EQ(a.keys().size(), prox.keys().size());
        std::size_t zeros = 0;
        for (std::size_t k = 0; k < a.keys().size(); ++k) {
            EXPECT_NEAR(newton.weights()[k], prox.weights()[k], 1e-5) << k;
            EXPECT_EQ(newton.weights()[k] == 0, prox.weights()[k] == 0) << k;
            zeros += newton.weights()[k] == 0 ? 1 : 0;
        }
        EXPECT_GT(zeros, 3U);  // the L1 penalty is active
        // The margins are x_iᵀw of the weights returned.
        Shard c(ex, intercept);
        set_margins(c, c.keys(), newton.weights());
        for (std::size_t i = 0; i < c.margins().size(); ++i)
            EXPECT_EQ(a.margins()[i], c.margins()[i]);
    }
}

// The rule stops at the first Newton iteration meeting it (the one before did not), and a
// cap stops after exactly that many; the same options give the same bits.
TEST(Newton, StopsByTheRuleOrAtTheCap) {
    const Examples ex = testing::synthetic_examples(200, 30, 5, 3);
    std::vector<NewtonStatus> seen;
    Shard a(ex, true);
    NewtonOptions o;
    o.lambda = 1;
    o.tol = 1e-3;
    NewtonSolver newton(a, o);
    ASSERT_EQ(newton.run([&](const NewtonStatus& s) { seen.push_back(s); }),
              NewtonStop::kConverged);
    ASSERT_GE(seen.size(), 3U);
    EXPECT_LE(seen.back().subgradient, 1e-3 * seen.back().zero);
    EXPECT_GT(seen.end()[-2].subgradient, 1e-3 * seen.end()[-2].zero);
    EXPECT_EQ(seen.front().subgradient, seen.front().zero);
    for (std::size_t i = 1; i < seen.size(); ++i)
        EXPECT_LT(seen[i].objective, seen[i - 1].objective);  // Armijo: every step descends
    Shard b(ex, true);
    o.max_iterations = 2;
    o.tol = 1e-12;
    NewtonSolver capped(b, o);
    EXPECT_EQ(capped.run(), NewtonStop::kIterations);
    EXPECT_EQ(capped.status().iteration, 2U);
    EXPECT_EQ(capped.status().subgradient, seen[2].subgradient);  // deterministic
}

// λ_max (objective.h) is the top of a path: at it the only nonzero weight is the intercept (its
// optimum log(p / (1 − p))), just below it a feature enters; with and without the intercept.
TEST(Newton, LambdaMaxIsWhereTheFirstWeightEnters) {
    const Examples ex = testing::synthetic_examples(300, 40, 6, 11);
    for (const bool intercept : {false, true}) {
        Shard a(ex, intercept);
        const double top = lambda_max(a);
        ASSERT_GT(top, 0);
        NewtonOptions o;
        o.tol = 1e-10;
        o.lambda = top;
        NewtonSolver at(a, o);
        ASSERT_EQ(at.run(), NewtonStop::kConverged);
        for (std::size_t k = 0; k < a.keys().size(); ++k) {
            if (a.keys()[k] == kInterceptKey) {
                const auto pos = std::count(ex.labels.begin(), ex.labels.end(), std::int8_t{1});
                const double p = double(pos) / double(ex.size());
                EXPECT_NEAR(at.weights()[k], std::log(p / (1 - p)), 1e-6);
            } else {
                EXPECT_EQ(at.weights()[k], 0) << k;
            }
        }
        o.lambda = 0.95 * top;
        o.tol = 1e-6;  // ‖∇^S F(0)‖₁ is small this near λ_max: 1e-10 of it is below rounding
        Shard b(ex, intercept);
        NewtonSolver below(b, o);
        ASSERT_EQ(below.run(), NewtonStop::kConverged);
        std::size_t entered = 0;
        for (std::size_t k = 0; k < b.keys().size(); ++k)
            entered += b.keys()[k] != kInterceptKey && below.weights()[k] != 0 ? 1 : 0;
        EXPECT_GE(entered, 1U) << "intercept " << intercept;
    }
}

// A warm start (set_lambda) down a path reaches each λ's optimum: the objective of a run from
// w = 0 to 1e-9 (both at --tol 1e-7), in fewer Newton iterations over the path; its stopping
// rule is the cold run's (the reference ‖∇^S F(0)‖₁ of the new λ).
TEST(Newton, WarmStartReachesTheColdStartsObjective) {
    const Examples ex = testing::synthetic_examples(400, 60, 8, 5);
    Shard warm_part(ex, true);
    const double top = lambda_max(warm_part);
    NewtonOptions o;
    o.tol = 1e-7;
    o.lambda = top;
    NewtonSolver warm(warm_part, o);
    std::uint64_t warm_iterations = 0, cold_iterations = 0;
    for (int k = 0; k < 8; ++k) {
        const double lambda = top * std::pow(0.5, k);
        warm.set_lambda(lambda);
        ASSERT_EQ(warm.run(), NewtonStop::kConverged);
        warm_iterations += warm.status().iteration;
        Shard cold_part(ex, true);
        o.lambda = lambda;
        NewtonSolver cold(cold_part, o);
        ASSERT_EQ(cold.run(), NewtonStop::kConverged);
        cold_iterations += cold.status().iteration;
        EXPECT_EQ(warm.status().zero, cold.status().zero) << lambda;
        const double fw = objective_of(warm_part, warm.weights(), lambda);
        const double fc = objective_of(cold_part, cold.weights(), lambda);
        EXPECT_NEAR(fw, fc, 1e-9 * fc) << lambda;
    }
    EXPECT_LT(warm_iterations, cold_iterations);
}

}  // namespace
}  // namespace rotor::logreg
