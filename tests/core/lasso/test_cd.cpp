// Tests of the coordinate update as push/pull: the closed form, 1 part vs 3 parts bitwise, the
// residuals kept current, cyclic convergence to the KKT conditions and a zero gap.
#include "core/lasso/cd.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "core/base/rng.h"
#include "core/lasso/objective.h"
#include "tests/core/lasso/lasso_test_util.h"

namespace rotor::lasso {
namespace {

using testing::dense_z;
using testing::random_data;
using testing::Split;

std::vector<std::uint32_t> all_coords(std::uint32_t p) {
    std::vector<std::uint32_t> c(p);
    std::iota(c.begin(), c.end(), 0u);
    return c;
}

/// f(b) = 1/(2N) ‖ỹ − Z b‖² + λ̃ ‖b‖₁ computed densely, independently of the kernels.
double dense_f(const Design& d, const std::vector<double>& z, std::span<const double> b,
               double lambda_tilde) {
    const std::uint32_t n = d.samples(), p = d.features();
    double rr = 0, l1 = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        double r = d.targets()[i];
        for (std::uint32_t j = 0; j < p; ++j) r -= z[std::size_t{i} * p + j] * b[j];
        rr += r * r;
    }
    for (double x : b) l1 += std::fabs(x);
    return rr / (2 * n) + lambda_tilde * l1;
}

TEST(SoftThreshold, ClosedForm) {
    EXPECT_EQ(soft_threshold(3, 1), 2);
    EXPECT_EQ(soft_threshold(-3, 1), -2);
    EXPECT_EQ(soft_threshold(0.5, 1), 0);
    EXPECT_EQ(soft_threshold(-1, 1), 0);
    EXPECT_EQ(coordinate_update(1, 0.5, 2, 1), 1.5 / 2);  // S(2·1 + 0.5, 1) / 2
    EXPECT_EQ(coordinate_update(5, 9, 0, 1), 0);          // constant column
}

TEST(ParallelRound, EachCoordinateIsTheClosedFormFromTheSameResidual) {
    for (const double density : {0.3, 1.0}) {
        const Design d = build_design(random_data(60, 10, density, 3, 7));
        const ProblemView pv = ProblemView::of(d);
        const std::vector<double> z = dense_z(d);
        Split s(d, 1);
        Coefficients c(d.features());
        const double lambda = 0.05;
        const double lt = lambda / pv.y_scale;
        const std::vector<std::uint32_t> warm = all_coords(10);
        sequential_round(s.views, pv, lambda, warm, c);  // a state with nonzeros
        const std::vector<double> before(c.b.begin(), c.b.end());
        // Expected: b_j' = S(d_j b_j + z_jᵀ r / N, λ̃) / d_j with r = ỹ − Z b, densely.
        std::vector<double> r(d.targets().begin(), d.targets().end());
        for (std::uint32_t i = 0; i < 60; ++i) {
            for (std::uint32_t j = 0; j < 10; ++j) r[i] -= z[i * 10 + j] * before[j];
        }
        const std::vector<std::uint32_t> set{7, 2, 9, 4};
        std::vector<double> expected = before;
        for (std::uint32_t j : set) {
            double g = 0;
            for (std::uint32_t i = 0; i < 60; ++i) g += z[i * 10 + j] * r[i];
            g /= 60;
            expected[j] = soft_threshold(d.sq_norms()[j] * before[j] + g, lt) / d.sq_norms()[j];
        }
        parallel_round(s.views, pv, lambda, set, c);
        for (std::uint32_t j = 0; j < 10; ++j) EXPECT_NEAR(c.b[j], expected[j], 1e-12) << j;
        for (std::uint32_t j : set) EXPECT_EQ(c.last_delta[j], c.b[j] - before[j]);

        // A single-coordinate update is the exact 1-D minimiser: no nearby value does better.
        const std::uint32_t one = 3;
        parallel_round(s.views, pv, lambda, {&one, 1}, c);
        const double f0 = dense_f(d, z, c.b, lt);
        for (const double eps : {1e-6, -1e-6}) {
            std::vector<double> moved(c.b.begin(), c.b.end());
            moved[one] += eps;
            EXPECT_GT(dense_f(d, z, moved, lt), f0 - 1e-15) << eps;
        }
    }
}

TEST(ParallelRound, ResidualsAndOffsetStayCurrent) {
    const Design d = build_design(random_data(50, 12, 0.3, 4, 8));
    const ProblemView pv = ProblemView::of(d);
    Split s(d, 2);
    Coefficients c(d.features());
    Rng rng(3);
    for (int round = 0; round < 30; ++round) {
        std::vector<std::uint32_t> set = all_coords(12);
        std::shuffle(set.begin(), set.end(), rng);
        set.resize(4);
        parallel_round(s.views, pv, 0.02, set, c);
    }
    EXPECT_GT(c.nonzeros(), 0u);
    Split fresh(d, 2);
    for (std::size_t q = 0; q < 2; ++q) init_residuals(fresh.views[q], c.b);
    const std::vector<double> want = fresh.all_residuals(), got = s.all_residuals();
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
    const double kept = c.offset;
    set_offset(pv, c);
    EXPECT_NEAR(kept, c.offset, 1e-12);
}

TEST(ParallelRound, OnePartAndThreePartsAreBitwiseEqual) {
    for (const double density : {0.2, 1.0}) {
        const Design d = build_design(random_data(47, 15, density, 5, 9));
        const ProblemView pv = ProblemView::of(d);
        Split one(d, 1), three(d, 3);
        Coefficients c1(d.features()), c3(d.features());
        Rng rng(11);
        for (int round = 0; round < 40; ++round) {
            std::vector<std::uint32_t> set = all_coords(15);
            std::shuffle(set.begin(), set.end(), rng);
            set.resize(1 + rng.below(6));
            parallel_round(one.views, pv, 0.01, set, c1);
            parallel_round(three.views, pv, 0.01, set, c3);
        }
        sequential_round(one.views, pv, 0.01, all_coords(15), c1);
        sequential_round(three.views, pv, 0.01, all_coords(15), c3);
        EXPECT_EQ(c1.b, c3.b);  // bitwise: operator== on doubles
        EXPECT_EQ(c1.last_delta, c3.last_delta);
        EXPECT_EQ(c1.offset, c3.offset);
        EXPECT_EQ(one.all_residuals(), three.all_residuals());
        const Evaluation e1 = evaluate(one.views, pv, 0.01, c1);
        const Evaluation e3 = evaluate(three.views, pv, 0.01, c3);
        EXPECT_EQ(e1.objective, e3.objective);
        EXPECT_EQ(e1.gap, e3.gap);
        EXPECT_EQ(e1.kkt_violation, e3.kkt_violation);
    }
}

/// A round's pull after one warm-up round: 80 samples, 12 features in 2 parts, seven coordinates
/// in no order, their gradients pushed from both parts.
struct PullRange : ::testing::Test {
    PullRange() {
        sequential_round(s.views, pv, lambda, all_coords(12), warm);
        for (const PartView& v : s.views) push_gradients(v, coords, total);
    }
    const Design d = build_design(random_data(80, 12, 0.4, 3, 17));
    const ProblemView pv = ProblemView::of(d);
    Split s{d, 2};
    const double lambda = 0.02;
    Coefficients warm{12};
    const std::vector<std::uint32_t> coords = {7, 2, 11, 0, 5, 9, 3};
    std::vector<core::ExactSum> total = std::vector<core::ExactSum>(coords.size());
};

TEST_F(PullRange, RangesInAnyOrderArePullUpdatesBitForBit) {
    Coefficients expect = warm;
    std::vector<double> expect_deltas(coords.size());
    const std::uint32_t changed = pull_updates(pv, lambda, coords, total, expect, expect_deltas);
    ASSERT_GT(changed, 0u);
    // Three ranges, the last first (as threads may finish), then the offset in order.
    Coefficients got = warm;
    std::vector<double> deltas(coords.size()), shift_deltas(coords.size());
    const double q_sum = residual_sum(pv, got);
    PullStats all;
    for (const auto& [lo, hi] : {std::pair<std::size_t, std::size_t>{5, 7}, {0, 2}, {2, 5}}) {
        const PullStats st =
            pull_range(pv, lambda, q_sum, coords, total, lo, hi, got, deltas, shift_deltas);
        all.changed += st.changed;
        all.largest = std::max(all.largest, st.largest);
    }
    add_offset_changes(shift_deltas, got);
    EXPECT_EQ(all.changed, changed);
    EXPECT_EQ(deltas, expect_deltas);
    EXPECT_EQ(got.b, expect.b);
    EXPECT_EQ(got.last_delta, expect.last_delta);
    EXPECT_EQ(got.offset, expect.offset);
    double largest = 0;
    for (std::size_t t = 0; t < coords.size(); ++t) {
        const double dl = expect_deltas[t];
        largest = std::max(largest, pv.sq_norms[coords[t]] * dl * dl);
    }
    EXPECT_EQ(all.largest, largest);
    EXPECT_GT(largest, 0);
}

// A rank pulls its share of a round and applies the others' changes: the same bits as pulling
// every coordinate.
TEST_F(PullRange, AppliedChangesOfOtherRangesArePullUpdatesBitForBit) {
    const double q_sum = residual_sum(pv, warm);
    Coefficients expect = warm;
    std::vector<double> expect_deltas(coords.size()), expect_shifts(coords.size());
    const PullStats whole = pull_range(pv, lambda, q_sum, coords, total, 0, coords.size(), expect,
                                       expect_deltas, expect_shifts);
    ASSERT_GT(whole.changed, 0u);
    Coefficients got = warm;
    std::vector<double> deltas(coords.size()), shift_deltas(coords.size());
    const PullStats mine =
        pull_range(pv, lambda, q_sum, coords, total, 2, 5, got, deltas, shift_deltas);
    for (std::size_t t : {0, 1, 5, 6}) deltas[t] = expect_deltas[t];  // the other ranks' shares
    const std::uint32_t a = apply_pulled(coords, 0, 2, deltas, got);
    const std::uint32_t b = apply_pulled(coords, 5, 7, deltas, got);
    EXPECT_EQ(mine.changed + a + b, whole.changed);
    EXPECT_EQ(deltas, expect_deltas);
    // The pulled share's shift changes are the whole pull's (the others' come from their ranks).
    for (std::size_t t = 2; t < 5; ++t) EXPECT_EQ(shift_deltas[t], expect_shifts[t]);
    EXPECT_EQ(got.b, expect.b);
    EXPECT_EQ(got.last_delta, expect.last_delta);
}

TEST(SequentialRound, CyclicConvergesToKktAndZeroGapDeterministically) {
    for (const double density : {0.25, 1.0}) {
        const Design d = build_design(random_data(80, 20, density, 4, 10));
        const ProblemView pv = ProblemView::of(d);
        const double lambda = 0.05 * lambda_max(Split(d, 1).views, pv);
        std::vector<double> first_b;
        for (int run = 0; run < 2; ++run) {
            Split s(d, 2);
            Coefficients c(d.features());
            Evaluation ev;
            for (int sweep = 0; sweep < 500; ++sweep) {
                sequential_round(s.views, pv, lambda, all_coords(20), c);
                ev = evaluate(s.views, pv, lambda, c);
                if (ev.relative_gap < 1e-13) break;
            }
            EXPECT_LT(ev.relative_gap, 1e-13);
            EXPECT_GE(ev.gap, -1e-15);
            EXPECT_LT(ev.kkt_violation, 1e-6 * lambda);
            EXPECT_GT(ev.nonzeros, 0u);
            EXPECT_LT(ev.nonzeros, 20u);
            if (run == 0) first_b.assign(c.b.begin(), c.b.end());
            if (run == 1) {
                EXPECT_EQ(std::vector<double>(c.b.begin(), c.b.end()), first_b);  // bitwise
            }
        }
    }
}

}  // namespace
}  // namespace rotor::lasso
