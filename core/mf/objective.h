// The objective of matrix factorization and the errors reported about a model (docs/mf.md).
//
// Ratings A (N users x M items) observed on Ω; the model predicts
//     â_ij = μ + b_i + c_j + w_i·h_j
// with W (N x K) and H (M x K, one K-vector per item), user biases b, item biases c and the
// global mean μ of the training ratings (a constant, not learnt). The objective is
//     f = Σ_(i,j)∈Ω (a_ij − â_ij)²  +  λ (Σ_i ρ_i ‖w_i‖² + Σ_j ρ_j ‖h_j‖²)
//                                   +  λ_b (Σ_i ρ_i b_i² + Σ_j ρ_j c_j²)
// unnormalised (no 1/2, no 1/|Ω|), where the weights ρ depend on the λ form:
//   - plain:    ρ_i = ρ_j = 1 — the objective of STRADS (Lee et al., NIPS 2014) and CCD++ (Yu
//               et al., ICDM 2012; LIBPMF);
//   - weighted: ρ_i = |Ω_i|, ρ_j = |Ω_j| — the "weighted-λ regularization" of ALS-WR (Zhou et
//               al., AAIM 2008), and what SGD solvers such as LIBMF minimise, since they apply
//               λ at each rating, i.e. |Ω_i| times to w_i per epoch.
// With bias = false, μ = b = c = 0 and the λ_b term vanishes: the STRADS objective exactly.
//
// The default is weighted: (1) SGD and CCD then minimise the same f with the same λ, so a λ
// tuned with one solver holds for the other and for LIBMF; (2) the penalty scales with the data,
// so a λ keeps its meaning when the ratings are subsampled or split into training and test
// sets, and heavy users are not under-regularised relative to light ones (Zhou et al.); (3) the
// plain form remains one flag away for reproducing STRADS and LIBPMF numbers.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/base/exact_sum.h"
#include "core/mf/factors.h"
#include "core/mf/sparse_view.h"

namespace rotor::mf {

/// How λ weights a row or column: ρ = 1 (plain) or ρ = its number of ratings (weighted).
enum class LambdaForm : std::uint8_t { kPlain, kWeighted };

/// The objective's parameters. validate() throws ConfigError naming the flag.
struct ObjectiveParams {
    /// λ on W and H, >= 0 (flag --lambda). 0.1 by measurement: with λ_b = 0.1 and K = 64 it
    /// gives the lowest MovieLens test RMSE for both solvers (docs/mf.md, "Defaults").
    double lambda = 0.1;
    /// λ_b on the biases b and c, >= 0 (flag --lambda-bias).
    double lambda_bias = 0.1;
    /// ρ of the formula above (flag --lambda-form plain|weighted).
    LambdaForm form = LambdaForm::kWeighted;
    /// The global mean and the user and item biases; false gives the STRADS objective (flag
    /// --bias).
    bool bias = true;

    /// Throws ConfigError("--lambda" | "--lambda-bias", ...) on a negative or non-finite value.
    void validate() const;
    /// The regularisation coefficient of a row or column with `count` ratings: base * ρ.
    double coefficient(double base, std::uint64_t count) const {
        return form == LambdaForm::kWeighted ? base * static_cast<double>(count) : base;
    }
};

/// A trained model, read-only and non-owning: predicts any (user, item) pair. A user id >=
/// w->rows() or an item id >= h->rows() is unseen: its factor and bias count as zero, so the
/// prediction falls back on μ and the other side's bias (μ alone when both are unseen). Safe to
/// share between threads while nothing writes the model.
struct ModelView {
    double mu = 0;                    ///< global mean (0 without bias)
    const Factors* w = nullptr;       ///< users x K
    const Factors* h = nullptr;       ///< items x K
    std::span<const float> row_bias;  ///< b, size w->rows(), or empty without bias
    std::span<const float> col_bias;  ///< c, size h->rows(), or empty without bias

