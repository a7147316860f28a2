// Test helpers for core/lasso: small designs built in the test (dense or sparse, with planted
// coefficients), and the dense standardised matrix Z implied by a Design.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/base/rng.h"
#include "core/lasso/cd.h"
#include "core/lasso/design.h"

namespace rotor::lasso::testing {

/// A random design: n x p, each entry nonzero with probability `density` (1: dense input) and
/// uniform in [-1, 1) when nonzero; y = X β* + noise with β* having `planted` nonzeros in 2..4.
inline RawData random_data(std::uint32_t n, std::uint32_t p, double density, std::uint32_t planted,
                           std::uint64_t seed, double noise = 0.1) {
    Rng rng(seed);
    RawData d;
    d.features = p;
    d.dense = density >= 1;
    std::vector<double> beta(p, 0);
    for (std::uint32_t k = 0; k < planted && k < p; ++k) {
        beta[rng.below(p)] = (2 + 2 * rng.uniform()) * (rng.below(2) ? 1 : -1);
    }
    std::vector<std::uint32_t> cols;
    std::vector<double> vals;
    for (std::uint32_t i = 0; i < n; ++i) {
        cols.clear();
        vals.clear();
        double y = noise * (2 * rng.uniform() - 1) + 3;
        for (std::uint32_t j = 0; j < p; ++j) {
            if (!d.dense && rng.uniform() >= density) continue;
            const double x = 2 * rng.uniform() - 1;
            cols.push_back(j);
            vals.push_back(x);
            y += x * beta[j];
        }
        d.add_sample(y, cols, vals);
    }
    return d;
}

/// A design of correlated groups: x_j = f_g + s·e_j for the `group` columns j of group g, with
/// one factor f_g per group and independent e_j, all uniform in [-1, 1) (correlation 1 / (1 + s²)
/// inside a group, 0 across groups); y = Σ of every third column + noise. Dense.
inline RawData correlated_data(std::uint32_t n, std::uint32_t p, std::uint32_t group, double s,
                               std::uint64_t seed) {
    Rng rng(seed);
    RawData d;
    d.features = p;
    d.dense = true;
    std::vector<std::uint32_t> cols(p);
    std::vector<double> vals(p);
    std::vector<double> f((p + group - 1) / group);
    for (std::uint32_t i = 0; i < n; ++i) {
        for (double& x : f) x = 2 * rng.uniform() - 1;
        double y = 0.1 * (2 * rng.uniform() - 1);
        for (std::uint32_t j = 0; j < p; ++j) {
            cols[j] = j;
            vals[j] = f[j / group] + s * (2 * rng.uniform() - 1);
            y += (j % 3 == 0 ? 1.0 : 0.0) * vals[j];
        }
        d.add_sample(y, cols, vals);
    }
    return d;
}

/// The design of issue 37 (item 5): x_ij = 0.7 z_ij + 0.3 z_i0 with z standard normal (Box–
/// Muller), so every pair of columns correlates at 0.09 / 0.58 ≈ 0.155, under STRADS' ρ = 0.3,
/// while L columns updated at once have λ_max = 1 + 0.155 (L − 1): parallel updates of 8 or
/// more diverge. y = the first `planted` columns with weights ±1..2, plus noise 0.5 z. Dense.
inline RawData shared_factor_data(std::uint32_t n, std::uint32_t p, std::uint32_t planted,
                                  std::uint64_t seed) {
    Rng rng(seed);
    const auto normal = [&rng] {
        const double u = 1 - rng.uniform();  // (0, 1]
        return std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * rng.uniform());
    };
    RawData d;
    d.features = p;
    d.dense = true;
    std::vector<std::uint32_t> cols(p);
    std::vector<double> vals(p);
    for (std::uint32_t i = 0; i < n; ++i) {
        const double shared = normal();
        double y = 0.5 * normal();
        for (std::uint32_t j = 0; j < p; ++j) {
            cols[j] = j;
            vals[j] = 0.7 * normal() + 0.3 * shared;
            if (j < planted) y += (1 + double(j % 2)) * (j % 3 == 0 ? -1 : 1) * vals[j];
        }
        d.add_sample(y, cols, vals);
    }
    return d;
}

/// Z (n x p, row-major) as the kernels see it: z_ij = x̃_ij − c_j.
inline std::vector<double> dense_z(const Design& d) {
    const std::uint32_t n = d.samples(), p = d.features();
    std::vector<double> z(std::size_t{n} * p, 0);
    const ColumnsView x = d.columns();
    for (std::uint32_t j = 0; j < p; ++j) {
        for (std::uint32_t i = 0; i < n; ++i) z[std::size_t{i} * p + j] = -d.shifts()[j];
        for (std::uint64_t e = x.offsets[j]; e < x.offsets[j + 1]; ++e) {
            z[std::size_t{x.rows[e]} * p + j] += x.values[e];
        }
    }
    return z;
}

}  // namespace rotor::lasso::testing

namespace rotor::lasso::testing {

/// A design cut into parts with their residuals, ready for the kernels (b = 0).
struct Split {
    std::vector<DesignPart> parts;
    std::vector<std::vector<double>> residuals;
    std::vector<PartView> views;

    Split(const Design& d, std::uint32_t count) : parts(split_design(d, count)) {
        for (const DesignPart& p : parts) residuals.emplace_back(p.rows());
        for (std::size_t q = 0; q < parts.size(); ++q) {
            views.push_back(parts[q].view(residuals[q]));
            init_residuals(views.back(), std::vector<double>(d.features(), 0));
        }
    }
    /// Every part's residuals, in row order.
    std::vector<double> all_residuals() const {
        std::vector<double> out;
        for (const auto& r : residuals) out.insert(out.end(), r.begin(), r.end());
        return out;
    }
};

}  // namespace rotor::lasso::testing
