// The Lasso's schedulers: which coordinates a round updates (docs/lasso.md, "Schedulers").
// Pure functions of their inputs and of a seeded Rng; the rounds themselves are cd.h's.
//
//   - cyclic: coordinates in order, run with sequential_round() (the exact baseline);
//   - shotgun (Bradley et al., "Parallel coordinate descent for L1-regularized loss
//     minimization", ICML 2011): L distinct coordinates drawn uniformly, run with
//     parallel_round();
//   - strads (Lee et al., NIPS 2014, §3.2, "dynamic schedule"): L' candidates drawn without
//     replacement with p(j) ∝ δb_j² + η (δb_j: the coordinate's last change), then, in draw
//     order, a candidate is kept when |corr(z_j, z_k)| < ρ for every coordinate k kept before
//     it (and, rotor's addition, while every kept row of the round's correlation matrix sums
//     below 1 in absolute value: kRowSumBound), until L are kept; run with parallel_round().
//
// The correlation check needs z_jᵀz_k for candidate pairs. Like the gradients, it is a push/pull
// over parts of the samples: each part pushes the partial x̃_jᵀx̃_k of its rows for every pair of
// candidates into exact sums (push_candidate_dots), and select_uncorrelated() reads the total,
// so the selection is the same for any split. Cost per part and round: L'(L'−1)/2 sparse dot
// products, computed by scattering each candidate's column into a dense row buffer and walking
// the later candidates' columns: O(L' · Σ_{candidates} nnz in the part) time, O(rows) scratch.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/base/rng.h"
#include "core/lasso/cd.h"

namespace rotor::lasso {

/// `count` coordinates first, first + 1, ... wrapping at p (cyclic coordinate descent).
std::vector<std::uint32_t> schedule_cyclic(std::uint32_t p, std::uint32_t first,
                                           std::uint32_t count);

/// min(L, p) distinct coordinates drawn uniformly, in draw order (Floyd's algorithm; O(L)
/// expected time, independent of p).
std::vector<std::uint32_t> schedule_shotgun(Rng& rng, std::uint32_t p, std::uint32_t parallel);

/// Weights w_j = δ_j² + η in a sum tree (a complete binary tree over a power of two of leaves;
/// a parent is recomputed as left + right, so weights never drift and every replica holding the
/// same deltas holds bitwise the same tree). O(log p) per update and per draw. A value type;
/// not thread-safe.
class PrioritySampler {
  public:
    /// Weights from the coefficients' last changes (p = deltas.size()). eta > 0.
    PrioritySampler(std::span<const double> deltas, double eta);

    /// w_j = delta² + η.
    void update(std::uint32_t j, double delta);
    double weight(std::uint32_t j) const { return tree_[leaves_ + j]; }
    double total() const { return tree_[1]; }
    std::uint32_t size() const { return size_; }
    /// min(count, p) distinct coordinates, drawn one after the other with probability ∝ weight
    /// among those not drawn yet, in draw order. Weights are unchanged on return.
    std::vector<std::uint32_t> draw(Rng& rng, std::uint32_t count);

  private:
    void set(std::uint32_t j, double w);

    std::uint32_t size_ = 0;
    std::uint32_t leaves_ = 1;
    double eta_ = 0;
    std::vector<double> tree_;  ///< tree_[1] the root; leaf j at leaves_ + j
};

/// The STRADS scheduler's parameters (the trainer's --candidates, --parallel, --rho, --eta).
/// validate() throws ConfigError naming the flag.
struct StradsParams {
    std::uint32_t candidates = 32;  ///< L': coordinates drawn per round, >= parallel
    std::uint32_t parallel = 16;    ///< L: at most this many updated per round, >= 1
    double rho = 0.3;               ///< correlation bound in (0, 1]
    double eta = 1e-6;              ///< floor of the priority, > 0 (standardised units)

    void validate() const;
};

/// Number of unordered pairs of m candidates, and the index of pair (a, b), a < b < m, in the
/// sums of push_candidate_dots (row-major upper triangle).
inline std::size_t pair_count(std::size_t m) { return m * (m - 1) / 2; }
inline std::size_t pair_index(std::size_t a, std::size_t b, std::size_t m) {
    return a * m - a * (a + 1) / 2 + (b - a - 1);
}

/// PUSH of the correlation check over one part: sums[pair_index(a, b, m)] += Σ over the part's
/// rows of x̃_{i,candidates[a]} x̃_{i,candidates[b]}. scratch: a buffer the function sizes to the
/// part's rows and leaves zeroed (reuse it across rounds).
void push_candidate_dots(const PartView& part, std::span<const std::uint32_t> candidates,
                         std::span<core::ExactSum> sums, std::vector<double>& scratch);

/// corr(z_a, z_b) = z_aᵀz_b / (N √(d_a d_b)) from the pulled x̃_aᵀx̃_b (0 when a column is
/// constant: its update is a no-op and conflicts with nothing).
double correlation(const ProblemView& problem, std::uint32_t a, std::uint32_t b, double dot);

/// The outcome of a STRADS schedule.
struct Selection {
    std::vector<std::uint32_t> kept;  ///< the coordinates to update, in draw order
    std::uint32_t rejected = 0;       ///< candidates examined and rejected by the check
    std::uint32_t bounded = 0;        ///< of them, those only the row-sum bound rejected
};

/// The bound on a kept coordinate's row of the round's correlation matrix M (unit diagonal):
/// Σ_{k kept, k ≠ j} |M_jk| < kRowSumBound for every kept j, so λ_max(M) < 1 + kRowSumBound = 2
/// (Gershgorin) and the round's parallel update cannot increase the objective:
/// f(b + δ) − f(b) ≤ −½ δᵀD^½(2I − M)D^½δ < 0 (docs/lasso.md, "Parallel updates that cannot
/// diverge"). rotor's addition to STRADS' pairwise check, which alone lets many mildly
/// correlated columns into one round.
inline constexpr double kRowSumBound = 1.0;

/// The greedy scan of the STRADS check: in draw order, a candidate is kept when |corr| < rho
/// with every kept one and the kept rows' sums of |corr| (the candidate's own included) stay
/// below kRowSumBound, until `parallel` are kept. corr(a, b): the correlation of the candidates
/// at positions a < b, asked only for the pairs the scan reaches (kept a, candidate b, in kept
/// order up to the first conflict with rho or the bound).
Selection select_greedy(std::span<const std::uint32_t> candidates, const StradsParams& params,
                        const std::function<double(std::size_t, std::size_t)>& corr);

/// PULL of the correlation check: select_greedy with the correlations of the pulled pair dots.
/// total: the exact sums of every part.
Selection select_uncorrelated(const ProblemView& problem, std::span<const std::uint32_t> candidates,
                              std::span<const core::ExactSum> total, const StradsParams& params);

/// The whole STRADS schedule on one process holding every part: draw, push on every part, add,
/// select. The same Rng state, sampler and coefficients give the same selection for any split.
Selection schedule_strads(Rng& rng, PrioritySampler& sampler, std::span<const PartView> parts,
                          const ProblemView& problem, const StradsParams& params);

}  // namespace rotor::lasso
