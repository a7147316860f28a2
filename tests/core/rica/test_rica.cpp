// core/rica: the smooth part through C = XᵀX equals the data's sum; its gradient W(AC + CA)
// (eq. 16) matches central finite differences; the ADMM of the proximal step (19a-19c) reaches
// the solution of a direct solve (projected gradient on the dual); proximal gradient steps with
// the safe step never increase F; the one-worker ADMM's W step minimises f + (ρ/2)‖X Wᵀ − B‖²
// (its gradient, through C and R = BᵀX, equals the data's, and is driven to 0); its split
// (AdmmSplit's fused pass) equals (19b), (19c) and R computed apart, the same bits on threads, as
// are the W step's (its products' slabs and its L-BFGS vectors' chunks).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "core/rica/augmented.h"
#include "core/rica/objective.h"
#include "core/rica/prox.h"

namespace rotor::rica {
namespace {

/// n×p standard normal entries (initial_rows with ℓ = 1 draws N(0, 1)).
Dense random_data(std::size_t n, std::size_t p, std::uint64_t seed) {
    Dense d;
    d.n = n;
    d.p = p;
    d.x = initial_rows(seed, 0, n, p, 1);
    return d;
}

std::vector<double> random_w(std::size_t rows, std::size_t p, std::uint64_t seed, double scale) {
    std::vector<double> w = initial_rows(seed, 0, rows, p, 1);
    for (double& v : w) v *= scale;
    return w;
}

TEST(RicaObjective, SmoothPartThroughCMatchesTheData) {
    const Dense d = random_data(40, 5, 1);
    const std::vector<double> w = random_w(8, 5, 2, 0.4);
    const std::vector<double> c = gram(d);
    const SmoothTerms t = smooth_terms(outer_gram(w, 8, 5), c, 5, false);
    const DirectTerms direct = direct_terms(w, 8, d);
    EXPECT_NEAR(t.value, direct.reconstruction, 1e-10 * std::fabs(direct.reconstruction));
    double l1 = 0;  // Σ_i ‖W x_i‖₁ by hand
    for (std::size_t i = 0; i < d.n; ++i)
        for (std::size_t j = 0; j < 8; ++j) {
            double y = 0;
            for (std::size_t k = 0; k < 5; ++k) y += w[j * 5 + k] * d.row(i)[k];
            l1 += std::fabs(y);
        }
    EXPECT_NEAR(direct.l1, l1, 1e-10 * l1);
}

TEST(RicaObjective, GradientMatchesFiniteDifferences) {
    const std::size_t p = 4, rows = 6;
    const Dense d = random_data(30, p, 3);
    std::vector<double> w = random_w(rows, p, 4, 0.5);
    const std::vector<double> c = gram(d);
    const SmoothTerms t = smooth_terms(outer_gram(w, rows, p), c, p, true);
    std::vector<double> g(rows * p, 0.0);  // ∇f = W M
    for (std::size_t j = 0; j < rows; ++j)
        for (std::size_t k = 0; k < p; ++k)
            for (std::size_t l = 0; l < p; ++l) g[j * p + k] += w[j * p + l] * t.m[l * p + k];
    const double h = 1e-6;
    for (std::size_t e = 0; e < rows * p; ++e) {
        const double keep = w[e];
        w[e] = keep + h;
        const double up = direct_terms(w, rows, d).reconstruction;
        w[e] = keep - h;
        const double down = direct_terms(w, rows, d).reconstruction;
        w[e] = keep;
        EXPECT_NEAR(g[e], (up - down) / (2 * h), 1e-5 * (1 + std::fabs(g[e]))) << "entry " << e;
    }
}

/// The prox of one row by projected (accelerated) gradient ascent on the dual:
/// max_{|y|∞ ≤ λ} yᵀX v − ‖Xᵀy‖²/(2a), w = v − Xᵀy / a.
std::vector<double> dual_prox(const Dense& d, const double* v, double a, double lambda) {
    const std::size_t n = d.n, p = d.p;
    std::vector<double> y(n, 0.0), prev = y, mom = y, w(p);
    double lmax = 0;  // ‖X‖₂² ≤ ‖X‖_F²
    for (const double x : d.x) lmax += x * x;
    const double step = a / lmax;
    for (int it = 0; it < 200000; ++it) {
        for (std::size_t k = 0; k < p; ++k) {
            double s = 0;
            for (std::size_t i = 0; i < n; ++i) s += d.row(i)[k] * mom[i];
            w[k] = v[k] - s / a;
        }
        prev = y;
        for (std::size_t i = 0; i < n; ++i) {
            double xw = 0;
            for (std::size_t k = 0; k < p; ++k) xw += d.row(i)[k] * w[k];
            y[i] = std::clamp(mom[i] + step * xw, -lambda, lambda);
        }
        const double beta = double(it) / (it + 3);
        for (std::size_t i = 0; i < n; ++i) mom[i] = y[i] + beta * (y[i] - prev[i]);
    }
    for (std::size_t k = 0; k < p; ++k) {
        double s = 0;
        for (std::size_t i = 0; i < n; ++i) s += d.row(i)[k] * y[i];
        w[k] = v[k] - s / a;
    }
    return w;
}

TEST(RicaProx, AdmmMatchesADirectSolve) {
    const std::size_t p = 3, rows = 2;
    const Dense d = random_data(8, p, 5);
    const Spectrum spec = Spectrum::of(gram(d), p);
    const std::vector<double> v = random_w(rows, p, 6, 1.0);
    const std::vector<double> a = {3.0, 11.0};
    const double lambda = 0.7;
    BlockState st;
    Scratch sc;
    std::vector<double> w(rows * p, 0.0);
    init_block(d, w, rows, st, sc);
    admm_prox(d, spec, v, a, lambda, 3000, st, sc, w);
    for (std::size_t j = 0; j < rows; ++j) {
        const std::vector<double> want = dual_prox(d, v.data() + j * p, a[j], lambda);
        for (std::size_t k = 0; k < p; ++k)
            EXPECT_NEAR(w[j * p + k], want[k], 1e-7) << "row " << j << " coordinate " << k;
    }
    // Not the trivial answer: the L1 term moved w away from v.
    EXPECT_GT(std::fabs(w[0] - v[0]) + std::fabs(w[1] - v[1]), 1e-3);
}

TEST(RicaProx, SafeStepsNeverIncreaseTheObjective) {
    const std::size_t p = 4, rows = 8, n = 50;
    const Dense d = random_data(n, p, 7);
    const std::vector<double> c = gram(d);
    const Spectrum spec = Spectrum::of(c, p);
    std::vector<double> w = random_w(rows, p, 8, 0.5);
    const double lambda = 0.3;
    BlockState st;
    Scratch sc;
    init_block(d, w, rows, st, sc);
    double last = direct_terms(w, rows, d).objective(lambda), first = last;
    for (int t = 0; t < 30; ++t) {
        const std::vector<double> s = outer_gram(w, rows, p);
        const SmoothTerms sm = smooth_terms(s, c, p, true);
        StepOptions o;
        o.lambda = lambda;
        o.lipschitz = lipschitz_bound(largest_eigenvalue(s, p), spec.largest);
        o.admm_iterations = 200;  // an (almost) exact prox: the descent lemma applies
        const double l1 = prox_gradient_step(d, spec, sm.m, o, w, st, sc);
        const DirectTerms now = direct_terms(w, rows, d);
        EXPECT_NEAR(l1, now.l1, 1e-9 * now.l1);
        EXPECT_LE(now.objective(lambda), last * (1 + 1e-12)) << "step " << t;
        last = now.objective(lambda);
    }
    EXPECT_LT(last, 0.9 * first);
}

TEST(RicaAugmented, WStepMinimisesTheAugmentedSmoothPart) {
    const std::size_t p = 4, rows = 6, n = 40;
    const Dense d = random_data(n, p, 9);
    const std::vector<double> c = gram(d);
    const std::vector<double> b = random_w(n, rows, 10, 0.7);  // B = Z − U, n×rows
    std::vector<double> r(rows * p, 0.0);                      // R = BᵀX
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < rows; ++j)
            for (std::size_t k = 0; k < p; ++k) r[j * p + k] += b[i * rows + j] * d.row(i)[k];
    const double rho = 0.3;
    // φ and ∇φ from the data: f's gradient (tested above) + ρ (X Wᵀ − B)ᵀ X.
    const auto direct_gradient = [&](const std::vector<double>& w) {
        const SmoothTerms t = smooth_terms(outer_gram(w, rows, p), c, p, true);
        std::vector<double> g(rows * p, 0.0);
        for (std::size_t j = 0; j < rows; ++j)
            for (std::size_t k = 0; k < p; ++k)
                for (std::size_t l = 0; l < p; ++l) g[j * p + k] += w[j * p + l] * t.m[l * p + k];
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < rows; ++j) {
                double e = -b[i * rows + j];
                for (std::size_t k = 0; k < p; ++k) e += w[j * p + k] * d.row(i)[k];
                for (std::size_t k = 0; k < p; ++k) g[j * p + k] += rho * e * d.row(i)[k];
            }
        return g;
    };
    std::vector<double> w = random_w(rows, p, 11, 0.5), g(rows * p);
    const double before = augmented_value(w, rows, p, c, r, rho, g);
    const std::vector<double> g0 = direct_gradient(w);
    double norm0 = 0;
    for (std::size_t e = 0; e < g.size(); ++e) {
        EXPECT_NEAR(g[e], g0[e], 1e-9 * (1 + std::fabs(g0[e]))) << "entry " << e;
        norm0 += g0[e] * g0[e];
    }
    augmented_w_step(w, rows, p, c, r, rho, 200);
    EXPECT_LT(augmented_value(w, rows, p, c, r, rho, {}), before);
    double norm = 0;
    for (const double v : direct_gradient(w)) norm += v * v;
    EXPECT_LT(std::sqrt(norm), 1e-6 * std::sqrt(norm0));
}

