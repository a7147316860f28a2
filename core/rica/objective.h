// The reconstruction ICA problem (Le et al., NIPS 2011; the parameter-server paper's second
// application, Li et al., NIPS 2014, Appendix C; docs/rica.md, "The problem"): given
// observations x_1 … x_n in R^p (the rows of X), find W in R^{ℓ×p} minimising (eq. 15)
//
//     F(W) = Σ_i ½ ‖WᵀW x_i − x_i‖² + λ ‖W x_i‖₁  =  f(W) + λ Σ_j ‖X w_j‖₁,
//
// with w_j the rows of W. The smooth part depends on the data only through C = XᵀX (p×p):
// with S = WᵀW and A = S − I, f(W) = ½ tr(A C A) and its gradient is (eq. 16)
//
//     ∇f(W) = W (A C + C A),
//
// so an iteration's smooth work is O(p³ + ℓ p²), independent of n. The L1 term separates by
// rows of W (λ‖X w_j‖₁) but not by coordinates: its proximal step is core/rica/prox.h's ADMM.
//
// Shapes: every matrix is row-major; X n×p, W ℓ×p, C, S, A p×p.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/base/blas.h"
#include "core/base/range_loop.h"

namespace rotor::rica {

/// Dense observations, one per row. A value type.
struct Dense {
    std::size_t n = 0;      ///< observations
    std::size_t p = 0;      ///< dimension
    std::vector<double> x;  ///< n×p, row-major
    const double* row(std::size_t i) const { return x.data() + i * p; }
};

/// C = XᵀX (p×p, both triangles), by one gemm: the same bits wherever it is computed.
std::vector<double> gram(const Dense& data);

/// What f needs of S = WᵀW: f = ½ tr(A C A) and, when asked, M = A C + C A, so that
/// ∇f(W) = W M (eq. 16).
struct SmoothTerms {
    double value = 0;       ///< f(W) = Σ_i ½‖WᵀW x_i − x_i‖²
    std::vector<double> m;  ///< p×p (empty unless asked)
};

/// Σ_k a_k b_k over k < n in a fixed order: 8 running sums (k mod 8; the loop vectorises), then
/// the sums in order, then the tail. The same bits wherever it runs.
double lane_dot(const double* a, const double* b, std::size_t n);

/// Rows of a product per gemm_slabs call: the unit of its parallel work.
inline constexpr std::size_t kSlabRows = 32;

/// core::blas::gemm (C = op(A) op(B), beta = 0) cut into slabs of kSlabRows rows of C, one call
/// each, run by `loop`. The cut depends on m only, so the result is the same bits for any loop.
void gemm_slabs(const core::RangeLoop& loop, core::blas::Op op_a, core::blas::Op op_b,
                std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
                const double* b, std::size_t ldb, double* c, std::size_t ldc);

/// f and (with `gradient`) M from S (p×p, both triangles) and C. O(p³), its product by
/// gemm_slabs over `loop`, and the trace and M by the same slabs (one partial per slab).
SmoothTerms smooth_terms(std::span<const double> s, std::span<const double> c, std::size_t p,
                         bool gradient, const core::RangeLoop& loop = core::serial_loop);

/// S = WᵀW of the ℓ×p matrix w (p×p, both triangles), by gemm_slabs over `loop`.
std::vector<double> outer_gram(std::span<const double> w, std::size_t rows, std::size_t p,
                               const core::RangeLoop& loop = core::serial_loop);

/// The terms of F(W) computed from the data directly, without C: what `rotor rica eval` reports
/// and what tests compare the C route with.
struct DirectTerms {
    double reconstruction = 0;  ///< Σ_i ½‖WᵀW x_i − x_i‖²
    double l1 = 0;              ///< Σ_i ‖W x_i‖₁
    double hoyer = 0;  ///< mean over i of Hoyer's sparsity of W x_i, (√ℓ − ‖·‖₁/‖·‖₂)/(√ℓ − 1)
    double objective(double lambda) const { return reconstruction + lambda * l1; }
};
DirectTerms direct_terms(std::span<const double> w, std::size_t rows, const Dense& data);

/// A bound on the Lipschitz constant of ∇f near W, from s_max = ‖W‖₂² (the largest eigenvalue
/// of S) and c_max = ‖C‖₂: along a direction D, d²f = tr(dA C dA) + 2 tr(A C DᵀD) with
/// ‖dA‖_F ≤ 2‖W‖₂‖D‖_F and ‖A‖₂ ≤ max(s_max − 1, 1), so L ≤ c_max (4 s_max + 2 max(s_max − 1, 1)).
double lipschitz_bound(double s_max, double c_max);

/// Rows [first, first + rows) of the initial W: entries N(0, 1/ℓ) (so that E[WᵀW] = I), row j
/// drawn from its own generator seeded by (seed, j): the same rows whoever makes them.
std::vector<double> initial_rows(std::uint64_t seed, std::size_t first, std::size_t rows,
                                 std::size_t p, std::size_t components);

/// The largest eigenvalue of the symmetric p×p matrix `s` (LAPACK, no vectors).
double largest_eigenvalue(std::span<const double> s, std::size_t p);

}  // namespace rotor::rica
