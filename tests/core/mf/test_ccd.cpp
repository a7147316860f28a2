#include "core/mf/ccd.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/mf/objective.h"
#include "tests/core/mf/mf_test_util.h"

namespace rotor::mf {
namespace {

using testing::Csr;

// A whole model on one part.
struct Model {
    Factors w, h;
    std::vector<float> b, c;
    double mu = 0;
};

Model random_model(const Csr& m, std::uint32_t K, bool bias, std::uint64_t seed) {
    Model x{Factors(m.rows(), K), Factors(m.cols, K), {}, {}, 0};
    x.w.init_uniform(seed, 1, -0.5f, 0.5f);
    x.h.init_uniform(seed, 2, -0.5f, 0.5f);
    if (bias) {
        Rng rng(seed);
        for (std::uint32_t i = 0; i < m.rows(); ++i) x.b.push_back(float(rng.uniform() - 0.5));
        for (std::uint32_t j = 0; j < m.cols; ++j) x.c.push_back(float(rng.uniform() - 0.5));
        x.mu = rating_sum(m.values).value() / double(m.values.size());
    }
    return x;
}

// The objective of objective.h written out in double, independently of the library.
double brute_objective(const Csr& m, const Model& x, const ObjectiveParams& p) {
    const bool weighted = p.form == LambdaForm::kWeighted;
    std::vector<double> col_n(m.cols, 0);
    double f = 0;
    for (std::uint32_t i = 0; i < m.rows(); ++i) {
        for (std::uint64_t e = m.offsets[i]; e < m.offsets[i + 1]; ++e) {
            const std::uint32_t j = m.ids[e];
            double pred = x.mu + (p.bias ? double(x.b[i]) + x.c[j] : 0.0);
            for (std::uint32_t k = 0; k < x.w.k(); ++k) pred += double(x.w.at(i, k)) * x.h.at(j, k);
            f += (m.values[e] - pred) * (m.values[e] - pred);
            col_n[j] += 1;
        }
    }
    auto side = [&](const Factors& F, const std::vector<float>& bias, auto count) {
        double s = 0;
        for (std::uint32_t i = 0; i < F.rows(); ++i) {
            const double rho = weighted ? count(i) : 1.0;
            double sq = 0;
            for (std::uint32_t k = 0; k < F.k(); ++k) sq += double(F.at(i, k)) * F.at(i, k);
            s += p.lambda * rho * sq;
            if (p.bias) s += p.lambda_bias * rho * double(bias[i]) * bias[i];
        }
        return s;
    };
    f += side(x.w, x.b, [&](std::uint32_t i) { return double(m.offsets[i + 1] - m.offsets[i]); });
    f += side(x.h, x.c, [&](std::uint32_t j) { return col_n[j]; });
    return f;
}

// The minimiser of the objective in one coordinate, from three evaluations of the quadratic
// q(t) = f with the coordinate set to t (t = -1, 0, 1); the coordinate is restored.
double quadratic_minimiser(const Csr& m, Model& x, const ObjectiveParams& p, float& coord) {
    const float saved = coord;
    coord = -1;
    const double fm = brute_objective(m, x, p);
    coord = 0;
    const double f0 = brute_objective(m, x, p);
    coord = 1;
    const double fp = brute_objective(m, x, p);
    coord = saved;
    const double a = (fp + fm) / 2 - f0, b = (fp - fm) / 2;
    return -b / (2 * a);
}

std::vector<float> residuals_of(const Csr& m, const Model& x) {
    std::vector<float> r(m.values.size());
    compute_residuals(m.view(), x.w, x.b, x.h, x.c, x.mu, r);
    return r;
}

std::vector<std::uint64_t> col_counts(const Csr& m) {
    std::vector<std::uint64_t> n(m.cols, 0);
    add_column_counts(m.view(), n);
    return n;
}

void expect_near_rel(double got, double want, const char* what, std::uint32_t at) {
    EXPECT_NEAR(got, want, 2e-5 * std::max(1.0, std::fabs(want))) << what << " " << at;
}

void check_bias_updates(const ObjectiveParams& p) {
    const Csr m = testing::random_csr(30, 20, 0.3, 13);
    Model x = random_model(m, 3, true, 7);
    // c: the row side fixed at 1.
    std::vector<float> r = residuals_of(m, x), ones_rows(m.rows(), 1.0f), c(m.cols);
    add_rank_one(m.view(), ones_rows, x.c, r);
    ColumnSums sums(m.cols);
    push_column_sums(m.view(), ones_rows, r, sums);
    pull_columns(sums, col_counts(m), p.lambda_bias, p.form, c);
    for (std::uint32_t j = 0; j < m.cols; ++j) {
        expect_near_rel(c[j], quadratic_minimiser(m, x, p, x.c[j]), "c", j);
    }
    // b: the column side fixed at 1.
    r = residuals_of(m, x);
    std::vector<float> ones_cols(m.cols, 1.0f), b(m.rows());
    add_rank_one(m.view(), x.b, ones_cols, r);
    update_rows(m.view(), ones_cols, r, p.lambda_bias, p.form, b);
    for (std::uint32_t i = 0; i < m.rows(); ++i) {
        expect_near_rel(b[i], quadratic_minimiser(m, x, p, x.b[i]), "b", i);
    }
    // ccd_update_biases is c then b.
    std::vector<float> r2 = residuals_of(m, x);
    CcdParams cp;
    cp.objective = p;
    const CcdPart part{m.view(), &x.w, x.b, r2};
    ccd_update_biases(std::span<const CcdPart>(&part, 1), x.c, col_counts(m), cp);
    for (std::uint32_t j = 0; j < m.cols; ++j) EXPECT_EQ(x.c[j], c[j]) << j;
}

TEST(Ccd, BiasUpdatesAreTheCoordinateMinimisers) {
    for (const LambdaForm form : {LambdaForm::kPlain, LambdaForm::kWeighted}) {
        SCOPED_TRACE(form == LambdaForm::kPlain ? "plain" : "weighted");
        ObjectiveParams p;
        p.lambda = 0.3;
        p.lambda_bias = 0.2;
        p.form = form;
        check_bias_updates(p);
    }
}

class CcdForms : public ::testing::TestWithParam<std::tuple<LambdaForm, bool>> {
  protected:
    ObjectiveParams params() const {
        ObjectiveParams p;
        p.lambda = 0.3;
        p.lambda_bias = 0.2;
        p.form = std::get<0>(GetParam());
        p.bias = std::get<1>(GetParam());
        return p;
    }
};

TEST_P(CcdForms, ColumnUpdateIsTheCoordinateMinimiser) {
    const ObjectiveParams p = params();
    const Csr m = testing::random_csr(30, 20, 0.3, 11);
    Model x = random_model(m, 3, p.bias, 5);
    for (std::uint32_t k = 0; k < 3; ++k) {
        std::vector<float> r = residuals_of(m, x), u(m.rows()), v(m.cols), got(m.cols);
        x.w.get_column(k, u);
        x.h.get_column(k, v);
        add_rank_one(m.view(), u, v, r);
        ColumnSums sums(m.cols);
        push_column_sums(m.view(), u, r, sums);
        pull_columns(sums, col_counts(m), p.lambda, p.form, got);
        for (std::uint32_t j = 0; j < m.cols; ++j) {
            expect_near_rel(got[j], quadratic_minimiser(m, x, p, x.h.at(j, k)), "h", j);
        }
    }
}

TEST_P(CcdForms, RowUpdateIsTheCoordinateMinimiser) {
    const ObjectiveParams p = params();
    const Csr m = testing::random_csr(30, 20, 0.3, 12);
    Model x = random_model(m, 3, p.bias, 6);
    for (std::uint32_t k = 0; k < 3; ++k) {
        std::vector<float> r = residuals_of(m, x), u(m.rows()), v(m.cols);
        x.w.get_column(k, u);
        x.h.get_column(k, v);
        add_rank_one(m.view(), u, v, r);
        update_rows(m.view(), v, r, p.lambda, p.form, u);
        for (std::uint32_t i = 0; i < m.rows(); ++i) {
            expect_near_rel(u[i], quadratic_minimiser(m, x, p, x.w.at(i, k)), "w", i);
        }
    }
}

TEST_P(CcdForms, ObjectiveNeverIncreases) {
    const ObjectiveParams p = params();
    const Csr m = testing::random_csr(40, 25, 0.3, 14);
    const std::vector<std::uint64_t> counts = col_counts(m);
    for (std::uint32_t inner : {1U, 3U}) {
        Model x = random_model(m, 4, p.bias, 8);
        std::vector<float> r = residuals_of(m, x);
        CcdParams cp;
        cp.objective = p;
        cp.inner = inner;
        const CcdPart part{m.view(), &x.w, x.b, r};
        const std::span<const CcdPart> parts(&part, 1);
        double f = brute_objective(m, x, p);
        const double f_start = f;
        auto check = [&](const char* step, int it) {
            const double g = brute_objective(m, x, p);
            EXPECT_LE(g, f * (1 + 1e-9)) << step << " in iteration " << it << ", inner " << inner;
            f = g;
        };
        for (int it = 0; it < 20; ++it) {
            ccd_update_biases(parts, x.c, counts, cp);
            check("biases", it);
            for (std::uint32_t k = 0; k < x.h.k(); ++k) {
                ccd_rank_one(parts, x.h, k, counts, cp);
                check("rank one", it);
            }
        }
        EXPECT_LT(f, 0.9 * f_start) << "CCD made no progress";
        // The residuals kept by the updates are still the residuals.
        const std::vector<float> fresh = residuals_of(m, x);
        for (std::size_t e = 0; e < r.size(); ++e) EXPECT_NEAR(r[e], fresh[e], 1e-4) << e;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Forms, CcdForms,
    ::testing::Combine(::testing::Values(LambdaForm::kPlain, LambdaForm::kWeighted),
                       ::testing::Bool()),
    [](const ::testing::TestParamInfo<CcdForms::ParamType>& named) {
        return std::string(std::get<0>(named.param) == LambdaForm::kPlain ? "Plain" : "Weighted") +
               (std::get<1>(named.param) ? "Bias" : "NoBias");
    });

// P parts with their own W rows, b, residuals; H and c shared.
struct PartsRun {
    testing::Split split;
    std::vector<Factors> w;
    std::vector<std::vector<float>> b, r;
    Factors h;
    std::vector<float> c;
};

void run_parts(PartsRun& run, const Csr& m, std::uint32_t P, std::uint32_t K, const CcdParams& p,
               int iterations) {
    run.split = testing::split_rows(m, P, 100 + P);
    run.h = Factors(m.cols, K);  // CCD++'s start: H = 0
    run.c.assign(m.cols, 0.0f);
    core::ExactSum total;
    for (const Csr& part : run.split.parts) total.add(rating_sum(part.values));
    const double mu = p.objective.bias ? total.value() / double(m.values.size()) : 0.0;
    std::vector<CcdPart> parts;
    std::vector<std::uint64_t> counts(m.cols, 0);
    run.w.clear();
    run.w.reserve(P);
    for (std::uint32_t q = 0; q < P; ++q) {
        const Csr& part = run.split.parts[q];
        run.w.emplace_back(part.rows(), K);
        run.w[q].init_uniform(9, 3, 0.0f, 0.5f, run.split.rows_of[q]);
        run.b.emplace_back(p.objective.bias ? part.rows() : 0, 0.0f);
        run.r.emplace_back(part.values.size());
        compute_residuals(part.view(), run.w[q], run.b[q], run.h, run.c, mu, run.r[q]);
        add_column_counts(part.view(), counts);
    }
    for (std::uint32_t q = 0; q < P; ++q) {
        parts.push_back({run.split.parts[q].view(), &run.w[q], run.b[q], run.r[q]});
    }
    for (int it = 0; it < iterations; ++it) ccd_iteration(parts, run.h, run.c, counts, p);
}

TEST(Ccd, PartsGiveBitwiseTheSameModel) {
    const Csr m = testing::random_csr(70, 45, 0.25, 21);
    for (const LambdaForm form : {LambdaForm::kPlain, LambdaForm::kWeighted}) {
        CcdParams p;
        p.objective.form = form;
        p.objective.lambda = 0.1;
        PartsRun one;
        run_parts(one, m, 1, 6, p, 4);
        for (std::uint32_t P = 2; P <= 4; ++P) {
            PartsRun many;
            run_parts(many, m, P, 6, p, 4);
            for (std::size_t t = 0; t < one.h.values().size(); ++t) {
                ASSERT_EQ(std::bit_cast<std::uint32_t>(many.h.values()[t]),
                          std::bit_cast<std::uint32_t>(one.h.values()[t]))
                    << "H value " << t << ", P = " << P;
            }
            for (std::uint32_t j = 0; j < m.cols; ++j) {
                ASSERT_EQ(std::bit_cast<std::uint32_t>(many.c[j]),
                          std::bit_cast<std::uint32_t>(one.c[j]));
            }
            for (std::uint32_t q = 0; q < P; ++q) {
                const auto& rows = many.split.rows_of[q];
                for (std::uint32_t r = 0; r < rows.size(); ++r) {
                    for (std::uint32_t k = 0; k < 6; ++k) {
                        ASSERT_EQ(std::bit_cast<std::uint32_t>(many.w[q].at(r, k)),
                                  std::bit_cast<std::uint32_t>(one.w[0].at(rows[r], k)))
                            << "W row " << rows[r] << ", P = " << P;
                    }
                    ASSERT_EQ(std::bit_cast<std::uint32_t>(many.b[q][r]),
                              std::bit_cast<std::uint32_t>(one.b[0][rows[r]]));
                }
            }
        }
    }
}

// The pulled totals themselves, in double before the pull rounds them to float: the same bits
// for every split (a double sum over parts would differ in the last bits, which float storage
// would hide most of the time but not always).
TEST(Ccd, PushedTotalsDoNotDependOnTheSplit) {
    const Csr m = testing::random_csr(300, 40, 0.5, 24);
    std::vector<float> u(m.rows());
    Rng rng(9);
    for (float& x : u) x = float(rng.uniform() * 2 - 1);
    auto pulled = [&](std::uint32_t P) {
        const testing::Split split = testing::split_rows(m, P, 200 + P);
        std::vector<ColumnSums> pushed;
        for (std::uint32_t q = 0; q < P; ++q) {
            std::vector<float> uq;
            for (std::uint32_t i : split.rows_of[q]) uq.push_back(u[i]);
            pushed.emplace_back(m.cols);
            push_column_sums(split.parts[q].view(), uq, split.parts[q].values, pushed.back());
        }
        std::vector<double> v;
        for (const ColumnSum& s : combine(pushed).sums) {
            v.push_back(s.num.value());
            v.push_back(s.den.value());
        }
        return v;
    };
    const std::vector<double> one = pulled(1);
    for (std::uint32_t P = 2; P <= 4; ++P) {
        const std::vector<double> many = pulled(P);
        for (std::size_t t = 0; t < one.size(); ++t) {
            ASSERT_EQ(std::bit_cast<std::uint64_t>(many[t]), std::bit_cast<std::uint64_t>(one[t]))
                << "sum " << t << ", P = " << P;
        }
    }
}

TEST(Ccd, SinglePartConvenienceMatchesOnePart) {
    const Csr m = testing::random_csr(50, 30, 0.3, 22);
    CcdParams p;
    PartsRun one;
    run_parts(one, m, 1, 4, p, 3);
    Factors w(m.rows(), 4), h(m.cols, 4);
    w.init_uniform(9, 3, 0.0f, 0.5f);
    std::vector<float> b(m.rows(), 0.0f), c(m.cols, 0.0f), r(m.values.size());
    const double mu = rating_sum(m.values).value() / double(m.values.size());
    compute_residuals(m.view(), w, b, h, c, mu, r);
    const CcdPart all{m.view(), &w, b, r};
    for (int it = 0; it < 3; ++it) ccd_iteration(all, h, c, p);
    EXPECT_TRUE(h == one.h);
    EXPECT_TRUE(w == one.w[0]);
    EXPECT_EQ(c, one.c);
}

TEST(Ccd, LimbsOfPartsAddUpToTheTotal) {
    const Csr m = testing::random_csr(40, 30, 0.3, 23);
    const testing::Split split = testing::split_rows(m, 3, 5);
    std::vector<ColumnSums> pushed;
    std::vector<std::int64_t> limbs;
    for (std::uint32_t q = 0; q < 3; ++q) {
        const Csr& part = split.parts[q];
        std::vector<float> u(part.rows());
        Rng rng(q);
        for (float& x : u) x = float(rng.uniform() * 2 - 1);
        pushed.emplace_back(m.cols);
        push_column_sums(part.view(), u, part.values, pushed.back());
        const std::vector<std::int64_t> l = pushed.back().to_limbs();
        if (limbs.empty()) limbs.assign(l.size(), 0);
        for (std::size_t t = 0; t < l.size(); ++t) limbs[t] += l[t];  // an allreduce_sum
    }
    const ColumnSums total = combine(pushed), reduced = ColumnSums::from_limbs(limbs);
    ASSERT_EQ(reduced.sums.size(), total.sums.size());
    for (std::size_t j = 0; j < total.sums.size(); ++j) {
        EXPECT_TRUE(reduced.sums[j].num == total.sums[j].num) << j;
        EXPECT_TRUE(reduced.sums[j].den == total.sums[j].den) << j;
    }
}

TEST(Ccd, EmptyColumnsAndRowsGetZero) {
    Csr m;
    m.cols = 3;  // column 1 has no rating; row 1 has none
    m.add(0, 4.0f);
    m.add(2, 2.0f);
    m.end_row();
    m.end_row();
    std::vector<float> u{0.5f, 0.7f}, r(m.values), v(3, 9.0f);
    ColumnSums sums(3);
    push_column_sums(m.view(), u, r, sums);
    pull_columns(sums, col_counts(m), 0.0, LambdaForm::kWeighted, v);
    EXPECT_EQ(v[1], 0.0f);
    EXPECT_FLOAT_EQ(v[0], 8.0f);  // 4 * 0.5 / 0.25
    update_rows(m.view(), v, r, 0.1, LambdaForm::kWeighted, u);
    EXPECT_EQ(u[1], 0.0f);
}

TEST(Ccd, ValidatesParameters) {
    CcdParams p;
    p.inner = 0;
    EXPECT_THROW(p.validate(), ConfigError);
    p.inner = 1;
    p.objective.lambda = -1;
    EXPECT_THROW(p.validate(), ConfigError);
}

// A planted rank-4 matrix with biases, 30% observed, σ = 0.1: the held-out RMSE comes within 5%
// of σ, the best any estimator can do (1000 x 800 so that each row has ~240 ratings: with ~60,
// the estimation error of 5 parameters per row and column alone adds ~7% to σ).
TEST(Ccd, RecoversAPlantedLowRankMatrix) {
    constexpr double kSigma = 0.1;
    const testing::Planted pl = testing::planted(1000, 800, 4, kSigma, 0.3, 0.05, 31);
    const Csr& m = pl.train;
    CcdParams p;
    p.objective.lambda = 0.002;
    p.objective.lambda_bias = 0.002;
    Factors w(m.rows(), 4), h(m.cols, 4);
    w.init_uniform(1, 1, 0.0f, 0.5f);
    std::vector<float> b(m.rows(), 0.0f), c(m.cols, 0.0f), r(m.values.size());
    const double mu = rating_sum(m.values).value() / double(m.values.size());
    compute_residuals(m.view(), w, b, h, c, mu, r);
    const CcdPart all{m.view(), &w, b, r};
    for (int it = 0; it < 10; ++it) ccd_iteration(all, h, c, p);
    const ErrorStats test =
        evaluate(pl.test.users, pl.test.items, pl.test.values, ModelView{mu, &w, &h, b, c});
    const double train = train_rmse(r);
    EXPECT_LT(test.rmse, 1.05 * kSigma) << "train RMSE " << train;
    EXPECT_LT(train, kSigma);
    EXPECT_GT(test.count, 30000u);
}

}  // namespace
}  // namespace rotor::mf
