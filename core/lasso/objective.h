// The Lasso's objective, λ_max, the duality gap and the KKT violation (docs/lasso.md,
// "Objective and stopping").
//
// In glmnet's and scikit-learn's normalisation, on the standardised features (the penalty is on
// the standardised coefficients β_std = σ_y b, as glmnet's standardize = TRUE does):
//     F(β_std) = 1/(2N) ‖y − ȳ_fit − Z β_std‖² + λ ‖β_std‖₁ = σ_y² f(b)
// with the unpenalised intercept fitted (absorbed by the centring) unless no_intercept, and the
// paper's unnormalised form (Lee et al., NIPS 2014, eq. 4: ½‖y − Xβ‖² + λ'‖β‖₁ with λ' = Nλ)
//     F_paper = N · F.
// The duality gap is scikit-learn's for the Lasso dual (sklearn/linear_model/_cd_fast.pyx,
// enet_coordinate_descent with l2 = 0), divided by N so it is in F's units: with r the residual,
// α = Nλ̃, a = Zᵀr and κ = min(1, α / ‖a‖_∞),
//     gap = [½ (1 + κ²) ‖r‖² + α ‖b‖₁ − κ rᵀỹ] · σ_y² / N       (κ = 1: ‖r‖² for the first term)
// which is ≥ 0 and 0 exactly at the optimum; scikit-learn stops at gap < tol · ‖y − ȳ‖² / N,
// i.e. relative_gap = gap / σ_y² < tol. The KKT violation is max_j of the distance of
// g_j = z_jᵀ(y − ŷ)/N from λ·sign(β_j) (β_j ≠ 0) or from [−λ, λ] (β_j = 0), in y's units.
//
// Evaluation is a push/pull too: each part pushes x̃ᵀq for every column and its sums of r², rᵀỹ
// and q into exact sums; evaluate() reads the total. Single-threaded.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/huge_pages.h"
#include "core/lasso/cd.h"

namespace rotor::lasso {

/// A part's (or the total's) sums for an evaluation. A value type.
struct EvalSums {
    HugeVector<core::ExactSum> xq;  ///< x̃_jᵀ q per column (24 MB at 10^6 columns: huge pages)
    core::ExactSum q_sum;           ///< Σ q_i
    core::ExactSum rr;              ///< Σ r_i², r_i = q_i + o
    core::ExactSum ry;              ///< Σ r_i ỹ_i

    explicit EvalSums(std::uint32_t p = 0) : xq(p) {}
    /// Adds another part's sums (same size), exactly.
    void add(const EvalSums& other);
};

/// PUSH for an evaluation over one part's rows: O(nnz of the part + rows). sums not cleared.
void push_evaluation(const PartView& part, double offset, EvalSums& sums);

/// The row half of push_evaluation: adds the part's Σ q_i, Σ r_i² and Σ r_i ỹ_i (r_i = q_i + o)
/// to sums (xq untouched). O(rows of the part).
void push_row_sums(const PartView& part, double offset, EvalSums& sums);

/// The column half of push_evaluation, overwriting: xq[j] = x̃_jᵀ q over the part's rows for
/// every column j (a worker's buffer needs no clearing first); with `add`, xq[j] += it (the
/// later tiles of a worker's rows). O(nnz of the part).
void push_columns(const PartView& part, std::span<core::ExactSum> xq, bool add = false);

/// Everything reported at an evaluation, in user units (see the file comment).
struct Evaluation {
    double objective = 0;        ///< F, glmnet/scikit-learn normalisation
    double objective_paper = 0;  ///< N · F
    double gap = 0;              ///< duality gap, F's units
    double relative_gap = 0;     ///< gap / σ_y² (scikit-learn's stopping test: < tol)
    double kkt_violation = 0;    ///< max_j subgradient violation, y's units
    double l1_norm = 0;          ///< ‖β_std‖₁
    std::uint32_t nonzeros = 0;
};

/// The evaluation's terms over a range of coordinates: they add up exactly over ranges in any
/// order (an exact sum, maxima and a count), so a trainer may split the coordinates over threads.
struct CoordinateStats {
    core::ExactSum l1;     ///< Σ |b_j| (standardised)
    double dual_norm = 0;  ///< max |g_j|
    double kkt = 0;        ///< max subgradient violation (standardised)
    std::uint32_t nonzeros = 0;

    void add(const CoordinateStats& other);
};

/// For j in [lo, hi): g[j - lo] = z_jᵀr/N (as gradients()) from xq[j - lo] = the total x̃_jᵀq and
/// q_sum = Σ q_i; returns the range's terms. lambda in user units.
CoordinateStats coordinate_stats(const ProblemView& problem, double lambda,
                                 const Coefficients& coefs, std::uint32_t lo,
                                 std::span<const core::ExactSum> xq, double q_sum,
                                 std::span<double> g);

/// The evaluation from every coordinate's terms and the totals of Σ r_i² and Σ r_i ỹ_i.
Evaluation finish_evaluation(const ProblemView& problem, double lambda,
                             const CoordinateStats& stats, const core::ExactSum& rr,
                             const core::ExactSum& ry);

/// The evaluation from the total of every part's push_evaluation. lambda in user units.
Evaluation evaluate(const ProblemView& problem, double lambda, const Coefficients& coefs,
                    const EvalSums& total);

/// Push on every part, add, evaluate.
Evaluation evaluate(std::span<const PartView> parts, const ProblemView& problem, double lambda,
                    const Coefficients& coefs);

/// λ_max = max_j |z_jᵀ(y − ȳ)| / N (user units): the smallest λ whose solution is b = 0. Reads
/// the parts' targets only (b is not needed), so it is exact and the same for any split.
double lambda_max(std::span<const PartView> parts, const ProblemView& problem);

/// The standardised gradients g_j = z_jᵀ r / N (internal units) from an evaluation's total.
std::vector<double> gradients(const ProblemView& problem, const EvalSums& total);

}  // namespace rotor::lasso
