// Implicit-feedback matrix factorization (docs/mf.md, "Implicit feedback"): the weighted
// objective of Hu, Koren and Volinsky ("Collaborative filtering for implicit feedback datasets",
// ICDM 2008) solved by alternating least squares with a few conjugate-gradient steps per row
// (Takács, Pilászy and Tikk, "Applications of the conjugate gradient method for implicit
// feedback collaborative filtering", RecSys 2011; the method of implicit's
// AlternatingLeastSquares).
//
// Every (user u, item i) pair counts: the preference p_ui = 1 when the matrix holds r_ui > 0,
// else 0, with the confidence c_ui = 1 + α r_ui (1 for an unobserved pair). The objective is
//     f = Σ_(u,i) c_ui (p_ui − x_u·y_i)²  +  λ (Σ_u ‖x_u‖² + Σ_i ‖y_i‖²)
// over ALL N × M pairs, unnormalised, λ plain (the same for every row). With Y fixed, row u's
// minimiser solves
//     (YᵀY + Yᵀ(C_u − I)Y + λI) x_u = Yᵀ C_u p_u
// where only u's observed items enter the second term and the right side: YᵀY + λI (the Gram
// matrix G) is computed once per half-step, and each row's system costs K² + O(|Ω_u| K) per CG
// step. The CG starts from the current x_u (a warm start) and takes `cg_steps` steps (3, as
// implicit does), or stops once ‖r‖² < 1e-20. Items are the same with the roles swapped.
//
// Arithmetic: float throughout, as implicit's CPU solver. Every sum runs in a fixed order that
// depends only on K (and, for G, on the number of rows of Y): G's entries are sums over Y's rows
// in chunks of 256 (float within a chunk, double across chunks); products G p run in k order;
// dot products over 8 lanes reduced in a fixed order. Multiplications and additions are
// separate IEEE operations (no fused multiply-add), so the plain and the AVX2 build of the kernel
// (picked once at run time) give the same bits, and a row's result depends only on its own
// ratings, x_u and Y: any split of the rows over threads or ranks gives the same model.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/mf/factors.h"
#include "core/mf/sparse_view.h"

namespace rotor::mf {

/// The implicit objective's parameters and the solver's. validate() throws ConfigError naming
/// the flag.
struct IalsParams {
    /// λ on every row of X and Y (plain), >= 0 (--lambda; the CLI defaults it to 10 with
    /// --implicit: docs/mf.md, "Implicit feedback").
    double lambda = 0.1;
    /// α in c = 1 + α r, >= 0 and finite (--alpha; 5 by measurement: docs/mf.md).
    double alpha = 5.0;
    /// CG steps per row and half-step, 1..1024 (--cg-steps; implicit's default 3).
    std::uint32_t cg_steps = 3;

    void validate() const;
};

/// Rows of X solved at once (their CG runs in lockstep, so that G is read once per batch).
inline constexpr std::uint32_t kIalsBatch = 16;

/// Working memory of one thread's solves (4 kIalsBatch × K floats). Not thread-safe.
struct IalsScratch {
    std::vector<float> x, r, p, ap;
    std::vector<double> rs;
    std::vector<std::uint8_t> active;
};

/// G's row groups (multiples of 4) for `parts` workers, balanced by the triangle's cost: parts + 1
/// boundaries in 0..k.
std::vector<std::uint32_t> gram_row_split(std::uint32_t k, int parts);

/// Computes G = YᵀY + λI's rows [row_begin, row_end) (row_begin a multiple of 4) from column
/// (a rounded down to 16) on, into g (K × K floats, row-major). The rest of each row is filled
/// by gram_mirror once every row's part is done. Distinct row ranges may run at once.
void gram_upper(const Factors& y, double lambda, std::uint32_t row_begin, std::uint32_t row_end,
                std::span<float> g);
/// Fills rows [row_begin, row_end) of g left of what gram_upper computed, from the transposed
/// entries (G is exactly symmetric: each entry is the same sum of the same products).
void gram_mirror(std::uint32_t k, std::uint32_t row_begin, std::uint32_t row_end,
                 std::span<float> g);
/// Both, on one thread.
void gram(const Factors& y, double lambda, std::span<float> g);

/// One half-step for rows [begin, end) of x: a.outer_size() == x.rows(), a's ids index y's rows,
/// its values are r (>= 0). g is gram(y, λ). Each row's CG is independent of the others.
void ials_solve(const SparseView& a, const Factors& y, std::span<const float> g,
                const IalsParams& params, Factors& x, std::uint32_t begin, std::uint32_t end,
                IalsScratch& scratch);

/// The part of f that rows [begin, end) of x carry, one double per row into terms[row - begin]:
/// x_uᵀ G x_u + Σ_(i∈Ω_u) [c_ui (p_ui − x_u·y_i)² − (x_u·y_i)²], with g = gram(y, λ) (so that
/// Σ_u terms + λ Σ_i ‖y_i‖² = f).
void ials_row_terms(const SparseView& a, const Factors& y, std::span<const float> g,
                    const IalsParams& params, const Factors& x, std::uint32_t begin,
                    std::uint32_t end, std::span<double> terms);

/// out[j] = w_u·h_j for every row j of h, in float (the kernel's dot product): the scores the
/// ranking metrics rank by.
void ials_scores(const Factors& h, std::span<const float> w_u, std::span<float> out);

/// f itself over every row (one thread; tests and small checks).
double ials_objective(const SparseView& a, const Factors& x, const Factors& y,
                      const IalsParams& params);

namespace detail {
/// The kernel's builds, for the test that they agree bitwise.
struct IalsKernels {
    void (*gram_upper)(const Factors&, double, std::uint32_t, std::uint32_t, std::span<float>);
    void (*solve)(const SparseView&, const Factors&, std::span<const float>, const IalsParams&,
                  Factors&, std::uint32_t, std::uint32_t, IalsScratch&);
};
IalsKernels ials_kernels_scalar();
/// Null members when the CPU has no AVX2 (or the build targets another architecture).
IalsKernels ials_kernels_avx2();
}  // namespace detail

}  // namespace rotor::mf
