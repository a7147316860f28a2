// Tests of the objective, λ_max, the duality gap and the KKT violation against direct dense
// computations in raw units (the model's raw coefficients and intercept).
#include "core/lasso/objective.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include <fstream>
#include <span>
#include <sstream>
#include <string>

#include "core/base/rng.h"
#include "core/lasso/dense_reader.h"
#include "core/lasso/libsvm_reader.h"
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

TEST(Objective, CoordinateStatsOverRangesAreTheEvaluationBitForBit) {
    const Design d = build_design(random_data(50, 9, 0.5, 3, 29));
    const ProblemView pv = ProblemView::of(d);
    Split s(d, 2);
    Coefficients c(9);
    const double lambda = 0.04;
    sequential_round(s.views, pv, lambda, all_coords(9), c);
    ASSERT_GT(c.nonzeros(), 0u);
    EvalSums total(9);
    for (const PartView& v : s.views) push_evaluation(v, c.offset, total);
    const Evaluation expect = evaluate(pv, lambda, c, total);
    const std::vector<double> expect_g = gradients(pv, total);
    std::vector<double> g(9);
    CoordinateStats all;
    for (const auto& [lo, hi] : {std::pair<std::uint32_t, std::uint32_t>{6, 9}, {0, 4}, {4, 6}}) {
        all.add(coordinate_stats(pv, lambda, c, lo,
                                 std::span<const core::ExactSum>(total.xq).subspan(lo, hi - lo),
                                 total.q_sum.value(), std::span<double>(g).subspan(lo, hi - lo)));
    }
    const Evaluation got = finish_evaluation(pv, lambda, all, total.rr, total.ry);
    EXPECT_EQ(g, expect_g);
    EXPECT_EQ(got.objective, expect.objective);
    EXPECT_EQ(got.gap, expect.gap);
    EXPECT_EQ(got.relative_gap, expect.relative_gap);
    EXPECT_EQ(got.kkt_violation, expect.kkt_violation);
    EXPECT_EQ(got.l1_norm, expect.l1_norm);
    EXPECT_EQ(got.nonzeros, expect.nonzeros);
    EXPECT_GT(got.kkt_violation, 0);
}

// The trainer's split of the push: push_columns overwrites whatever its buffer held, and with
// push_row_sums gives push_evaluation's sums bit for bit, on every part.
TEST(Objective, PushColumnsAndRowSumsArePushEvaluation) {
    const Design d = build_design(random_data(60, 11, 0.4, 3, 31));
    const ProblemView pv = ProblemView::of(d);
    Split s(d, 3);
    Coefficients c(11);
    sequential_round(s.views, pv, 0.02, all_coords(11), c);
    ASSERT_GT(c.nonzeros(), 0u);
    for (const PartView& v : s.views) {
        EvalSums expect(11), got(11);
        push_evaluation(v, c.offset, expect);
        for (auto& x : got.xq) x = core::ExactSum::of(123.25);  // stale contents, overwritten
        push_columns(v, got.xq);
        push_row_sums(v, c.offset, got);
        EXPECT_EQ(got.xq, expect.xq);
        EXPECT_EQ(got.q_sum, expect.q_sum);
        EXPECT_EQ(got.rr, expect.rr);
        EXPECT_EQ(got.ry, expect.ry);
    }
}

TEST(Objective, MatchesTheRawModelsLossAndPenalty) {
    for (const bool intercept : {true, false}) {
        for (const double density : {0.3, 1.0}) {
            const RawData raw = random_data(40, 8, density, 3, 21);
            StandardizeOptions o;
            o.intercept = intercept;
            const Design d = build_design(raw, o);
            const ProblemView pv = ProblemView::of(d);
            Split s(d, 2);
            Coefficients c(8);
            const double lambda = 0.03;
            for (int k = 0; k < 3; ++k) sequential_round(s.views, pv, lambda, all_coords(8), c);
            ASSERT_GT(c.nonzeros(), 0u);
            const Evaluation ev = evaluate(s.views, pv, lambda, c);
            // Raw units: residuals of the raw model, penalty on β_std = σ_y b.
            const Standardization& st = d.standardization();
            const double b0 = st.raw_intercept(c.b);
            double rss = 0, l1 = 0;
            for (std::uint32_t i = 0; i < raw.samples(); ++i) {
                double pred = b0;
                for (std::uint64_t e = raw.row_offsets[i]; e < raw.row_offsets[i + 1]; ++e) {
                    pred += raw.values[e] * st.raw_coefficient(raw.cols[e], c.b[raw.cols[e]]);
                }
                rss += (raw.targets[i] - pred) * (raw.targets[i] - pred);
            }
            for (double b : c.b) l1 += std::fabs(st.y_scale * b);
            const double want = rss / (2 * raw.samples()) + lambda * l1;
            EXPECT_NEAR(ev.objective, want, 1e-12 * want);
            EXPECT_NEAR(ev.objective_paper, raw.samples() * want, 1e-12 * raw.samples() * want);
            EXPECT_NEAR(ev.l1_norm, l1, 1e-12);
            EXPECT_EQ(ev.nonzeros, c.nonzeros());
        }
    }
}

