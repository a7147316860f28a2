// Pearson chi-square goodness of fit, shared by the SparseLDA and MH sampler tests: cells with
// expected < 5 pooled, threshold at p = 1e-4.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace rotor::lda::testing {

/// Upper 1e-4 quantile of chi-square with df degrees of freedom (Wilson-Hilferty; z = 3.719).
inline double chi2_threshold(int df) {
    const double z = 3.719;
    const double a = 2.0 / (9.0 * df);
    return df * std::pow(1.0 - a + z * std::sqrt(a), 3.0);
}

/// Pearson chi-square of observed counts against probabilities; cells with expected < 5 are
/// pooled (and the pool folded into the largest cell if it is still < 5). Returns {stat, df}.
inline std::pair<double, int> chi2(const std::vector<std::uint64_t>& observed,
                                   const std::vector<double>& prob) {
    double n = 0;
    for (auto o : observed) n += static_cast<double>(o);
    std::vector<std::pair<double, double>> cells;  // (expected, observed)
    double pool_e = 0, pool_o = 0;
    for (std::size_t i = 0; i < prob.size(); ++i) {
        const double e = prob[i] * n;
        if (e < 5) {
            pool_e += e;
            pool_o += static_cast<double>(observed[i]);
        } else {
            cells.push_back({e, static_cast<double>(observed[i])});
        }
    }
    if (pool_e >= 5 || cells.empty()) {
        cells.push_back({pool_e, pool_o});
    } else {
        auto big = std::max_element(cells.begin(), cells.end());
        big->first += pool_e;
        big->second += pool_o;
    }
    double stat = 0;
    for (const auto& [e, o] : cells) stat += (o - e) * (o - e) / e;
    return {stat, static_cast<int>(cells.size()) - 1};
}

}  // namespace rotor::lda::testing
