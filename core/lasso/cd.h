// Coordinate descent for the Lasso written as the push/pull of STRADS (Lee et al., "On model
// parallelization and scheduling strategies for distributed machine learning", NIPS 2014, §3.2)
// over parts of the samples (docs/lasso.md, "The update as push/pull").
//
// The problem the kernels solve is the standardised one of design.h, in glmnet's normalisation:
//     f(b) = 1/(2N) ‖ỹ − Z b‖² + λ̃ ‖b‖₁,   λ̃ = λ / σ_y,   Z = X̃ − 1 cᵀ
// (σ_y² f is the user-unit objective of objective.h). Coordinate j's exact minimiser with the
// others fixed is the soft-threshold (Friedman, Hastie & Tibshirani, "Regularization paths for
// generalized linear models via coordinate descent", J. Stat. Softw. 2010, eq. 5):
//     b_j ← S(d_j b_j + g_j, λ̃) / d_j,   g_j = z_jᵀ r / N,   S(x, t) = sign(x) max(|x| − t, 0)
// with r = ỹ − Z b the residual and d_j = ‖z_j‖² / N (1 for a standardised column).
//
// State. Each part keeps q = ỹ − X̃ b over its rows (sparse to update); the true residual is
// r_i = q_i + o with o = Σ_j c_j b_j replicated, so z_jᵀ r = x̃_jᵀ q − c_j Σ_i q_i and
// Σ_i q_i = Σ_i ỹ_i − N o: g_j needs only x̃_jᵀ q, which splits over parts.
//
// A round over a set C of distinct coordinates: every part PUSHES x̃_jᵀ q over its rows for j ∈ C
// into exact sums; the PULL adds the parts (in part index order, though exactness makes the order
// irrelevant), computes every b_j of C from the SAME residual (parallel semantics, as Shotgun and
// STRADS do), updates b, the last changes δ_j and o (add_offset_changes); then every part subtracts
// δ_j x̃_j from its q, for j in C's order. A row's residual sees the same operations in the same
// order whatever the split, and pushes are exact sums, so 1 part and P parts give bitwise the
// same b and q. The sequential round (cyclic coordinate descent) is one such round per coordinate.
// Single-threaded; no threads, no ranks: a trainer runs the pushes of its parts where it likes
// and reduces them (core::ExactSum limbs through an allreduce).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/exact_sum.h"
#include "core/base/huge_pages.h"
#include "core/lasso/design.h"

namespace rotor::lasso {

/// What every part needs besides its rows: small, replicated (2p doubles). Non-owning.
struct ProblemView {
    std::uint32_t samples = 0;         ///< N over every part
    std::span<const double> shifts;    ///< c_j
    std::span<const double> sq_norms;  ///< d_j = ‖z_j‖² / N
    double target_sum = 0;             ///< Σ_i ỹ_i over every part
    double y_scale = 1;                ///< σ_y: λ̃ = λ / σ_y

    static ProblemView of(const Design& d) {
        return {d.samples(), d.shifts(), d.sq_norms(), d.target_sum(), d.standardization().y_scale};
    }
    std::uint32_t features() const { return static_cast<std::uint32_t>(shifts.size()); }
};

/// The coefficients, replicated on every part. A value type.
struct Coefficients {
    HugeVector<double> b;           ///< standardised coefficients b_j (the model's β_j / σ_y)
    HugeVector<double> last_delta;  ///< δ_j: b_j's change at its last update (0 before any)
    double offset = 0;              ///< o = Σ_j c_j b_j, kept current by every pull

