#include "core/lasso/objective.h"

#include <algorithm>
#include <cmath>

#include "core/base/error.h"

namespace rotor::lasso {

void EvalSums::add(const EvalSums& other) {
    ROTOR_ASSERT(xq.size() == other.xq.size(), "EvalSums of different sizes");
    for (std::size_t j = 0; j < xq.size(); ++j) xq[j].add(other.xq[j]);
    q_sum.add(other.q_sum);
    rr.add(other.rr);
    ry.add(other.ry);
}

void push_evaluation(const PartView& part, double offset, EvalSums& sums) {
    const ColumnsView& x = part.x;
    ROTOR_ASSERT(sums.xq.size() == x.columns(), "one sum per column");
    for (std::uint32_t j = 0; j < x.columns(); ++j) {
        core::ExactAccumulator acc;  // the same exact sum, in a register
        for (std::uint64_t e = x.offsets[j], end = x.offsets[j + 1]; e < end; ++e)
            acc.add(x.values[e] * part.residuals[x.rows[e]]);
        sums.xq[j].add(acc.sum());
    }
    push_row_sums(part, offset, sums);
}

void push_row_sums(const PartView& part, double offset, EvalSums& sums) {
    for (std::uint32_t i = 0; i < part.rows(); ++i) {
        const double r = part.residuals[i] + offset;
        sums.q_sum.add(part.residuals[i]);
        sums.rr.add(r * r);
        sums.ry.add(r * part.targets[i]);
    }
}

void push_columns(const PartView& part, std::span<core::ExactSum> xq, bool add) {
    const ColumnsView& x = part.x;
    ROTOR_ASSERT(xq.size() == x.columns(), "one sum per column");
    for (std::uint32_t j = 0; j < x.columns(); ++j) {
        core::ExactAccumulator acc;
        for (std::uint64_t e = x.offsets[j], end = x.offsets[j + 1]; e < end; ++e)
            acc.add(x.values[e] * part.residuals[x.rows[e]]);
        if (add)
            xq[j].add(acc.sum());
        else
            xq[j] = acc.sum();
    }
}

namespace {

double gradient(const ProblemView& problem, std::uint32_t j, const core::ExactSum& xq,
                double q_sum) {
    return problem.sq_norms[j] > 0 ? (xq.value() - problem.shifts[j] * q_sum) / problem.samples : 0;
}

}  // namespace

std::vector<double> gradients(const ProblemView& problem, const EvalSums& total) {
    const double q_sum = total.q_sum.value();
    std::vector<double> g(problem.features());
    for (std::uint32_t j = 0; j < problem.features(); ++j)
        g[j] = gradient(problem, j, total.xq[j], q_sum);
    return g;
}

void CoordinateStats::add(const CoordinateStats& other) {
    l1.add(other.l1);
    dual_norm = std::max(dual_norm, other.dual_norm);
    kkt = std::max(kkt, other.kkt);
    nonzeros += other.nonzeros;
}

CoordinateStats coordinate_stats(const ProblemView& problem, double lambda,
                                 const Coefficients& coefs, std::uint32_t lo,
                                 std::span<const core::ExactSum> xq, double q_sum,
                                 std::span<double> g) {
    ROTOR_ASSERT(g.size() == xq.size() && lo + xq.size() <= problem.features(),
                 "coordinate_stats: ranges of different sizes");
    const double lambda_tilde = lambda / problem.y_scale;
    CoordinateStats s;
    for (std::size_t t = 0; t < xq.size(); ++t) {
        const auto j = static_cast<std::uint32_t>(lo + t);
        g[t] = gradient(problem, j, xq[t], q_sum);
        const double b = coefs.b[j];
        s.l1.add(std::fabs(b));
        s.dual_norm = std::max(s.dual_norm, std::fabs(g[t]));
        const double v = b != 0 ? std::fabs(g[t] - std::copysign(lambda_tilde, b))
                                : std::max(0.0, std::fabs(g[t]) - lambda_tilde);
        s.kkt = std::max(s.kkt, v);
        if (b != 0) ++s.nonzeros;
    }
    return s;
}

Evaluation finish_evaluation(const ProblemView& problem, double lambda,
                             const CoordinateStats& stats, const core::ExactSum& rr_sum,
                             const core::ExactSum& ry_sum) {
    const double n = problem.samples;
    const double s2 = problem.y_scale * problem.y_scale;
    const double lambda_tilde = lambda / problem.y_scale;
    Evaluation ev;
    ev.nonzeros = stats.nonzeros;
    const double l1_norm = stats.l1.value();
    const double rr = rr_sum.value();
    ev.objective = s2 * (rr / (2 * n) + lambda_tilde * l1_norm);
    ev.objective_paper = n * ev.objective;
    // scikit-learn's gap in its unnormalised form (α = N λ̃, ‖Zᵀr‖_∞ = N max|g_j|), then / N.
    const double alpha = n * lambda_tilde;
    const double dual = n * stats.dual_norm;
    const double kappa = dual > alpha ? alpha / dual : 1.0;
    const double gap = 0.5 * (1 + kappa * kappa) * rr + alpha * l1_norm - kappa * ry_sum.value();
    ev.relative_gap = gap / n;
    ev.gap = s2 * ev.relative_gap;
    ev.kkt_violation = problem.y_scale * stats.kkt;
    ev.l1_norm = problem.y_scale * l1_norm;
    return ev;
}

Evaluation evaluate(const ProblemView& problem, double lambda, const Coefficients& coefs,
                    const EvalSums& total) {
    std::vector<double> g(problem.features());
    const CoordinateStats stats =
        coordinate_stats(problem, lambda, coefs, 0, total.xq, total.q_sum.value(), g);
    return finish_evaluation(problem, lambda, stats, total.rr, total.ry);
}

Evaluation evaluate(std::span<const PartView> parts, const ProblemView& problem, double lambda,
                    const Coefficients& coefs) {
    EvalSums total(problem.features());
    for (const PartView& part : parts) {
        EvalSums pushed(problem.features());
        push_evaluation(part, coefs.offset, pushed);
        total.add(pushed);
    }
    return evaluate(problem, lambda, coefs, total);
}

double lambda_max(std::span<const PartView> parts, const ProblemView& problem) {
    std::vector<core::ExactSum> xy(problem.features());
    for (const PartView& part : parts) {
        const ColumnsView& x = part.x;
        for (std::uint32_t j = 0; j < x.columns(); ++j) {
            for (std::uint64_t e = x.offsets[j]; e < x.offsets[j + 1]; ++e) {
                xy[j].add(x.values[e] * part.targets[x.rows[e]]);
            }
        }
    }
    double m = 0;
    for (std::uint32_t j = 0; j < problem.features(); ++j) {
        if (!(problem.sq_norms[j] > 0)) continue;
        const double zy = xy[j].value() - problem.shifts[j] * problem.target_sum;
        m = std::max(m, std::fabs(zy) / problem.samples);
    }
    return problem.y_scale * m;
}

}  // namespace rotor::lasso
