#include "core/mf/objective.h"

#include <cmath>
#include <string>

#include "core/base/error.h"

namespace rotor::mf {
namespace {

void check_lambda(const char* key, double v) {
    if (!std::isfinite(v) || v < 0) {
        throw ConfigError(key, "must be a finite number >= 0, got " + std::to_string(v));
    }
}

double bias_of(std::span<const float> bias, std::uint32_t i) {
    return i < bias.size() ? static_cast<double>(bias[i]) : 0.0;
}

}  // namespace

void ObjectiveParams::validate() const {
    check_lambda("--lambda", lambda);
    check_lambda("--lambda-bias", lambda_bias);
}

double ModelView::predict(std::uint32_t user, std::uint32_t item) const {
    double p = mu + bias_of(row_bias, user) + bias_of(col_bias, item);
    if (w != nullptr && h != nullptr && user < w->rows() && item < h->rows()) {
        p += dot(w->row(user), h->row(item));
    }
    return p;
}

core::ExactSum rating_sum(std::span<const float> values) {
    core::ExactSum s;
    for (float v : values) s.add(v);
    return s;
}

void compute_residuals(const SparseView& part, const Factors& w, std::span<const float> row_bias,
                       const Factors& h, std::span<const float> col_bias, double mu,
                       std::span<float> residuals) {
    part.check_shape();
    ROTOR_ASSERT(part.outer_size() == w.rows() && residuals.size() == part.nnz(),
                 "compute_residuals: shapes");
    ROTOR_ASSERT(w.k() == h.k(), "compute_residuals: W and H differ in K");
    for (std::uint32_t i = 0; i < part.outer_size(); ++i) {
        const double base = mu + bias_of(row_bias, i);
        const std::span<const float> wi = w.row(i);
        for (std::uint64_t e = part.offsets[i]; e < part.offsets[i + 1]; ++e) {
            const std::uint32_t j = part.ids[e];
            const double pred = base + bias_of(col_bias, j) + dot(wi, h.row(j));
            residuals[e] = static_cast<float>(static_cast<double>(part.values[e]) - pred);
        }
    }
}

double squared_error(std::span<const float> residuals) {
    double s = 0;
    for (float r : residuals) s += static_cast<double>(r) * r;
    return s;
}

namespace {

/// Row i's share of penalty(): λ ρ_i ‖f_i‖² + λ_b ρ_i b_i².
double penalty_term(const Factors& f, std::span<const float> bias,
                    std::span<const std::uint64_t> counts, const ObjectiveParams& p,
                    std::uint32_t i) {
    const std::uint64_t n = counts.empty() ? 1 : counts[i];
    const std::span<const float> fi = f.row(i);
    double term = p.coefficient(p.lambda, n) * dot(fi, fi);
    if (p.bias && i < bias.size()) {
        const double b = bias[i];
        term += p.coefficient(p.lambda_bias, n) * b * b;
    }
    return term;
}

}  // namespace

double penalty(const Factors& f, std::span<const float> bias, std::span<const std::uint64_t> counts,
               const ObjectiveParams& p, std::span<const std::uint32_t> order) {
    ROTOR_ASSERT(p.form == LambdaForm::kPlain || counts.size() == f.rows(),
                 "penalty: the weighted form needs a count per row");
    ROTOR_ASSERT(order.empty() || order.size() == f.rows(), "penalty: an order of every row");
    double s = 0;
    for (std::uint32_t i = 0; i < f.rows(); ++i)
        s += penalty_term(f, bias, counts, p, order.empty() ? i : order[i]);
    return s;
}

core::ExactSum penalty_exact(const Factors& f, std::span<const float> bias,
                             std::span<const std::uint64_t> counts, const ObjectiveParams& p) {
    ROTOR_ASSERT(p.form == LambdaForm::kPlain || counts.size() == f.rows(),
                 "penalty_exact: the weighted form needs a count per row");
    core::ExactSum s;
    for (std::uint32_t i = 0; i < f.rows(); ++i) s.add(penalty_term(f, bias, counts, p, i));
    return s;
}

core::ExactSum squared_error_exact(std::span<const float> residuals) {
    core::ExactSum s;
    for (const float r : residuals) s.add(static_cast<double>(r) * static_cast<double>(r));
    return s;
}

std::vector<std::uint64_t> row_counts(const SparseView& part) {
    std::vector<std::uint64_t> n(part.outer_size());
    for (std::uint32_t i = 0; i < part.outer_size(); ++i) n[i] = part.count(i);
    return n;
}

void add_column_counts(const SparseView& part, std::span<std::uint64_t> counts) {
    for (const std::uint32_t j : part.ids) {
        ROTOR_ASSERT(j < counts.size(), "add_column_counts: a column id beyond the counts");
        ++counts[j];
    }
}

double objective(const SparseView& all, std::span<const float> residuals, const Factors& w,
                 std::span<const float> row_bias, const Factors& h, std::span<const float> col_bias,
                 const ObjectiveParams& p) {
    std::vector<std::uint64_t> cols(h.rows(), 0);
    add_column_counts(all, cols);
    return squared_error(residuals) + penalty(w, row_bias, row_counts(all), p) +
           penalty(h, col_bias, cols, p);
}

double rmse(double squared_error, std::uint64_t count) {
    return count == 0 ? 0.0 : std::sqrt(squared_error / static_cast<double>(count));
}

double train_rmse(std::span<const float> residuals) {
    return rmse(squared_error(residuals), residuals.size());
}

ErrorStats evaluate(std::span<const std::uint32_t> users, std::span<const std::uint32_t> items,
                    std::span<const float> values,
                    const std::function<double(std::uint32_t, std::uint32_t)>& predict) {
    ROTOR_ASSERT(users.size() == values.size() && items.size() == values.size(),
                 "evaluate: triples of unequal sizes");
    ErrorStats s;
    for (std::size_t t = 0; t < values.size(); ++t) {
        const double e = static_cast<double>(values[t]) - predict(users[t], items[t]);
        s.squared_sum += e * e;
        s.absolute_sum += std::fabs(e);
    }
    s.count = values.size();
    s.rmse = rmse(s.squared_sum, s.count);
    s.mae = s.count == 0 ? 0.0 : s.absolute_sum / static_cast<double>(s.count);
    return s;
}

ErrorStats evaluate(std::span<const std::uint32_t> users, std::span<const std::uint32_t> items,
                    std::span<const float> values, const ModelView& model) {
    return evaluate(users, items, values,
                    [&model](std::uint32_t u, std::uint32_t i) { return model.predict(u, i); });
}

}  // namespace rotor::mf