/// A RangeLoop on three std::threads, each index on its own (any order): what a team does.
void threaded_loop(std::int64_t begin, std::int64_t end,
                   const std::function<void(std::int64_t, std::int64_t)>& body) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
        threads.emplace_back([&, t] {
            for (std::int64_t i = end - 1 - t; i >= begin; i -= 3) body(i, i + 1);
        });
    for (std::thread& t : threads) t.join();
}

TEST(RicaAugmented, SplitPassEqualsTheUpdatesComputedApartOnAnyLoop) {
    // n spans several chunks (AdmmSplit::chunk: 64 at least) and the last one is shorter.
    const std::size_t p = 5, rows = 7, n = 300;
    const Dense d = random_data(n, p, 12);
    const std::vector<double> w0 = random_w(rows, p, 13, 0.5), w1 = random_w(rows, p, 14, 0.5);
    const double cut = 0.4, factor = 0.5;
    AdmmSplit split(d, rows), threaded(d, rows);
    split.reset(w0, core::serial_loop);
    split.update(w1, cut, core::serial_loop);
    split.rescale(factor, core::serial_loop);
    threaded.reset(w0, threaded_loop);
    threaded.update(w1, cut, threaded_loop);
    threaded.rescale(factor, threaded_loop);
    EXPECT_EQ(split.target(), threaded.target());
    EXPECT_EQ(split.l1(), threaded.l1());
    // Apart: Z = X W0ᵀ, U = 0; then Y = X W1ᵀ, T = Y + U, U = clamp(T), Z = T − U; then U ← f U.
    std::vector<double> want(rows * p, 0.0);
    double l1 = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < rows; ++j) {
            double y0 = 0, y1 = 0;
            for (std::size_t k = 0; k < p; ++k) {
                y0 += d.row(i)[k] * w0[j * p + k];
                y1 += d.row(i)[k] * w1[j * p + k];
            }
            l1 += std::fabs(y1);
            const double t = y1 + 0.0;  // U = 0 after the reset, whatever Z = y0 was
            const double u = std::clamp(t, -cut, cut), z = t - u;
            for (std::size_t k = 0; k < p; ++k) want[j * p + k] += (z - factor * u) * d.row(i)[k];
        }
    for (std::size_t e = 0; e < want.size(); ++e)
        EXPECT_NEAR(split.target()[e], want[e], 1e-9 * (1 + std::fabs(want[e]))) << "entry " << e;
    EXPECT_NEAR(split.l1(), l1, 1e-9 * l1);
    // The W step's slabs on threads: the same bits as on one.
    const std::vector<double> c = gram(d);
    std::vector<double> a = w1, b = w1;
    augmented_w_step(a, rows, p, c, split.target(), 0.3, 5, core::serial_loop);
    augmented_w_step(b, rows, p, c, split.target(), 0.3, 5, threaded_loop);
    EXPECT_EQ(a, b);
}

