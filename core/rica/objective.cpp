#include "core/rica/objective.h"

#include <algorithm>
#include <cmath>

#include "core/base/blas.h"
#include "core/base/rng.h"

namespace rotor::rica {

using core::blas::Op;

std::vector<double> gram(const Dense& d) {
    std::vector<double> c(d.p * d.p, 0.0);
    core::blas::gemm(Op::kTranspose, Op::kNone, d.p, d.p, d.n, 1.0, d.x.data(), d.p, d.x.data(),
                     d.p, 0.0, c.data(), d.p);
    return c;
}

double lane_dot(const double* __restrict a, const double* __restrict b, std::size_t n) {
    constexpr std::size_t kLanes = 8;
    double acc[kLanes] = {};
    std::size_t k = 0;
    for (; k + kLanes <= n; k += kLanes)
#pragma GCC unroll 8
        for (std::size_t j = 0; j < kLanes; ++j) acc[j] += a[k + j] * b[k + j];
    double sum = 0;
    for (const double v : acc) sum += v;
    for (; k < n; ++k) sum += a[k] * b[k];
    return sum;
}

void gemm_slabs(const core::RangeLoop& loop, Op op_a, Op op_b, std::size_t m, std::size_t n,
                std::size_t k, const double* a, std::size_t lda, const double* b, std::size_t ldb,
                double* c, std::size_t ldc) {
    const auto slabs = static_cast<std::int64_t>((m + kSlabRows - 1) / kSlabRows);
    loop(0, slabs, [&](std::int64_t lo, std::int64_t hi) {
        for (auto i = static_cast<std::size_t>(lo); i < static_cast<std::size_t>(hi); ++i) {
            const std::size_t first = i * kSlabRows, rows = std::min(kSlabRows, m - first);
            // Row `first` of op(A): a row of A as stored, or a column of A when transposed.
            const double* a_rows = op_a == Op::kNone ? a + first * lda : a + first;
            core::blas::gemm(op_a, op_b, rows, n, k, 1.0, a_rows, lda, b, ldb, 0.0, c + first * ldc,
                             ldc);
        }
    });
}

std::vector<double> outer_gram(std::span<const double> w, std::size_t rows, std::size_t p,
                               const core::RangeLoop& loop) {
    std::vector<double> s(p * p, 0.0);
    gemm_slabs(loop, Op::kTranspose, Op::kNone, p, p, rows, w.data(), p, w.data(), p, s.data(), p);
    return s;
}

SmoothTerms smooth_terms(std::span<const double> s, std::span<const double> c, std::size_t p,
                         bool gradient, const core::RangeLoop& loop) {
    std::vector<double> a(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(p * p));
    for (std::size_t i = 0; i < p; ++i) a[i * p + i] -= 1.0;
    std::vector<double> ac(p * p, 0.0);
    gemm_slabs(loop, Op::kNone, Op::kNone, p, p, p, a.data(), p, c.data(), p, ac.data(), p);
    SmoothTerms t;
    if (gradient) t.m.resize(p * p);
    // By the products' slabs of kSlabRows rows, on `loop`: tr(A C A) = Σ_jk (AC)_jk A_kj =
    // Σ_jk (AC)_jk A_jk (A symmetric), one partial per slab summed in slab order; and, asked,
    // M = AC + C A = AC + (AC)ᵀ (both symmetric), exactly symmetric.
    const std::size_t slabs = (p + kSlabRows - 1) / kSlabRows;
    std::vector<double> partial(slabs);
    loop(0, static_cast<std::int64_t>(slabs), [&](std::int64_t lo, std::int64_t hi) {
        for (auto b = static_cast<std::size_t>(lo); b < static_cast<std::size_t>(hi); ++b) {
            const std::size_t first = b * kSlabRows, last = std::min(p, first + kSlabRows);
            partial[b] = lane_dot(ac.data() + first * p, a.data() + first * p, (last - first) * p);
            if (gradient)
                for (std::size_t i = first; i < last; ++i)
                    for (std::size_t j = 0; j < p; ++j)
                        t.m[i * p + j] = ac[i * p + j] + ac[j * p + i];
        }
    });
    double trace = 0;
    for (const double v : partial) trace += v;
    t.value = 0.5 * trace;
    return t;
}

DirectTerms direct_terms(std::span<const double> w, std::size_t rows, const Dense& d) {
    DirectTerms t;
    if (d.n == 0) return t;
    const std::size_t p = d.p;
    const std::vector<double> s = outer_gram(w, rows, p);
    // Chunks of observations bound the scratch: Y = X Wᵀ (features), R = X S − X (residuals).
    constexpr std::size_t kChunk = 4096;
    std::vector<double> y(kChunk * rows), r(kChunk * p);
    const double root = std::sqrt(static_cast<double>(rows));
    for (std::size_t first = 0; first < d.n; first += kChunk) {
        const std::size_t m = std::min(kChunk, d.n - first);
        const double* x = d.row(first);
        core::blas::gemm(Op::kNone, Op::kTranspose, m, rows, p, 1.0, x, p, w.data(), p, 0.0,
                         y.data(), rows);
        core::blas::gemm(Op::kNone, Op::kNone, m, p, p, 1.0, x, p, s.data(), p, 0.0, r.data(), p);
        for (std::size_t i = 0; i < m; ++i) {
            double l1 = 0, l2 = 0, rec = 0;
            for (std::size_t j = 0; j < rows; ++j) {
                const double v = y[i * rows + j];
                l1 += std::fabs(v);
                l2 += v * v;
            }
            for (std::size_t k = 0; k < p; ++k) {
                const double e = r[i * p + k] - x[i * p + k];
                rec += e * e;
            }
            t.l1 += l1;
            t.reconstruction += 0.5 * rec;
            if (rows > 1 && l2 > 0) t.hoyer += (root - l1 / std::sqrt(l2)) / (root - 1);
        }
    }
    t.hoyer /= static_cast<double>(d.n);
    return t;
}

double lipschitz_bound(double s_max, double c_max) {
    return c_max * (4 * s_max + 2 * std::max(s_max - 1, 1.0));
}

std::vector<double> initial_rows(std::uint64_t seed, std::size_t first, std::size_t rows,
                                 std::size_t p, std::size_t components) {
    std::vector<double> w(rows * p);
    const double scale = 1 / std::sqrt(static_cast<double>(components));
    for (std::size_t j = 0; j < rows; ++j) {
        Rng g = Rng::from({seed, first + j});
        for (std::size_t k = 0; k < p; ++k) {  // Box-Muller: one normal of two uniforms
            const double u = g.uniform() + 0x1p-60, v = g.uniform();
            w[j * p + k] = scale * std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * v);
        }
    }
    return w;
}

double largest_eigenvalue(std::span<const double> s, std::size_t p) {
    if (p == 0) return 0;
    std::vector<double> a(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(p * p)), values(p);
    core::blas::symmetric_eigen(a, values, p, false);
    return values[p - 1];
}

}  // namespace rotor::rica
