// The implicit-feedback ALS kernel (core/mf/ials.h) and the ranking metrics (core/mf/ranking.h).
#include "core/mf/ials.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "core/mf/ranking.h"
#include "mf_test_util.h"

namespace rotor::mf {
namespace {

using testing::Csr;
using testing::random_csr;

/// The transpose of a CSR matrix (items as rows).
Csr transpose(const Csr& a) {
    Csr t;
    t.cols = a.rows();
    std::vector<std::uint64_t> count(a.cols + 1, 0);
    for (const std::uint32_t j : a.ids) ++count[j + 1];
    for (std::uint32_t j = 0; j < a.cols; ++j) count[j + 1] += count[j];
    t.offsets = count;
    t.ids.resize(a.ids.size());
    t.values.resize(a.values.size());
    std::vector<std::uint64_t> next(count.begin(), count.end() - 1);
    for (std::uint32_t i = 0; i < a.rows(); ++i)
        for (std::uint64_t e = a.offsets[i]; e < a.offsets[i + 1]; ++e) {
            const std::uint64_t at = next[a.ids[e]]++;
            t.ids[at] = i;
            t.values[at] = a.values[e];
        }
    return t;
}

Factors random_factors(std::uint32_t rows, std::uint32_t k, std::uint64_t seed) {
    Factors f(rows, k);
    f.init_uniform(seed, 7, -0.3f, 0.3f);
    return f;
}

/// Solves the SPD system m x = b (n x n, row-major) by Cholesky, in double.
std::vector<double> cholesky_solve(std::vector<double> m, std::vector<double> b, std::size_t n) {
    for (std::size_t j = 0; j < n; ++j) {
        double d = m[j * n + j];
        for (std::size_t q = 0; q < j; ++q) d -= m[j * n + q] * m[j * n + q];
        m[j * n + j] = std::sqrt(d);
        for (std::size_t i = j + 1; i < n; ++i) {
            double s = m[i * n + j];
            for (std::size_t q = 0; q < j; ++q) s -= m[i * n + q] * m[j * n + q];
            m[i * n + j] = s / m[j * n + j];
        }
    }
    for (std::size_t i = 0; i < n; ++i) {  // L z = b
        for (std::size_t q = 0; q < i; ++q) b[i] -= m[i * n + q] * b[q];
        b[i] /= m[i * n + i];
    }
    for (std::size_t i = n; i-- > 0;) {  // Lᵀ x = z
        for (std::size_t q = i + 1; q < n; ++q) b[i] -= m[q * n + i] * b[q];
        b[i] /= m[i * n + i];
    }
    return b;
}

TEST(Ials, GramIsYtYPlusLambdaAndExactlySymmetric) {
    for (const std::uint32_t k : {1U, 5U, 16U, 21U, 40U}) {
        const Factors y = random_factors(300, k, k);
        std::vector<float> g(std::size_t{k} * k);
        gram(y, 0.25, g);
        for (std::uint32_t a = 0; a < k; ++a)
            for (std::uint32_t b = 0; b < k; ++b) {
                double want = a == b ? 0.25 : 0.0;
                for (std::uint32_t t = 0; t < y.rows(); ++t)
                    want += static_cast<double>(y.at(t, a)) * y.at(t, b);
                EXPECT_NEAR(g[a * k + b], want, 1e-4 * (1 + std::fabs(want))) << k << " " << a;
                EXPECT_EQ(g[a * k + b], g[b * k + a]) << "K " << k << " (" << a << ", " << b << ")";
            }
    }
}

TEST(Ials, GramRowSplitCoversTheRowsInGroupsOfFour) {
    for (const std::uint32_t k : {1U, 7U, 64U, 250U})
        for (const int parts : {1, 2, 3, 8}) {
            const auto b = gram_row_split(k, parts);
            ASSERT_EQ(b.size(), static_cast<std::size_t>(parts) + 1);
            EXPECT_EQ(b.front(), 0U);
            EXPECT_EQ(b.back(), k);
            for (int q = 0; q < parts; ++q) {
                EXPECT_LE(b[q], b[q + 1]);
                EXPECT_TRUE(b[q] % 4 == 0 || b[q] == k);
            }
        }
}

/// With enough CG steps each row's solve reaches the direct solution of its normal equations.
TEST(Ials, ConjugateGradientReachesTheDirectSolve) {
    for (const std::uint32_t k : {3U, 8U, 17U}) {
        const Csr a = random_csr(20, 40, 0.2, 11 + k);
        const Factors y = random_factors(40, k, 3);
        Factors x = random_factors(20, k, 4);
        IalsParams p;
        p.lambda = 0.5;
        p.alpha = 2.0;
        p.cg_steps = 4 * k;
        std::vector<float> g(std::size_t{k} * k);
        gram(y, p.lambda, g);
        IalsScratch scratch;
        ials_solve(a.view(), y, g, p, x, 0, x.rows(), scratch);
        for (std::uint32_t u = 0; u < x.rows(); ++u) {
            std::vector<double> m(std::size_t{k} * k), b(k, 0.0);
            for (std::uint32_t c = 0; c < k; ++c)
                for (std::uint32_t d = 0; d < k; ++d) {
                    double s = c == d ? p.lambda : 0.0;
                    for (std::uint32_t t = 0; t < y.rows(); ++t)
                        s += static_cast<double>(y.at(t, c)) * y.at(t, d);
                    m[c * k + d] = s;
                }
            for (std::uint64_t e = a.offsets[u]; e < a.offsets[u + 1]; ++e) {
                const double conf = 1 + p.alpha * a.values[e];
                for (std::uint32_t c = 0; c < k; ++c) {
                    b[c] += conf * y.at(a.ids[e], c);
                    for (std::uint32_t d = 0; d < k; ++d)
                        m[c * k + d] += (conf - 1) * y.at(a.ids[e], c) * y.at(a.ids[e], d);
                }
            }
            const std::vector<double> want = cholesky_solve(m, b, k);
            for (std::uint32_t c = 0; c < k; ++c)
                EXPECT_NEAR(x.at(u, c), want[c], 2e-3 * (1 + std::fabs(want[c])))
                    << "K " << k << " row " << u << " coordinate " << c;
        }
    }
}

/// Exact half-steps minimise f in one side with the other fixed: f never increases.
TEST(Ials, ObjectiveNeverIncreasesOverExactHalfSteps) {
    const std::uint32_t k = 6;
    const Csr a = random_csr(30, 25, 0.15, 5);
    const Csr at = transpose(a);
    Factors x = random_factors(30, k, 1), y = random_factors(25, k, 2);
    IalsParams p;
    p.lambda = 0.1;
    p.alpha = 3.0;
    p.cg_steps = 3 * k;
    std::vector<float> g(std::size_t{k} * k);
    IalsScratch scratch;
    double last = ials_objective(a.view(), x, y, p);
    for (int half = 0; half < 8; ++half) {
        if (half % 2 == 0) {
            gram(y, p.lambda, g);
            ials_solve(a.view(), y, g, p, x, 0, x.rows(), scratch);
        } else {
            gram(x, p.lambda, g);
            ials_solve(at.view(), x, g, p, y, 0, y.rows(), scratch);
        }
        const double f = ials_objective(a.view(), x, y, p);
        EXPECT_LE(f, last * (1 + 1e-5)) << "half-step " << half;
        last = f;
    }
    // The objective read from the other side is the same f.
    EXPECT_NEAR(ials_objective(at.view(), y, x, p), last, 1e-4 * last);
}

/// A row's result depends on its own data only: any cut of the rows into ranges, and either
/// build of the kernel, gives the same bits.
TEST(Ials, RowsAndKernelBuildsGiveTheSameBits) {
    const detail::IalsKernels avx2 = detail::ials_kernels_avx2();
    const detail::IalsKernels plain = detail::ials_kernels_scalar();
    for (const std::uint32_t k : {1U, 7U, 16U, 19U, 64U}) {
        const Csr a = random_csr(45, 30, 0.2, k);
        const Factors y = random_factors(30, k, 9);
        const Factors x0 = random_factors(45, k, 10);
        IalsParams p;
        p.alpha = 5.0;
        std::vector<float> g(std::size_t{k} * k);
        gram(y, p.lambda, g);
        IalsScratch scratch;
        Factors whole = x0;
        ials_solve(a.view(), y, g, p, whole, 0, 45, scratch);
        Factors cut = x0;
        for (const auto& [b, e] : {std::pair{0U, 3U}, {3U, 20U}, {20U, 21U}, {21U, 45U}})
            ials_solve(a.view(), y, g, p, cut, b, e, scratch);
        EXPECT_EQ(whole, cut) << "K " << k;
        if (avx2.solve == nullptr) continue;
        std::vector<float> g_plain(g.size()), g_avx2(g.size());
        plain.gram_upper(y, p.lambda, 0, k, g_plain);
        avx2.gram_upper(y, p.lambda, 0, k, g_avx2);
        EXPECT_EQ(g_plain, g_avx2) << "K " << k;
        Factors xp = x0, xa = x0;
        plain.solve(a.view(), y, g, p, xp, 0, 45, scratch);
        avx2.solve(a.view(), y, g, p, xa, 0, 45, scratch);
        EXPECT_EQ(xp, xa) << "K " << k;
    }
}

TEST(Ials, ParamsAreValidatedByFlag) {
    IalsParams p;
    p.alpha = -1;
    EXPECT_THROW(p.validate(), ConfigError);
    p = {};
    p.cg_steps = 0;
    EXPECT_THROW(p.validate(), ConfigError);
    p = {};
    p.lambda = std::nan("");
    EXPECT_THROW(p.validate(), ConfigError);
}

TEST(Ranking, MetricsOfAHandMadeRanking) {
    // One factor: scores are h_j, so the ranking is by h (ties to the lower index).
    Factors w(1, 1), h(6, 1);
    w.at(0, 0) = 1;
    const float hv[] = {0.9f, 0.8f, 0.7f, 0.7f, 0.1f, 0.5f};
    for (std::uint32_t j = 0; j < 6; ++j) h.at(j, 0) = hv[j];
    RankScratch scratch;
    // Seen item 0 is left out: the top 3 are 1, 2, 3. Held out: 2 and 5.
    const std::uint32_t seen[] = {0};
    const std::uint32_t held[] = {2, 5};
    const UserRanking r = rank_user(w.row(0), h, seen, held, 3, scratch);
    EXPECT_DOUBLE_EQ(r.precision, 1.0 / 3);
    EXPECT_DOUBLE_EQ(r.ap, (1.0 / 2) / 2);  // a hit at rank 2, over min(3, 2)
    EXPECT_DOUBLE_EQ(r.ndcg, (1 / std::log2(3.0)) / (1 + 1 / std::log2(3.0)));
    const std::uint32_t all[] = {1, 2};
    const UserRanking best = rank_user(w.row(0), h, seen, all, 2, scratch);
    EXPECT_DOUBLE_EQ(best.precision, 1.0);
    EXPECT_DOUBLE_EQ(best.ap, 1.0);
    EXPECT_DOUBLE_EQ(best.ndcg, 1.0);
    RankingSums s;
    s.add(r);
    s.add(best);
    const RankingSums back = RankingSums::from_limbs(s.to_limbs());
    EXPECT_EQ(back.users, 2U);
    EXPECT_NEAR(back.mean_precision(), (1.0 / 3 + 1) / 2, 1e-12);  // terms rounded to 2^-48
}

}  // namespace
}  // namespace rotor::mf