TEST(RicaAugmented, WStepIsTheSameBitsOnAnyLoopWhenItsVectorsSpanSeveralChunks) {
    // ℓp = 7030: the L-BFGS vectors span 4 chunks of 2048 entries, the last shorter and not a
    // multiple of the dot products' 8 lanes; ℓ = 190 rows are 6 slabs of products, p = 37 two.
    const std::size_t p = 37, rows = 190, n = 200;
    const Dense d = random_data(n, p, 15);
    const std::vector<double> c = gram(d), w0 = random_w(rows, p, 16, 0.1);
    AdmmSplit split(d, rows);
    split.reset(random_w(rows, p, 17, 0.1), core::serial_loop);
    const double rho = 0.3;
    std::vector<double> a = w0, b = w0;
    augmented_w_step(a, rows, p, c, split.target(), rho, 8, core::serial_loop);
    augmented_w_step(b, rows, p, c, split.target(), rho, 8, threaded_loop);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, w0);
    std::vector<double> ga(rows * p), gb(rows * p);
    EXPECT_EQ(augmented_value(a, rows, p, c, split.target(), rho, ga, core::serial_loop),
              augmented_value(a, rows, p, c, split.target(), rho, gb, threaded_loop));
    EXPECT_EQ(ga, gb);
    EXPECT_LT(augmented_value(a, rows, p, c, split.target(), rho, {}),
              augmented_value(w0, rows, p, c, split.target(), rho, {}));
}

}  // namespace
}  // namespace rotor::rica