    double predict(std::uint32_t user, std::uint32_t item) const;
};

/// Σ values, exactly: the global mean is μ = rating_sum(all).value() / |Ω|, and parts' sums add
/// (core::ExactSum::add or to_limbs) to the same μ whatever the split.
core::ExactSum rating_sum(std::span<const float> values);

/// r_ij = a_ij − μ − b_i − c_j − w_i·h_j for every rating of a part (CSR: rows are the part's,
/// indexing w and row_bias; ids index h and col_bias). Biases may be empty (then 0). residuals
/// has part.nnz() entries, in the order of part.values.
void compute_residuals(const SparseView& part, const Factors& w, std::span<const float> row_bias,
                       const Factors& h, std::span<const float> col_bias, double mu,
                       std::span<float> residuals);

/// Σ r² over residuals, in double, in array order.
double squared_error(std::span<const float> residuals);

/// The regularisation of one side: λ Σ_i ρ_i ‖f_i‖² + λ_b Σ_i ρ_i b_i² over the rows of f
/// (bias may be empty; λ_b is used only when p.bias). counts[i] = |Ω_i| is read only for the
/// weighted form (may be empty for plain). Sum of doubles in row order, or in the order of
/// `order` when given (a permutation of the rows: row order[0] first), so that rows stored in
/// another order give the sum of the rows in their usual one.
double penalty(const Factors& f, std::span<const float> bias, std::span<const std::uint64_t> counts,
               const ObjectiveParams& p, std::span<const std::uint32_t> order = {});

/// The terms of penalty() and of squared_error() added exactly: parts' sums combine
/// (core::ExactSum::add, or to_limbs and an integer allreduce) to the same bits however the rows
/// are split, so that a metric does not depend on the rank or thread count.
core::ExactSum penalty_exact(const Factors& f, std::span<const float> bias,
                             std::span<const std::uint64_t> counts, const ObjectiveParams& p);
core::ExactSum squared_error_exact(std::span<const float> residuals);

/// |Ω_i| of every row of a CSR part.
std::vector<std::uint64_t> row_counts(const SparseView& part);
/// Adds to counts[j] the ratings of column j in a CSR part (counts sized to the columns).
void add_column_counts(const SparseView& part, std::span<std::uint64_t> counts);

/// The whole objective f of a model on one part holding every rating (a single process):
/// squared_error(residuals) + penalty(W, b) + penalty(H, c). residuals must be current.
double objective(const SparseView& all, std::span<const float> residuals, const Factors& w,
                 std::span<const float> row_bias, const Factors& h, std::span<const float> col_bias,
                 const ObjectiveParams& p);

/// sqrt(squared_error / count); 0 when count is 0.
double rmse(double squared_error, std::uint64_t count);
/// The training RMSE from current residuals: rmse(squared_error(residuals), residuals.size()).
/// Across parts, add the parts' squared_error and counts first.
double train_rmse(std::span<const float> residuals);

/// RMSE and MAE of predictions against held-out ratings.
struct ErrorStats {
    double rmse = 0;          ///< sqrt(Σ (a − â)² / n)
    double mae = 0;           ///< Σ |a − â| / n
    std::uint64_t count = 0;  ///< n
    double squared_sum = 0;   ///< Σ (a − â)², to combine parts: rmse = sqrt(Σ parts / Σ n)
    double absolute_sum = 0;  ///< Σ |a − â|
};

/// Evaluates predict(user, item) on the triples (users[t], items[t], values[t]) (equal sizes),
/// summing in order. Ids need not be known to the model: predict decides (ModelView never fails).
ErrorStats evaluate(std::span<const std::uint32_t> users, std::span<const std::uint32_t> items,
                    std::span<const float> values,
                    const std::function<double(std::uint32_t, std::uint32_t)>& predict);
/// The same with a model's own predictions.
ErrorStats evaluate(std::span<const std::uint32_t> users, std::span<const std::uint32_t> items,
                    std::span<const float> values, const ModelView& model);

}  // namespace rotor::mf
