#include "core/mf/ccd.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/base/error.h"

namespace rotor::mf {
namespace {

// o / d, the minimiser of d x² − 2 o x; 0 when the quadratic is flat (d = 0: no rating, or every
// other-side factor zero with λ = 0), NaN kept so a diverged state shows.
double ratio(double o, double d) {
    if (d > 0) return o / d;
    if (std::isnan(o) || std::isnan(d)) return std::nan("");
    return 0.0;
}

void check_part(const SparseView& part, std::span<const float> u, std::span<const float> r) {
    part.check_shape();
    ROTOR_ASSERT(u.size() == part.outer_size(), "CCD: one row factor per row of the part");
    ROTOR_ASSERT(r.size() == part.nnz(), "CCD: one residual per rating of the part");
}

void add_outer(const SparseView& part, std::span<const float> u, std::span<const float> v,
               std::span<float> residuals, double sign) {
    check_part(part, u, residuals);
    for (std::uint32_t i = 0; i < part.outer_size(); ++i) {
        const double ui = sign * static_cast<double>(u[i]);
        for (std::uint64_t e = part.offsets[i]; e < part.offsets[i + 1]; ++e) {
            residuals[e] = static_cast<float>(residuals[e] + ui * v[part.ids[e]]);
        }
    }
}

// Buffers of one iteration, allocated once: per part the column of W being updated and its
// pushed sums, the total of several parts and the column of H.
struct Workspace {
    std::vector<std::vector<float>> u;
    std::vector<ColumnSums> pushed;
    ColumnSums total;
    std::vector<float> v;

