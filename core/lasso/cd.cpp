#include "core/lasso/cd.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/base/error.h"
#include "core/base/prefetch.h"

namespace rotor::lasso {

std::uint32_t Coefficients::nonzeros() const {
    return static_cast<std::uint32_t>(
        std::count_if(b.begin(), b.end(), [](double x) { return x != 0; }));
}

void init_residuals(const PartView& part, std::span<const double> b) {
    ROTOR_ASSERT(b.size() == part.x.columns(), "one coefficient per column");
    std::copy(part.targets.begin(), part.targets.end(), part.residuals.begin());
    for (std::uint32_t j = 0; j < part.x.columns(); ++j) {
        if (b[j] == 0) continue;
        for (std::uint64_t e = part.x.offsets[j]; e < part.x.offsets[j + 1]; ++e) {
            part.residuals[part.x.rows[e]] -= b[j] * part.x.values[e];
        }
    }
}

void set_offset(const ProblemView& problem, Coefficients& coefs) {
    core::ExactSum o;
    for (std::uint32_t j = 0; j < problem.features(); ++j) {
        if (coefs.b[j] != 0 && problem.shifts[j] != 0) o.add(problem.shifts[j] * coefs.b[j]);
    }
    coefs.offset = o.value();
}

namespace {

// Software prefetching (measured in docs/lasso.md, "Prefetching the columns"). A round's
// coordinates are random columns in ascending order, so each one's offsets, first rows and
// values, and its coefficient-side arrays are cache misses, and the push's inner loop, whose trip
// count changes from column to column, ends in a mispredicted branch that keeps the hardware from
// overlapping the next column's misses with this one's work.

/// Columns ahead whose rows and values are prefetched; their offsets are prefetched twice as far.
constexpr std::size_t kColumnsAhead = 8;
/// Coordinates ahead whose coefficient-side entries the pull and apply prefetch.
constexpr std::size_t kPullAhead = 16;

/// At coordinate t: prefetches the offsets of coordinate t + 2D, and the first lines of the rows
/// and values of coordinate t + D (its offsets were prefetched D steps ago).
inline void prefetch_columns(const ColumnsView& x, std::span<const std::uint32_t> coords,
                             std::size_t t) {
    constexpr std::size_t D = kColumnsAhead;
    if (t + 2 * D < coords.size()) prefetch_line(&x.offsets[coords[t + 2 * D]]);
    if (t + D < coords.size()) {
        const std::uint64_t e = x.offsets[coords[t + D]];
        prefetch_line(x.rows.data() + e);
        prefetch_line(x.values.data() + e);
    }
}

/// x̃_jᵀ q over the part's rows for j = coords[t], handed to store(t, sum) one column at a time.
template <class Store>
void push_columns_of(const PartView& part, std::span<const std::uint32_t> coords,
                     const Store& store) {
    const ColumnsView& x = part.x;
    for (std::size_t t = 0; t < coords.size(); ++t) {
        prefetch_columns(x, coords, t);
        const std::uint32_t j = coords[t];
        core::ExactAccumulator acc;  // the same exact sum, in a register
        for (std::uint64_t e = x.offsets[j], end = x.offsets[j + 1]; e < end; ++e)
            acc.add(x.values[e] * part.residuals[x.rows[e]]);
        store(t, acc.sum());
    }
}

}  // namespace

void push_gradients(const PartView& part, std::span<const std::uint32_t> coords,
                    std::span<core::ExactSum> sums) {
    ROTOR_ASSERT(sums.size() == coords.size(), "one sum per coordinate");
    push_columns_of(part, coords, [&](std::size_t t, const core::ExactSum& s) { sums[t].add(s); });
}

void push_gradients_into(const PartView& part, std::span<const std::uint32_t> coords,
                         std::span<core::ExactSum> sums) {
    ROTOR_ASSERT(sums.size() == coords.size(), "one sum per coordinate");
    push_columns_of(part, coords, [&](std::size_t t, const core::ExactSum& s) { sums[t] = s; });
}

std::uint32_t pull_updates(const ProblemView& problem, double lambda,
                           std::span<const std::uint32_t> coords,
                           std::span<const core::ExactSum> total, Coefficients& coefs,
                           std::span<double> deltas) {
    ROTOR_ASSERT(total.size() == coords.size() && deltas.size() == coords.size(),
                 "one total and one delta per coordinate");
    const double n = problem.samples;
    const double lambda_tilde = lambda / problem.y_scale;
    // Σ_i q_i = Σ ỹ − N o, from the residual every coordinate of the round sees.
    const double q_sum = problem.target_sum - n * coefs.offset;
    std::uint32_t changed = 0;
    for (std::size_t t = 0; t < coords.size(); ++t) {
        const std::uint32_t j = coords[t];
        const double g = (total[t].value() - problem.shifts[j] * q_sum) / n;
        const double b_new = coordinate_update(coefs.b[j], g, problem.sq_norms[j], lambda_tilde);
        deltas[t] = b_new - coefs.b[j];
        if (deltas[t] != 0) ++changed;
    }
    std::vector<double> shift_deltas(coords.size());
    for (std::size_t t = 0; t < coords.size(); ++t) {
        const std::uint32_t j = coords[t];
        coefs.b[j] += deltas[t];
        coefs.last_delta[j] = deltas[t];
        shift_deltas[t] = problem.shifts[j] * deltas[t];
    }
    add_offset_changes(shift_deltas, coefs);
    return changed;
}

PullStats pull_range(const ProblemView& problem, double lambda, double q_sum,
                     std::span<const std::uint32_t> coords, std::span<const core::ExactSum> total,
                     std::size_t lo, std::size_t hi, Coefficients& coefs, std::span<double> deltas,
                     std::span<double> shift_deltas) {
    ROTOR_ASSERT(total.size() == coords.size() && deltas.size() == coords.size() &&
                     shift_deltas.size() == coords.size() && lo <= hi && hi <= coords.size(),
                 "pull_range: one total and one delta per coordinate");
    const double n = problem.samples;
    const double lambda_tilde = lambda / problem.y_scale;
    PullStats s;
    for (std::size_t t = lo; t < hi; ++t) {
        if (t + kPullAhead < hi) {
            const std::uint32_t k = coords[t + kPullAhead];
            prefetch_line(&problem.shifts[k]);
            prefetch_line(&problem.sq_norms[k]);
            prefetch_line(&coefs.b[k]);
            prefetch_line(&coefs.last_delta[k]);
        }
        const std::uint32_t j = coords[t];
        const double g = (total[t].value() - problem.shifts[j] * q_sum) / n;
        const double d = problem.sq_norms[j];
        const double delta = coordinate_update(coefs.b[j], g, d, lambda_tilde) - coefs.b[j];
        deltas[t] = delta;
        if (delta != 0) ++s.changed;
        s.largest = std::max(s.largest, d * delta * delta);
        coefs.b[j] += delta;
        coefs.last_delta[j] = delta;
        shift_deltas[t] = problem.shifts[j] * delta;
    }
    return s;
}

std::uint32_t apply_pulled(std::span<const std::uint32_t> coords, std::size_t lo, std::size_t hi,
                           std::span<const double> deltas, Coefficients& coefs) {
    ROTOR_ASSERT(deltas.size() == coords.size() && lo <= hi && hi <= coords.size(),
                 "apply_pulled: one delta per coordinate");
    std::uint32_t changed = 0;
    for (std::size_t t = lo; t < hi; ++t) {
        if (t + kPullAhead < hi) {
            const std::uint32_t k = coords[t + kPullAhead];
            prefetch_line(&coefs.b[k]);
            prefetch_line(&coefs.last_delta[k]);
        }
        const std::uint32_t j = coords[t];
        const double delta = deltas[t];
        if (delta != 0) ++changed;
        coefs.b[j] += delta;
        coefs.last_delta[j] = delta;
    }
    return changed;
}

void add_offset_changes(std::span<const double> shift_deltas, Coefficients& coefs) {
    // Eight lanes (t mod 8), added in a fixed tree: eight independent chains of additions
    // instead of one (the round's one serial step on a trainer's threads), and the same bits
    // whoever computed the changes. A round of one coordinate adds just its change.
    constexpr std::size_t kLanes = 8;
    std::array<double, kLanes> lane{};
    const std::size_t n = shift_deltas.size();
    std::size_t t = 0;
    for (; t + kLanes <= n; t += kLanes) {
        for (std::size_t k = 0; k < kLanes; ++k) lane[k] += shift_deltas[t + k];
    }
    for (std::size_t k = 0; t < n; ++t, ++k) lane[k] += shift_deltas[t];
    coefs.offset +=
        ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

void update_residuals(const PartView& part, std::span<const std::uint32_t> coords,
                      std::span<const double> deltas) {
    const ColumnsView& x = part.x;
    for (std::size_t t = 0; t < coords.size(); ++t) {
        prefetch_columns(x, coords, t);
        const double delta = deltas[t];
        if (delta == 0) continue;
        const std::uint32_t j = coords[t];
        for (std::uint64_t e = x.offsets[j]; e < x.offsets[j + 1]; ++e) {
            part.residuals[x.rows[e]] -= delta * x.values[e];
        }
    }
}

RoundStats parallel_round(std::span<const PartView> parts, const ProblemView& problem,
                          double lambda, std::span<const std::uint32_t> coords,
                          Coefficients& coefs) {
    ROTOR_ASSERT(!parts.empty(), "at least one part");
    std::vector<core::ExactSum> total(coords.size());
    std::vector<core::ExactSum> pushed(parts.size() > 1 ? coords.size() : 0);
    for (const PartView& part : parts) {
        if (parts.size() == 1) {
            push_gradients(part, coords, total);
            break;
        }
        push_gradients_into(part, coords, pushed);
        for (std::size_t t = 0; t < coords.size(); ++t) total[t].add(pushed[t]);
    }
    std::vector<double> deltas(coords.size());
    RoundStats stats;
    stats.updated = static_cast<std::uint32_t>(coords.size());
    stats.changed = pull_updates(problem, lambda, coords, total, coefs, deltas);
    for (double d : deltas) stats.max_abs_delta = std::max(stats.max_abs_delta, std::fabs(d));
    for (const PartView& part : parts) update_residuals(part, coords, deltas);
    return stats;
}

RoundStats sequential_round(std::span<const PartView> parts, const ProblemView& problem,
                            double lambda, std::span<const std::uint32_t> coords,
                            Coefficients& coefs) {
    RoundStats stats;
    for (const std::uint32_t& j : coords) {
        const RoundStats one = parallel_round(parts, problem, lambda, {&j, 1}, coefs);
        stats.updated += one.updated;
        stats.changed += one.changed;
        stats.max_abs_delta = std::max(stats.max_abs_delta, one.max_abs_delta);
    }
    return stats;
}

}  // namespace rotor::lasso
