// The kernels of L1-regularised logistic regression (docs/logreg.md, "Objective"):
//     F(w) = Σ_i log(1 + exp(−y_i x_iᵀw)) + λ Σ_{k ≠ intercept} |w_k|
// (liblinear's -s 6 objective with C = 1/λ, divided by C), the intercept unpenalised.
//
// Block proximal gradient (Li et al., "Communication efficient distributed machine learning with
// the parameter server", NIPS 2014, Algorithm 2). For a block b of keys, every part PUSHES, over
// its examples,
//     g_k = Σ_i −y_i σ(−y_i m_i) x_ik                 (the gradient of the loss)
//     u_k = Σ_i c_i n_ib x_ik²                         (an upper bound of the block's Hessian)
// into exact sums (core/base/exact_sum.h), so the total over parts is bitwise the same for any
// split; n_ib is the number of example i's features in b and c_i = 1/4 (Curvature::kBound: a
// majoriser of the loss on the block, Σ_k u_k d_k² ≥ dᵀ H_bb d for every w by Cauchy–Schwarz
// and σ(1−σ) ≤ 1/4, so every step descends) or σ(m_i)σ(−m_i) (Curvature::kLocal: the curvature
// at w, as newGLMNET's, faster but not a global bound). The PULL is the proximal step with the
// coordinate-wise rate u_k / η:
//     w_k ← S(w_k − η g_k / u_k, η λ_k / u_k),   S(x, t) = sign(x) max(|x| − t, 0)
// with λ_k = 0 for the intercept; then every part adds δ_k x_ik to its margins, keys in
// increasing order, so a margin sees the same operations whatever the split.
// The kernels are single-threaded; push_slices and apply_slices may run at once on disjoint row
// ranges of one part (the threads of a worker, apps/logreg/worker.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "core/base/exact_sum.h"
#include "core/logreg/shard.h"

namespace rotor::logreg {

/// How u_k bounds the curvature (see the file comment).
enum class Curvature { kBound, kLocal };

/// What push_slices keeps of an example: slope and curve are those of `margin` (recomputed only
/// when the example's margin changed since: most of w stays 0, so most margins do not move
/// between blocks and their exp is saved; the values are the same either way).
struct TouchedExample {
    double margin = std::numeric_limits<double>::quiet_NaN();  ///< m_i of slope and curve
    double slope = 0;                                          ///< −y_i σ(−y_i m_i)
    double curve = 0;                                          ///< c_i
    std::uint32_t count = 0;  ///< n_ib, when `block` is the scratch's current block
    std::uint32_t block = 0;  ///< the block (BlockScratch::block) count belongs to
};

/// Scratch space of push_block, reused between calls on ONE part (it caches the part's
/// slopes; push_block, which does not know the part, resets it). The per-example array may be
/// shared by threads that work on disjoint rows once sized by reserve() (each writes only its
/// rows). Each block's pushes start with next_block() (once, before every thread's
/// push_slices): a count of another block is 0, so no sweep clears the counts after a block.
struct BlockScratch {
    std::vector<std::int64_t> columns;     ///< column of each block key in the part, or -1
    std::vector<TouchedExample> examples;  ///< per example of the part
    std::uint32_t block = 0;               ///< the current block's stamp (0: none yet)