    Workspace(std::span<const CcdPart> parts, std::uint32_t cols)
        : total(parts.size() > 1 ? cols : 0), v(cols) {
        ROTOR_ASSERT(!parts.empty(), "CCD: no part");
        for (const CcdPart& part : parts) {
            u.emplace_back(part.ratings.outer_size());
            pushed.emplace_back(cols);
        }
    }
};

// (b): every part pushes, the parts' sums are added in part order, the pull writes ws.v.
void column_step(std::span<const CcdPart> parts, Workspace& ws,
                 std::span<const std::uint64_t> col_counts, double lambda, LambdaForm form) {
    for (std::size_t q = 0; q < parts.size(); ++q) {
        ws.pushed[q].clear();
        push_column_sums(parts[q].ratings, ws.u[q], parts[q].residuals, ws.pushed[q]);
    }
    if (parts.size() == 1) {
        pull_columns(ws.pushed[0], col_counts, lambda, form, ws.v);
        return;
    }
    ws.total.clear();
    for (const ColumnSums& part : ws.pushed) ws.total.add(part);  // = combine(ws.pushed)
    pull_columns(ws.total, col_counts, lambda, form, ws.v);
}

void rank_one(std::span<const CcdPart> parts, Factors& h, std::uint32_t k,
              std::span<const std::uint64_t> col_counts, const CcdParams& p, Workspace& ws) {
    const double lambda = p.objective.lambda;
    const LambdaForm form = p.objective.form;
    h.get_column(k, ws.v);
    for (std::size_t q = 0; q < parts.size(); ++q) {
        parts[q].w->get_column(k, ws.u[q]);
        add_rank_one(parts[q].ratings, ws.u[q], ws.v, parts[q].residuals);
    }
    for (std::uint32_t s = 0; s < p.inner; ++s) {
        column_step(parts, ws, col_counts, lambda, form);
        for (std::size_t q = 0; q < parts.size(); ++q) {
            update_rows(parts[q].ratings, ws.v, parts[q].residuals, lambda, form, ws.u[q]);
        }
    }
    for (std::size_t q = 0; q < parts.size(); ++q) {
        subtract_rank_one(parts[q].ratings, ws.u[q], ws.v, parts[q].residuals);
        parts[q].w->set_column(k, ws.u[q]);
    }
    h.set_column(k, ws.v);
}

void biases(std::span<const CcdPart> parts, std::span<float> col_bias,
            std::span<const std::uint64_t> col_counts, const CcdParams& p, Workspace& ws) {
    if (!p.objective.bias) return;
    const double lambda = p.objective.lambda_bias;
    const LambdaForm form = p.objective.form;
    // c: the row side fixed at 1.
    for (std::size_t q = 0; q < parts.size(); ++q) {
        ws.u[q].assign(ws.u[q].size(), 1.0f);
        add_rank_one(parts[q].ratings, ws.u[q], col_bias, parts[q].residuals);
    }
    column_step(parts, ws, col_counts, lambda, form);
    std::copy(ws.v.begin(), ws.v.end(), col_bias.begin());
    for (std::size_t q = 0; q < parts.size(); ++q) {
        subtract_rank_one(parts[q].ratings, ws.u[q], col_bias, parts[q].residuals);
    }
    // b: the column side fixed at 1, local to each part.
    ws.v.assign(ws.v.size(), 1.0f);
    for (const CcdPart& part : parts) {
        add_rank_one(part.ratings, part.row_bias, ws.v, part.residuals);
        update_rows(part.ratings, ws.v, part.residuals, lambda, form, part.row_bias);
        subtract_rank_one(part.ratings, part.row_bias, ws.v, part.residuals);
    }
}

void check_counts(std::uint32_t cols, std::span<const std::uint64_t> col_counts,
                  const CcdParams& p) {
    ROTOR_ASSERT(p.objective.form == LambdaForm::kPlain || col_counts.size() == cols,
                 "CCD: the weighted form needs |Ω_j| of every column");
}

void check_factors(std::span<const CcdPart> parts, const Factors& h) {
    for (const CcdPart& part : parts) {
        ROTOR_ASSERT(part.w != nullptr && part.w->rows() == part.ratings.outer_size() &&
                         part.w->k() == h.k(),
                     "CCD: a part's W has one row per row of its ratings and H's K");
    }
}

void check_biases(std::span<const CcdPart> parts, std::span<const float> col_bias,
                  std::uint32_t cols, const CcdParams& p) {
    if (!p.objective.bias) return;
    ROTOR_ASSERT(col_bias.size() == cols, "CCD: one c_j per column");
    for (const CcdPart& part : parts) {
        ROTOR_ASSERT(part.row_bias.size() == part.ratings.outer_size(),
                     "CCD: one b_i per row of the part");
    }
}

}  // namespace

void CcdParams::validate() const {
    objective.validate();
    if (inner == 0) throw ConfigError("--inner", "must be at least 1");
}

void ColumnSums::clear() {
    for (ColumnSum& s : sums) s = ColumnSum{};
}

void ColumnSums::add(const ColumnSums& other) {
    ROTOR_ASSERT(other.sums.size() == sums.size(), "ColumnSums::add: sizes differ");
    for (std::size_t j = 0; j < sums.size(); ++j) {
        sums[j].num.add(other.sums[j].num);
        sums[j].den.add(other.sums[j].den);
    }
}

std::vector<std::int64_t> ColumnSums::to_limbs() const {
    std::vector<std::int64_t> out;
    out.reserve(sums.size() * 2 * core::ExactSum::kLimbs);
    for (const ColumnSum& s : sums) {
        for (const core::ExactSum* x : {&s.num, &s.den}) {
            const auto l = x->to_limbs();
            out.insert(out.end(), l.begin(), l.end());
        }
    }
    return out;
}

ColumnSums ColumnSums::from_limbs(std::span<const std::int64_t> limbs) {
    constexpr std::size_t kPer = 2 * core::ExactSum::kLimbs;
    ROTOR_ASSERT(limbs.size() % kPer == 0, "ColumnSums::from_limbs: not whole columns");
    ColumnSums out(static_cast<std::uint32_t>(limbs.size() / kPer));
    for (std::size_t j = 0; j < out.sums.size(); ++j) {
        std::array<std::int64_t, core::ExactSum::kLimbs> num{}, den{};
        std::copy_n(limbs.begin() + j * kPer, core::ExactSum::kLimbs, num.begin());
        std::copy_n(limbs.begin() + j * kPer + core::ExactSum::kLimbs, core::ExactSum::kLimbs,
                    den.begin());
        out.sums[j].num = core::ExactSum::from_limbs(num);
        out.sums[j].den = core::ExactSum::from_limbs(den);
    }
    return out;
}

void add_rank_one(const SparseView& part, std::span<const float> u, std::span<const float> v,
                  std::span<float> residuals) {
    add_outer(part, u, v, residuals, 1.0);
}

void subtract_rank_one(const SparseView& part, std::span<const float> u, std::span<const float> v,
                       std::span<float> residuals) {
    add_outer(part, u, v, residuals, -1.0);
}

void push_column_sums(const SparseView& part, std::span<const float> u, std::span<const float> rhat,
                      ColumnSums& sums) {
    check_part(part, u, rhat);
    for (std::uint32_t i = 0; i < part.outer_size(); ++i) {
        const double ui = u[i];
        const core::ExactSum ui2 =
            core::ExactSum::of(ui * ui);  // the same term for every rating of row i
        for (std::uint64_t e = part.offsets[i]; e < part.offsets[i + 1]; ++e) {
            ColumnSum& s = sums.sums[part.ids[e]];
            s.num.add(rhat[e] * ui);
            s.den.add(ui2);
        }
    }
}

ColumnSums combine(std::span<const ColumnSums> parts) {
    ColumnSums total(parts.empty() ? 0 : static_cast<std::uint32_t>(parts[0].sums.size()));
    for (const ColumnSums& part : parts) total.add(part);
    return total;
}

void pull_columns(const ColumnSums& total, std::span<const std::uint64_t> col_counts, double lambda,
                  LambdaForm form, std::span<float> v) {
    ROTOR_ASSERT(v.size() == total.sums.size(), "pull_columns: one value per column");
    ROTOR_ASSERT(form == LambdaForm::kPlain || col_counts.size() == v.size(),
                 "pull_columns: the weighted form needs |Ω_j| of every column");
    for (std::size_t j = 0; j < v.size(); ++j) {
        const double rho = form == LambdaForm::kWeighted ? static_cast<double>(col_counts[j]) : 1;
        const double d = lambda * rho + total.sums[j].den.value();
        v[j] = static_cast<float>(ratio(total.sums[j].num.value(), d));
    }
}

void update_rows(const SparseView& part, std::span<const float> v, std::span<const float> rhat,
                 double lambda, LambdaForm form, std::span<float> u) {
    check_part(part, u, rhat);
    for (std::uint32_t i = 0; i < part.outer_size(); ++i) {
        double num = 0, den = 0;
        for (std::uint64_t e = part.offsets[i]; e < part.offsets[i + 1]; ++e) {
            const double vj = v[part.ids[e]];
            num += rhat[e] * vj;
            den += vj * vj;
        }
        const double rho = form == LambdaForm::kWeighted ? static_cast<double>(part.count(i)) : 1;
        u[i] = static_cast<float>(ratio(num, lambda * rho + den));
    }
}

void ccd_update_biases(std::span<const CcdPart> parts, std::span<float> col_bias,
                       std::span<const std::uint64_t> col_counts, const CcdParams& p) {
    if (!p.objective.bias) return;
    const auto cols = static_cast<std::uint32_t>(col_bias.size());
    check_counts(cols, col_counts, p);
    check_biases(parts, col_bias, cols, p);
    Workspace ws(parts, cols);
    biases(parts, col_bias, col_counts, p, ws);
}

void ccd_rank_one(std::span<const CcdPart> parts, Factors& h, std::uint32_t k,
                  std::span<const std::uint64_t> col_counts, const CcdParams& p) {
    ROTOR_ASSERT(k < h.k(), "ccd_rank_one: k out of range");
    check_counts(h.rows(), col_counts, p);
    check_factors(parts, h);
    Workspace ws(parts, h.rows());
    rank_one(parts, h, k, col_counts, p, ws);
}

void ccd_iteration(std::span<const CcdPart> parts, Factors& h, std::span<float> col_bias,
                   std::span<const std::uint64_t> col_counts, const CcdParams& p) {
    p.validate();
    check_counts(h.rows(), col_counts, p);
    check_factors(parts, h);
    check_biases(parts, col_bias, h.rows(), p);
    Workspace ws(parts, h.rows());
    biases(parts, col_bias, col_counts, p, ws);
    for (std::uint32_t k = 0; k < h.k(); ++k) rank_one(parts, h, k, col_counts, p, ws);
}

void ccd_iteration(const CcdPart& all, Factors& h, std::span<float> col_bias, const CcdParams& p) {
    std::vector<std::uint64_t> counts(h.rows(), 0);
    add_column_counts(all.ratings, counts);
    ccd_iteration(std::span<const CcdPart>(&all, 1), h, col_bias, counts, p);
}

}  // namespace rotor::mf
