#include "core/mf/sgd.h"

#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "tests/core/mf/mf_test_util.h"

namespace rotor::mf {
namespace {

// Everything one side of an SGD problem owns.
struct Side {
    Factors f;
    SgdState state;
    std::vector<std::uint64_t> counts;

    Side(std::uint32_t rows, std::uint32_t K, bool bias, std::uint64_t seed)
        : f(rows, K), state(rows, bias), counts(rows, 1) {
        f.init_uniform(seed, 1, 0.0f, 0.5f);
    }
    SgdSide side() { return state.side(f, counts); }
};

TEST(Sgd, UpdateEqualsAHandComputedStep) {
    for (const LambdaForm form : {LambdaForm::kPlain, LambdaForm::kWeighted}) {
        SgdParams p;
        p.eta = 0.2;
        p.objective.lambda = 0.5;
        p.objective.lambda_bias = 0.25;
        p.objective.form = form;
        Side rows(2, 3, true, 1), cols(3, 3, true, 2);
        const std::vector<float> w{0.5f, -1.0f, 2.0f}, h{1.5f, 0.25f, -0.5f};
        std::copy(w.begin(), w.end(), rows.f.row(1).begin());
        std::copy(h.begin(), h.end(), cols.f.row(2).begin());
        rows.state.bias[1] = 0.3f;
        cols.state.bias[2] = -0.2f;
        rows.state.factor_gsum[1] = 4.0f;
        cols.state.factor_gsum[2] = 2.0f;
        rows.state.bias_gsum[1] = 1.0f;
        cols.state.bias_gsum[2] = 9.0f;
        rows.counts[1] = 4;
        cols.counts[2] = 2;
        const double mu = 3.0, a = 4.5;

        // e = 4.5 - 3 - 0.3 + 0.2 - (0.75 - 0.25 - 1) = 1.9
        const double e = a - mu - 0.3 - (-0.2) - (0.5 * 1.5 - 1.0 * 0.25 + 2.0 * -0.5);
        ASSERT_NEAR(e, 1.9, 1e-6);
        const bool plain = form == LambdaForm::kPlain;
        const double lw = plain ? 0.5 / 4 : 0.5, lh = plain ? 0.5 / 2 : 0.5;
        const double lb = plain ? 0.25 / 4 : 0.25, lc = plain ? 0.25 / 2 : 0.25;
        std::vector<double> w2(3), h2(3);
        double gw2 = 0, gh2 = 0;
        for (int k = 0; k < 3; ++k) {
            const double gw = lw * w[k] - e * h[k], gh = lh * h[k] - e * w[k];
            w2[k] = w[k] - 0.2 / std::sqrt(4.0) * gw;
            h2[k] = h[k] - 0.2 / std::sqrt(2.0) * gh;
            gw2 += gw * gw;
            gh2 += gh * gh;
        }
        const double gb = lb * 0.3 - e, gc = lc * -0.2 - e;

        SgdSide rs = rows.side(), cs = cols.side();
        const double got_e = sgd_update(1, 2, float(a), rs, cs, mu, p);
        EXPECT_NEAR(got_e, e, 1e-6);
        for (int k = 0; k < 3; ++k) {
            EXPECT_NEAR(rows.f.at(1, k), w2[k], 1e-6) << k;
            EXPECT_NEAR(cols.f.at(2, k), h2[k], 1e-6) << k;
        }
        EXPECT_NEAR(rows.state.factor_gsum[1], 4.0 + gw2 / 3, 1e-5);
        EXPECT_NEAR(cols.state.factor_gsum[2], 2.0 + gh2 / 3, 1e-5);
        EXPECT_NEAR(rows.state.bias[1], 0.3 - 0.2 / 1.0 * gb, 1e-6);
        EXPECT_NEAR(cols.state.bias[2], -0.2 - 0.2 / 3.0 * gc, 1e-6);
        EXPECT_NEAR(rows.state.bias_gsum[1], 1.0 + gb * gb, 1e-5);
        EXPECT_NEAR(cols.state.bias_gsum[2], 9.0 + gc * gc, 1e-5);
        // Untouched rows stay as they were.
        EXPECT_EQ(rows.state.factor_gsum[0], 1.0f);
        EXPECT_EQ(cols.state.bias[0], 0.0f);
    }
}

TEST(Sgd, WithoutBiasTheBiasesAreNeitherReadNorWritten) {
    SgdParams p;
    p.objective.bias = false;
    Side rows(1, 2, false, 1), cols(1, 2, false, 2);
    SgdSide rs = rows.side(), cs = cols.side();
    EXPECT_TRUE(rs.bias.empty());
    const double pred = dot(rows.f.row(0), cols.f.row(0));
    EXPECT_NEAR(sgd_update(0, 0, 2.0f, rs, cs, 0.0, p), 2.0 - pred, 1e-6);
}

struct Problem {
    Side rows, cols;
    std::vector<std::uint32_t> r, c;
    std::vector<float> v;