    explicit Coefficients(std::uint32_t p = 0) : b(p, 0), last_delta(p, 0) {}
    std::uint32_t nonzeros() const;
};

/// S(x, t) = sign(x) · max(|x| − t, 0).
inline double soft_threshold(double x, double t) {
    if (x > t) return x - t;
    if (x < -t) return x + t;
    return 0;
}

/// The closed-form update of one coordinate: argmin over b of d/2 b² − (d b_old + g) b + λ̃|b|,
/// i.e. S(d b_old + g, λ̃) / d; 0 for d = 0 (a constant column).
inline double coordinate_update(double b_old, double g, double d, double lambda_tilde) {
    if (!(d > 0)) return 0;
    return soft_threshold(d * b_old + g, lambda_tilde) / d;
}

/// q = ỹ − X̃ b over the part's rows (o is set by set_offset()). Used at the start and after a
/// warm start.
void init_residuals(const PartView& part, std::span<const double> b);

/// o = Σ_j c_j b_j, exactly summed (so every part computes the same value).
void set_offset(const ProblemView& problem, Coefficients& coefs);

/// PUSH: sums[t] += Σ over the part's rows of x̃_ij q_i for j = coords[t]. O(Σ nnz of the
/// columns in the part). sums is not cleared.
void push_gradients(const PartView& part, std::span<const std::uint32_t> coords,
                    std::span<core::ExactSum> sums);
/// push_gradients into sums that need no clearing: sums[t] = the part's x̃_jᵀq (overwritten).
void push_gradients_into(const PartView& part, std::span<const std::uint32_t> coords,
                         std::span<core::ExactSum> sums);

/// PULL: from the total of every part's push (total[t] for coords[t]), sets
/// deltas[t] = b_j(new) − b_j(old) for j = coords[t], every one from the same residual, and
/// updates coefs (b, last_delta of the coordinates, offset by add_offset_changes). lambda in user
/// units. Returns how many coordinates changed.
std::uint32_t pull_updates(const ProblemView& problem, double lambda,
                           std::span<const std::uint32_t> coords,
                           std::span<const core::ExactSum> total, Coefficients& coefs,
                           std::span<double> deltas);

/// The pull of pull_updates split over ranges of a round (a trainer's threads), the same bits:
/// for t in [lo, hi) (coords distinct), from q_sum = Σ ỹ − N o BEFORE the round, sets deltas[t],
/// updates b_j and last_delta_j of j = coords[t], and sets shift_deltas[t] = c_j δ_t; the offset
/// is left to add_offset_changes. Ranges may run concurrently. Returns how
/// many of them changed and max d_j δ_j² over the range.
struct PullStats {
    std::uint32_t changed = 0;
    double largest = 0;  ///< max d_j δ_j² (standardised units)
};
PullStats pull_range(const ProblemView& problem, double lambda, double q_sum,
                     std::span<const std::uint32_t> coords, std::span<const core::ExactSum> total,
                     std::size_t lo, std::size_t hi, Coefficients& coefs, std::span<double> deltas,
                     std::span<double> shift_deltas);
/// What pull_range does to b and last_delta of coordinates whose changes were computed
/// elsewhere (another rank's share of a round): for t in [lo, hi), b_j += δ_t (the same
/// operation, so the same bits) and last_delta_j = δ_t, j = coords[t]. Nothing else is read: the
/// rank that pulled them sends c_j δ_j and the largest d_j δ_j² with the δ's. Returns how many
/// changed. Ranges may run concurrently.
std::uint32_t apply_pulled(std::span<const std::uint32_t> coords, std::size_t lo, std::size_t hi,
                           std::span<const double> deltas, Coefficients& coefs);
/// Σ ỹ − N o: the q_sum of pull_range.
inline double residual_sum(const ProblemView& problem, const Coefficients& coefs) {
    return problem.target_sum - double(problem.samples) * coefs.offset;
}
/// o += Σ_t shift_deltas[t], summed in eight lanes (t mod 8) added in a fixed order (as
/// pull_updates): the same bits for the same changes, however they were computed.
void add_offset_changes(std::span<const double> shift_deltas, Coefficients& coefs);

/// Every part after a pull: q_i −= δ_t x̃_ij for j = coords[t], t in order, over its rows.
void update_residuals(const PartView& part, std::span<const std::uint32_t> coords,
                      std::span<const double> deltas);

/// What a round did.
struct RoundStats {
    std::uint32_t updated = 0;  ///< coordinates in the round
    std::uint32_t changed = 0;  ///< of them, those whose b_j changed
    double max_abs_delta = 0;   ///< max |δ_j| over the round (standardised units)
};

/// One round in parallel semantics over parts: push on every part, pull, update every part's
/// residuals. coords must be distinct (a scheduler's output). lambda in user units.
RoundStats parallel_round(std::span<const PartView> parts, const ProblemView& problem,
                          double lambda, std::span<const std::uint32_t> coords,
                          Coefficients& coefs);

/// Sequential coordinate descent over coords in order (coordinates may repeat): each one a
/// parallel_round of one coordinate, so each sees the residual left by the one before.
RoundStats sequential_round(std::span<const PartView> parts, const ProblemView& problem,
                            double lambda, std::span<const std::uint32_t> coords,
                            Coefficients& coefs);

}  // namespace rotor::lasso
