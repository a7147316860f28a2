// Stochastic gradient descent for matrix factorization over one block of ratings (one row group
// x one column group), the kernel of block-parallel SGD (FPSGD, Chin et al., "A fast parallel
// stochastic gradient method for matrix factorization in shared memory systems", ACM TIST
// 2015; DSGD, Gemulla et al., KDD 2011). The objective, the λ forms and the biases are
// objective.h's.
//
// One rating (i, j, a): with e = a − μ − b_i − c_j − w_i·h_j (before the update) and the
// per-rating share of the penalty (λ_i = λ for the weighted form, λ / |Ω_i| for plain, so that
// an epoch adds up to f's λ ρ_i; likewise λ_j, λ_b,i, λ_b,j), the half-gradients of
//     e² + λ_i ‖w_i‖² + λ_j ‖h_j‖² + λ_b,i b_i² + λ_b,j c_j²
// are g_w = λ_i w_i − e h_j, g_h = λ_j h_j − e w_i, g_b = λ_b,i b_i − e, g_c = λ_b,j c_j − e,
// all taken at the values before the update, and each moves by its own step:
//     w_i −= η / sqrt(G_i) · g_w,   G_i += ‖g_w‖² / K        (likewise h_j with G_j)
//     b_i −= η / sqrt(B_i) · g_b,   B_i += g_b²               (likewise c_j with C_j)
// with the accumulators G, B of W's rows and H's rows starting at 1.
//
// Learning rate. This is the adaptive schedule of LIBMF (Chin et al., "A learning-rate schedule
// for stochastic gradient methods to matrix factorization", PAKDD 2015): AdaGrad with one
// accumulator per row of W and per row of H (the mean of the K squared gradient coordinates)
// instead of one per coordinate. Chosen over a decaying global rate η_t = η / (1 + β t^1.5)
// because (1) it needs one η and no decay schedule to tune, and converges for η = 0.1 on the
// usual data; (2) a row's rate depends on that row's history only, not on an epoch counter, so a
// block's updates do not depend on which epoch or rank runs it; (3) the state is one float per
// row, and it travels with its H row around the ring (H's accumulators belong to the slice).
//
// Arithmetic. Float, as LIBMF's: w_i·h_j and the squared gradients over 8 lanes, the factor
// steps coordinate by coordinate, in fixed orders (no reassociation is left to the compiler, no
// FMA); the error e and the bias steps in double. Two builds of the kernel (sgd_kernel.inc):
// plain C++ and AVX2 (8 floats at a time), picked at run time; they give the same bits. Unlike
// CCD, SGD needs no exact sums: its updates touch one rating's rows at a time, and a block's
// result depends only on its ratings and their order.
//
// Order. A block's ratings are visited in their stored order, as LIBMF does: the trainer stores
// each block sorted by W row, then H row, so a W row stays in cache over its ratings and the
// scattered H rows are prefetched a few ratings ahead. (Until issue 32 each block was visited in
// a fresh random order every epoch: a 4-byte index per rating and a random walk over the
// block's ratings, for no measured gain in RMSE; docs/mf.md, "SGD".) Single-threaded; blocks
// that share no row of W and no row of H may run concurrently on the same Factors (the block
// scheduler guarantees it).
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "core/mf/factors.h"
#include "core/mf/objective.h"
#include "core/mf/sparse_view.h"

namespace rotor::mf {

/// SGD's parameters. validate() throws ConfigError naming the flag.
struct SgdParams {
    ObjectiveParams objective;
    /// η, the initial learning rate, > 0 (flag --eta). LIBMF's default.
    double eta = 0.1;

    void validate() const;
};

/// What the updates of one side (users: W, b; items: H, c) read and write, indexed by the ids
/// the block's ratings carry. Non-owning; the caller owns the arrays.
struct SgdSide {
    Factors* factors = nullptr;             ///< W or H
    std::span<float> bias;                  ///< b or c; empty without bias
    std::span<float> factor_gsum;           ///< G per row of factors, start at 1
    std::span<float> bias_gsum;             ///< B per bias, start at 1; empty without bias
    std::span<const std::uint64_t> counts;  ///< |Ω| per row; read for the plain form only
};

/// The per-row state an SgdSide points to, for owners that keep it together: accumulators at 1.
struct SgdState {
    std::vector<float> bias;
    std::vector<float> factor_gsum;
    std::vector<float> bias_gsum;

    /// State for `rows` rows: biases 0 and accumulators 1 (bias and bias_gsum empty without
    /// bias).
    SgdState(std::uint32_t rows, bool with_bias);
    /// The side of `factors` with this state and the given counts.
    SgdSide side(Factors& factors, std::span<const std::uint64_t> counts = {});
};

/// The SGD update of one rating a of (i, j) as described above; returns e before the update.
/// Precondition: i < rows.factors->rows(), j < cols.factors->rows(), shapes as in sgd_block.
double sgd_update(std::uint32_t i, std::uint32_t j, float a, SgdSide& rows, SgdSide& cols,
                  double mu, const SgdParams& p);

namespace detail {
/// One build of the block kernel (sgd_kernel.inc); shapes already checked.
using SgdBlockFn = std::uint64_t (*)(const BlockView&, SgdSide&, SgdSide&, double, const SgdParams&,
                                     const std::atomic<bool>*, double*);
/// The plain C++ build; always there.
SgdBlockFn sgd_block_scalar();
/// The AVX2 build, or null when it was not compiled in or the CPU lacks AVX2.
SgdBlockFn sgd_block_avx2();
/// AVX2 when there, else scalar; chosen once.
SgdBlockFn sgd_block_best();
}  // namespace detail

/// One pass over a block's ratings in their stored order: returns the ratings processed (fewer
/// than block.size() when *stop became true; checked before each rating) and adds their squared
/// errors e² before their updates to *loss (when not null). mu is the global mean (0 without
/// bias). `kernel` picks a build (tests); null: detail::sgd_block_best(). Every build gives the
/// same bits. Sizes are checked (a mismatch is a caller bug); ids are the data layer's to
/// validate. Time O(n K), no extra memory.
std::uint64_t sgd_block(const BlockView& block, SgdSide& rows, SgdSide& cols, double mu,
                        const SgdParams& p, const std::atomic<bool>* stop, double* loss,
                        detail::SgdBlockFn kernel = nullptr);

}  // namespace rotor::mf