TEST(Objective, GapAndKktMatchTheirDenseDefinitions) {
    const Design d = build_design(random_data(30, 6, 0.5, 2, 22));
    const ProblemView pv = ProblemView::of(d);
    const std::vector<double> z = dense_z(d);
    Split s(d, 3);
    Coefficients c(6);
    Rng rng(5);
    for (double& b : c.b) b = rng.below(2) ? 0.0 : rng.uniform() - 0.5;
    set_offset(pv, c);
    for (const PartView& v : s.views) init_residuals(v, c.b);
    const double lambda = 0.1, lt = lambda / pv.y_scale, n = 30;
    // scikit-learn's formula on the standardised problem, written out densely.
    std::vector<double> r(d.targets().begin(), d.targets().end());
    for (int i = 0; i < 30; ++i) {
        for (int j = 0; j < 6; ++j) r[i] -= z[i * 6 + j] * c.b[j];
    }
    double rr = 0, ry = 0, dual = 0, l1 = 0, kkt = 0;
    for (int i = 0; i < 30; ++i) rr += r[i] * r[i], ry += r[i] * d.targets()[i];
    for (int j = 0; j < 6; ++j) {
        double a = 0;
        for (int i = 0; i < 30; ++i) a += z[i * 6 + j] * r[i];
        dual = std::max(dual, std::fabs(a));
        l1 += std::fabs(c.b[j]);
        const double g = a / n;
        kkt = std::max(kkt, c.b[j] != 0 ? std::fabs(g - std::copysign(lt, c.b[j]))
                                        : std::max(0.0, std::fabs(g) - lt));
    }
    const double alpha = n * lt;
    const double kappa = dual > alpha ? alpha / dual : 1;
    const double gap =
        (dual > alpha ? 0.5 * (rr + rr * kappa * kappa) : rr) + alpha * l1 - kappa * ry;
    const Evaluation ev = evaluate(s.views, pv, lambda, c);
    EXPECT_NEAR(ev.relative_gap, gap / n, 1e-12);
    EXPECT_NEAR(ev.gap, pv.y_scale * pv.y_scale * gap / n, 1e-10);
    EXPECT_GT(ev.gap, 0);  // a random point is not optimal
    EXPECT_NEAR(ev.kkt_violation, pv.y_scale * kkt, 1e-10);
}

TEST(LambdaMax, IsTheSmallestLambdaWithTheZeroSolution) {
    for (const double density : {0.3, 1.0}) {
        const Design d = build_design(random_data(50, 9, density, 3, 23));
        const ProblemView pv = ProblemView::of(d);
        Split one(d, 1), three(d, 3);
        const double lmax = lambda_max(one.views, pv);
        EXPECT_EQ(lmax, lambda_max(three.views, pv));
        Coefficients c(9);
        sequential_round(one.views, pv, lmax * (1 + 1e-9), all_coords(9), c);
        EXPECT_EQ(c.nonzeros(), 0u);
        const Evaluation at = evaluate(one.views, pv, lmax * (1 + 1e-9), c);
        EXPECT_LT(at.kkt_violation, 1e-12);
        EXPECT_NEAR(at.gap, 0, 1e-12);
        sequential_round(one.views, pv, lmax * 0.9, all_coords(9), c);
        EXPECT_GT(c.nonzeros(), 0u);
    }
}

// Agreement with scikit-learn's Lasso at the same λ on the fixture of
// tools/data/make_lasso_reference.py (the command is in the fixture's header): cyclic coordinate
// descent on 3 parts to a relative gap of 1e-13, then the objective within 1e-6 relative (the
// issue's bar; the measured agreement is printed), the same active set and coefficients.
TEST(SklearnAgreement, SameObjectiveActiveSetAndCoefficients) {
    const std::string dir = std::string(ROTOR_SOURCE_DIR) + "/tests/core/lasso/data/";
    std::ifstream in(dir + "reference.tsv");
    ASSERT_TRUE(in) << dir;
    std::string line;
    int cases = 0;
    double worst = 0;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        std::string name, coef_text;
        double lambda = 0, want = 0;
        std::uint32_t nonzeros = 0;
        fields >> name >> lambda >> want >> nonzeros >> coef_text;
        std::vector<double> w;
        std::istringstream coefs(coef_text);
        for (std::string c; std::getline(coefs, c, ',');) w.push_back(std::stod(c));
        ReadLibsvmOptions so;
        so.min_features = static_cast<std::uint32_t>(w.size());
        const RawData raw =
            name.ends_with(".csv") ? read_dense(dir + name) : read_libsvm(dir + name, so);
        ASSERT_EQ(raw.features, w.size()) << name;
        const Design d = build_design(raw);
        const ProblemView pv = ProblemView::of(d);
        Split s(d, 3);
        Coefficients c(d.features());
        Evaluation ev;
        for (int sweep = 0; sweep < 100000; ++sweep) {
            sequential_round(s.views, pv, lambda, all_coords(d.features()), c);
            ev = evaluate(s.views, pv, lambda, c);
            if (ev.relative_gap < 1e-13) break;
        }
        const double rel = std::fabs(ev.objective - want) / want;
        worst = std::max(worst, rel);
        EXPECT_LT(rel, 1e-6) << name << " lambda " << lambda;
        EXPECT_LE(ev.objective, want * (1 + 1e-12)) << name;  // no worse than scikit-learn's
        EXPECT_EQ(ev.nonzeros, nonzeros) << name << " lambda " << lambda;
        double wmax = 0;
        for (double x : w) wmax = std::max(wmax, std::fabs(x));
        for (std::size_t j = 0; j < w.size(); ++j) {
            EXPECT_EQ(c.b[j] != 0, w[j] != 0) << name << " " << j;
            EXPECT_NEAR(pv.y_scale * c.b[j], w[j], 1e-6 * wmax) << name << " " << j;
        }
        ++cases;
    }
    EXPECT_EQ(cases, 9);
    std::printf("scikit-learn agreement: worst relative objective difference %.3g\n", worst);
}

}  // namespace
}  // namespace rotor::lasso