    Problem(std::uint32_t R, std::uint32_t C, std::uint32_t K, std::uint32_t n, std::uint64_t seed)
        : rows(R, K, true, seed), cols(C, K, true, seed + 1) {
        Rng rng(seed);
        for (std::uint32_t t = 0; t < n; ++t) {
            r.push_back(std::uint32_t(rng.below(R)));
            c.push_back(std::uint32_t(rng.below(C)));
            v.push_back(float(1 + 4 * rng.uniform()));
        }
    }
    PackedBlock packed() const { return PackedBlock(r, c, v); }
    double run(const std::atomic<bool>* stop = nullptr, detail::SgdBlockFn kernel = nullptr) {
        SgdParams p;
        SgdSide rs = rows.side(), cs = cols.side();
        double loss = 0;
        EXPECT_EQ(sgd_block(packed().view(), rs, cs, 3.0, p, stop, &loss, kernel),
                  stop != nullptr && *stop ? 0u : v.size());
        return loss;
    }
    bool same_as(const Problem& o) const {
        return rows.f == o.rows.f && cols.f == o.cols.f && rows.state.bias == o.rows.state.bias &&
               cols.state.bias == o.cols.state.bias &&
               rows.state.factor_gsum == o.rows.state.factor_gsum &&
               cols.state.factor_gsum == o.cols.state.factor_gsum &&
               rows.state.bias_gsum == o.rows.state.bias_gsum &&
               cols.state.bias_gsum == o.cols.state.bias_gsum;
    }
};

TEST(Sgd, BlockFollowsTheStoredOrder) {
    Problem a(20, 15, 8, 300, 3), b(20, 15, 8, 300, 3), c(20, 15, 8, 300, 3);
    const double la = a.run(), lb = b.run();
    EXPECT_EQ(std::bit_cast<std::uint64_t>(la), std::bit_cast<std::uint64_t>(lb));
    EXPECT_TRUE(a.same_as(b));
    // The same ratings in another order: rows and columns repeat, so the result differs.
    std::swap(c.r[0], c.r[299]);
    std::swap(c.c[0], c.c[299]);
    std::swap(c.v[0], c.v[299]);
    c.run();
    EXPECT_FALSE(a.same_as(c));
}

// The AVX2 build of the kernel gives the scalar build's bits: K below, at and between multiples
// of the 8 lanes, with and without bias, both λ forms, several epochs (so that the states the
// builds start from are their own earlier results).
TEST(Sgd, EveryKernelBuildGivesTheSameBits) {
    const detail::SgdBlockFn avx2 = detail::sgd_block_avx2();
    if (avx2 == nullptr) GTEST_SKIP() << "no AVX2 build or CPU";
    for (const std::uint32_t K : {1u, 7u, 8u, 13u, 32u, 67u}) {
        for (const bool bias : {true, false}) {
            for (const LambdaForm form : {LambdaForm::kWeighted, LambdaForm::kPlain}) {
                Problem a(40, 30, K, 0, K), b(40, 30, K, 0, K);
                for (Problem* x : {&a, &b}) {
                    x->rows = Side(40, K, bias, K);
                    x->cols = Side(30, K, bias, K + 1);
                    Rng rng(K + 5);
                    for (std::uint32_t t = 0; t < 500; ++t) {
                        x->r.push_back(std::uint32_t(rng.below(40)));
                        x->c.push_back(std::uint32_t(rng.below(30)));
                        x->v.push_back(float(1 + 4 * rng.uniform()));
                    }
                    for (std::uint32_t i = 0; i < 40; ++i) x->rows.counts[i] = 1 + i % 7;
                    for (std::uint32_t j = 0; j < 30; ++j) x->cols.counts[j] = 1 + j % 5;
                }
                SgdParams p;
                p.objective.bias = bias;
                p.objective.form = form;
                for (int epoch = 0; epoch < 3; ++epoch) {
                    double la = 0, lb = 0;
                    SgdSide ra = a.rows.side(), ca = a.cols.side();
                    SgdSide rb = b.rows.side(), cb = b.cols.side();
                    sgd_block(a.packed().view(), ra, ca, 3.0, p, nullptr, &la,
                              detail::sgd_block_scalar());
                    sgd_block(b.packed().view(), rb, cb, 3.0, p, nullptr, &lb, avx2);
                    ASSERT_EQ(std::bit_cast<std::uint64_t>(la), std::bit_cast<std::uint64_t>(lb))
                        << "K " << K << " bias " << bias << " epoch " << epoch;
                    ASSERT_TRUE(a.same_as(b)) << "K " << K << " bias " << bias;
                }
            }
        }
    }
}

TEST(Sgd, BlockUpdatesEveryRatingOnce) {
    // Distinct rows and columns: the updates commute, so any order gives what applying
    // sgd_update to each rating gives.
    Problem a(30, 30, 5, 0, 4), b(30, 30, 5, 0, 4);
    for (std::uint32_t t = 0; t < 30; ++t) {
        for (Problem* x : {&a, &b}) {
            x->r.push_back(t);
            x->c.push_back((t * 7) % 30);
            x->v.push_back(float(t % 5 + 1));
        }
    }
    const double loss = a.run();
    SgdParams p;
    SgdSide rs = b.rows.side(), cs = b.cols.side();
    double want = 0;
    for (std::uint32_t t = 0; t < 30; ++t) {
        const double e = sgd_update(b.r[t], b.c[t], b.v[t], rs, cs, 3.0, p);
        want += e * e;
    }
    EXPECT_TRUE(a.same_as(b));
    EXPECT_NEAR(loss, want, 1e-9 * want);
}

TEST(Sgd, StopsWhenAsked) {
    Problem a(10, 10, 4, 50, 5), b(10, 10, 4, 50, 5);
    const std::atomic<bool> stop{true};
    EXPECT_EQ(a.run(&stop), 0.0);
    EXPECT_TRUE(a.same_as(b));
}

TEST(Sgd, ValidatesParameters) {
    SgdParams p;
    p.eta = 0;
    EXPECT_THROW(p.validate(), ConfigError);
    p.eta = 0.1;
    p.objective.lambda_bias = std::nan("");
    EXPECT_THROW(p.validate(), ConfigError);
}

// The planted problem of test_ccd.cpp: single-threaded SGD, one block in CSR order every epoch,
// comes within 10% of σ on held-out ratings.
TEST(Sgd, RecoversAPlantedLowRankMatrix) {
    constexpr double kSigma = 0.1;
    const testing::Planted pl = testing::planted(1000, 800, 4, kSigma, 0.3, 0.05, 31);
    const testing::Csr& m = pl.train;
    std::vector<std::uint32_t> users;
    for (std::uint32_t i = 0; i < m.rows(); ++i) {
        users.insert(users.end(), m.offsets[i + 1] - m.offsets[i], i);
    }
    SgdParams p;
    p.objective.lambda = 0.002;
    p.objective.lambda_bias = 0.002;
    Side rows(m.rows(), 4, true, 1), cols(m.cols, 4, true, 2);
    SgdSide rs = rows.side(), cs = cols.side();
    const double mu = rating_sum(m.values).value() / double(m.values.size());
    double loss = 0;
    const PackedBlock block(users, m.ids, m.values);
    for (std::uint64_t epoch = 0; epoch < 20; ++epoch) {
        loss = 0;
        sgd_block(block.view(), rs, cs, mu, p, nullptr, &loss);
    }
    const ErrorStats test =
        evaluate(pl.test.users, pl.test.items, pl.test.values,
                 ModelView{mu, &rows.f, &cols.f, rows.state.bias, cols.state.bias});
    EXPECT_LT(test.rmse, 1.10 * kSigma)
        << "last epoch's train RMSE " << rmse(loss, m.values.size());
}

}  // namespace
}  // namespace rotor::mf
