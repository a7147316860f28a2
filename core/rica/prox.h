// The proximal step of RICA on a block of rows of W (Li et al., NIPS 2014, Appendix C, eqs. 17
// and 19a–19c; docs/rica.md, "Algorithm"). For each row w of the block, with g its row of
// ∇f(W) = W M (core/rica/objective.h), the step solves (eq. 17)
//
//     w⁺ = argmin_w  ⟨g, w − w⁰⟩ + (a/2)‖w − w⁰‖² + λ‖X w‖₁  =  argmin_w (a/2)‖w − v‖² + λ‖X w‖₁,
//
// v = w⁰ − g / a, in the metric H = a·I with a = L·h / η: L the Lipschitz bound of ∇f
// (lipschitz_bound), η ≤ 1 the step scale, h the row's AdaGrad-style factor, h(0) = 1 and
// h ← √(h² + ‖Δw‖² / ‖w‖²) after each step (the squared relative changes of w accumulate, so a
// row that keeps moving takes smaller steps). The L1 term is not separable by coordinates, so
// the step is solved by ADMM on the split z = X w (scaled dual u, penalty ρ = a / c̄, c̄ the mean
// eigenvalue of C, which balances the two quadratic terms):
//
//     (19a)  w ← (a I + ρ C)⁻¹ (a v + ρ Xᵀ(z − u))      by C = Q Λ Qᵀ: Q diag(1/(a + ρΛ)) Qᵀ
//     (19b)  z ← shrink_{λ/ρ}(X w + u)
//     (19c)  u ← u + X w − z
//
// z and u (n per row) are kept from one step to the next (warm start), so a few ADMM
// iterations a step suffice; when ρ changes, u is rescaled (u = y/ρ for the unscaled dual y).
// Every operation over the block is a gemm on the whole block (core/base/blas.h), whose shapes
// depend on the block's row count only.
//
// Thread-safety: functions over their arguments; a BlockState and a Scratch belong to one
// caller at a time.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/rica/objective.h"

namespace rotor::rica {

/// C = Q Λ Qᵀ, shared by every row's solve (19a). A value type.
struct Spectrum {
    std::size_t p = 0;
    std::vector<double> q;       ///< p×p, eigenvectors as columns
    std::vector<double> values;  ///< Λ, ascending, clamped at 0
    double mean = 0;             ///< c̄ = tr(C)/p
    double largest = 0;          ///< ‖C‖₂
    static Spectrum of(std::span<const double> c, std::size_t p);
};

/// The ADMM state of a block of rows, kept between steps.
struct BlockState {
    std::size_t rows = 0;
    std::vector<double> h;    ///< per row: the metric factor (1 at the start)
    std::vector<double> rho;  ///< per row: the ρ u is scaled by (0: none yet)
    std::vector<double> z;    ///< n×rows, row-major: z for observation i, row j at i·rows + j
    std::vector<double> u;    ///< n×rows, the scaled dual
};

/// Per-caller scratch of the ADMM (sized on first use).
struct Scratch {
    std::vector<double> y, r, t, v;
};

/// A fresh state for the `rows`×p block `w`: h = 1, z = X wᵀ, u = 0. Returns Σ_j ‖X w_j‖₁.
double init_block(const Dense& data, std::span<const double> w, std::size_t rows, BlockState& st,
                  Scratch& scratch);

/// r = Xᵀ(z − u) of the block (rows×p): the data side of (19a), one n×p×rows gemm.
void dual_target(const Dense& data, const BlockState& st, Scratch& scratch, std::span<double> r);

/// (19b) and (19c) for the block's new rows `w` (rows×p): y = X wᵀ, z ← shrink_{cut_j}(y + u),
/// u ← u + y − z, with cut_j = λ/ρ_j per row. Returns Σ_j ‖X w_j‖₁ (of y).
double split_update(const Dense& data, std::span<const double> w, std::span<const double> cut,
                    BlockState& st, Scratch& scratch);

/// Solves min_w Σ_j (a_j/2)‖w_j − v_j‖² + λ‖X w_j‖₁ for the block's rows by `iterations`
/// ADMM iterations (19a–19c), warm-started from `st` (whose z, u it updates), into `w`
/// (rows×p). `v` rows×p, `a` per row (> 0). Returns Σ_j ‖X w_j‖₁ of the w returned (the X w of
/// the last iteration). iterations >= 1.
double admm_prox(const Dense& data, const Spectrum& spectrum, std::span<const double> v,
                 std::span<const double> a, double lambda, int iterations, BlockState& st,
                 Scratch& scratch, std::span<double> w);

/// Options of prox_gradient_step. A plain struct.
struct StepOptions {
    double lambda = 0;        ///< λ > 0
    double eta = 1;           ///< step scale η in (0, 1]: a safe step at 1 for an exact prox
    double lipschitz = 0;     ///< L (lipschitz_bound at the current S)
    int admm_iterations = 2;  ///< ADMM iterations per step
};

/// One proximal gradient step of the block (eq. 17 by ADMM): g = w M, v = w − g/a, w ← the prox,
/// then h updated. `m` is M = AC + CA (p×p). Returns Σ_j ‖X w_j‖₁ of the new rows.
double prox_gradient_step(const Dense& data, const Spectrum& spectrum, std::span<const double> m,
                          const StepOptions& options, std::span<double> w, BlockState& st,
                          Scratch& scratch);

}  // namespace rotor::rica