    /// Sizes the per-example array for `n` examples (counts 0).
    void reserve(std::size_t n) {
        if (examples.size() != n) {
            examples.assign(n, TouchedExample{});
            block = 0;
        }
    }
    /// Starts a block: every example's count is 0 for it.
    void next_block() {
        if (++block == 0) {  // the stamps wrapped: clear them once
            for (TouchedExample& x : examples) x.block = 0;
            block = 1;
        }
    }
};

/// Where a block's keys lie in one part, restricted to a range of its rows: key t of the block
/// has the entries [begin[t], end[t]) of the part's rows() and values() (empty when the part
/// lacks the key). Rows of a column are in example order, so the entries of examples
/// [row_begin, row_end) of a column are one run. Computed once per block; a plain struct.
struct ColumnSlices {
    std::vector<std::uint64_t> begin;
    std::vector<std::uint64_t> end;
    /// max |x_ik| over key t's slice (0 when empty): bounds its terms, so that push_slices adds
    /// runs of them in an int64 without a check per term.
    std::vector<double> max_abs;
};

/// The slices of `keys` (strictly increasing) in `part`, over the examples [row_begin, row_end).
/// O(|keys| + |part.keys()| + |keys| log(column length)).
ColumnSlices column_slices(const Shard& part, std::span<const std::uint64_t> keys,
                           std::uint32_t row_begin, std::uint32_t row_end);

/// PUSH over slices: g[t] += g_k and u[t] += u_k for the block's key t over the examples of
/// the slices (n_ib counts only the entries of those slices: give every slice of a row range).
/// `scratch` must be reserve()d for the part and next_block() called once for the block (before
/// the first of its row ranges); not cleared. Threads may run it at once on
/// disjoint row ranges of one part with one shared scratch and their own g and u.
/// `skip` (empty, or one flag per key): keys flagged are left out, as if not in the block: their
/// sums are untouched and they do not count in n_ib (the KKT filter's screened keys, which
/// are not updated, so the others' curvature bound need not cover them).
void push_slices(const Shard& part, const ColumnSlices& slices, Curvature curvature,
                 std::span<core::ExactSum> g, std::span<core::ExactSum> u, BlockScratch& scratch,
                 std::span<const std::uint8_t> skip = {});

/// After a pull, over slices: m_i += deltas[t] x_ik for the block's key t, t in order (zero
/// deltas skipped). Threads may run it at once on disjoint row ranges of one part.
void apply_slices(Shard& part, const ColumnSlices& slices, std::span<const double> deltas);

/// PUSH: g[t] += g_k and u[t] += u_k over the part's examples for k = keys[t] (strictly
/// increasing; keys the part lacks get nothing). O(nnz of the block's columns). Not cleared.
void push_block(const Shard& part, std::span<const std::uint64_t> keys, Curvature curvature,
                std::span<core::ExactSum> g, std::span<core::ExactSum> u, BlockScratch& scratch);

/// The penalty weight of `key`: lambda, or 0 for kInterceptKey.
inline double penalty_of(std::uint64_t key, double lambda) noexcept {
    return key == kInterceptKey ? 0.0 : lambda;
}

/// S(x, t) = sign(x) · max(|x| − t, 0).
inline double soft_threshold(double x, double t) noexcept {
    if (x > t) return x - t;
    if (x < -t) return x + t;
    return 0;
}

/// The proximal step of one coordinate: S(w − η g / u, η λ_k / u); 0 when u = 0 (a key no
/// example has: its optimum is 0). With max_step > 0 the change is clamped to [−max_step,
/// max_step] (a trust region: Curvature::kLocal is no global bound, and where every example of
/// a key is classified with confidence, u → 0 and the step would overshoot without end).
inline double prox_step(double w, double g, double u, double lambda_k, double eta,
                        double max_step = 0) noexcept {
    if (!(u > 0)) return 0;
    const double next = soft_threshold(w - eta * g / u, eta * lambda_k / u);
    if (max_step > 0) {
        if (next > w + max_step) return w + max_step;
        if (next < w - max_step) return w - max_step;
    }
    return next;
}

/// Every part after a pull: m_i += deltas[t] x_ik for k = keys[t], t in order (zero deltas
/// skipped).
void apply_deltas(Shard& part, std::span<const std::uint64_t> keys, std::span<const double> deltas,
                  std::vector<std::int64_t>& columns);

/// Sets the margins from w given as sorted `keys` with `w` (keys the part lacks are ignored; its
/// keys missing from `keys` count as 0), summing each margin in key order.
void set_margins(Shard& part, std::span<const std::uint64_t> keys, std::span<const double> w);

/// log(1 + exp(−z)), accurate for every z.
double log1pexp_neg(double z) noexcept;

/// PUSH of the loss: loss += Σ_i log(1 + exp(−y_i m_i)) over the part's examples.
void push_loss(const Shard& part, core::ExactSum& loss);

/// λ Σ |w_k| over keys other than kInterceptKey, summed exactly.
double penalty(std::span<const std::uint64_t> keys, std::span<const double> w, double lambda);

/// |the min-norm subgradient| of one coordinate: |g + λ_k sign(w)| (w ≠ 0) or
/// max(0, |g| − λ_k) (w = 0); 0 exactly where the coordinate is optimal given the others.
inline double subgradient_of(double w, double g, double lambda_k) noexcept {
    if (w != 0) return std::fabs(g + std::copysign(lambda_k, w));
    const double a = std::fabs(g) - lambda_k;
    return a > 0 ? a : 0.0;
}

/// The KKT violation of w given the full gradient g (all aligned with keys): the largest, over
/// k, of |g_k + λ_k sign(w_k)| (w_k ≠ 0) or max(0, |g_k| − λ_k) (w_k = 0). 0 at the optimum.
double kkt_violation(std::span<const std::uint64_t> keys, std::span<const double> w,
                     std::span<const double> g, double lambda);

/// The 1-norm of the min-norm subgradient of F at w (the sum over k of subgradient_of), the
/// quantity of the stopping rule (docs/logreg.md, "Stopping"; liblinear's ‖∇^S f‖₁).
double subgradient_norm(std::span<const std::uint64_t> keys, std::span<const double> w,
                        std::span<const double> g, double lambda);

/// The smallest λ at which the optimum has every penalised weight 0 (the top of a λ path): with
/// the intercept (`part` has kInterceptKey) the intercept alone is then log(p / (1 − p)), p the
/// share of +1 labels, and λ_max = max_k |Σ_i x_ik (p − [y_i = +1])|; without it w = 0 and p =
/// 1/2. Over the part's examples (the whole data in one part). 0 when no feature can enter (one
/// class with the intercept, or no nonzero feature). O(nnz).
double lambda_max(const Shard& part);

/// The stopping rule of every solver: the min-norm subgradient's 1-norm at w (`norm`) is at most
/// `tol` times its value at w = 0 (`norm0`; liblinear's -s 6 test without its class-balance
/// factor). Never with tol = 0. At w = 0 with norm0 = 0, w = 0 is the optimum: converged.
inline bool subgradient_converged(double norm, double norm0, double tol) noexcept {
    return tol > 0 && norm <= tol * norm0;
}

/// The default tolerance of the stopping rule (--tol).
inline constexpr double kDefaultTol = 1e-4;

}  // namespace rotor::logreg
