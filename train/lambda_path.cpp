#include "train/lambda_path.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::train {

void check_grid(std::uint32_t n, double eps) {
    if (n < 1) throw ConfigError("--n-lambdas", "must be at least 1");
    if (!(eps > 0 && eps < 1)) throw ConfigError("--eps", "must be in (0, 1)");
}

std::vector<double> lambda_grid(double lambda_max, std::uint32_t n, double eps) {
    std::vector<double> grid(n);
    for (std::uint32_t k = 0; k < n; ++k) {
        const double frac = n == 1 ? 0.0 : double(k) / double(n - 1);
        grid[k] = lambda_max * std::pow(eps, frac);
    }
    return grid;
}

std::vector<std::uint32_t> assign_folds(std::span<const std::int8_t> strata, std::uint32_t folds,
                                        std::uint64_t seed) {
    if (folds < 2) throw ConfigError("--folds", "must be at least 2 (0: no cross-validation)");
    if (folds > strata.size())
        throw ConfigError("--folds",
                          "more folds than the " + std::to_string(strata.size()) + " examples");
    std::map<std::int8_t, std::vector<std::uint32_t>> by_stratum;
    for (std::size_t i = 0; i < strata.size(); ++i)
        by_stratum[strata[i]].push_back(static_cast<std::uint32_t>(i));
    std::vector<std::uint32_t> fold(strata.size());
    std::uint32_t next = 0;
    for (auto& [value, members] : by_stratum) {
        // Fisher–Yates with the stratum's own stream: one stratum's order does not depend on
        // how many examples the others have.
        Rng rng = Rng::from({seed, static_cast<std::uint64_t>(static_cast<std::uint8_t>(value))});
        for (std::size_t s = members.size(); s > 1; --s)
            std::swap(members[s - 1], members[rng.next() % s]);
        for (const std::uint32_t i : members) {
            fold[i] = next;
            next = next + 1 == folds ? 0 : next + 1;
        }
    }
    return fold;
}

void mean_sd(const std::vector<std::vector<double>>& error, std::vector<double>& mean,
             std::vector<double>& sd) {
    assert(!error.empty());
    const std::size_t n = error.front().size();
    const double folds = static_cast<double>(error.size());
    mean.assign(n, 0.0);
    sd.assign(n, 0.0);
    for (std::size_t k = 0; k < n; ++k) {
        for (const auto& row : error) mean[k] += row[k];
        mean[k] /= folds;
        if (error.size() < 2) continue;
        double ss = 0;
        for (const auto& row : error) ss += (row[k] - mean[k]) * (row[k] - mean[k]);
        sd[k] = std::sqrt(ss / (folds - 1));
    }
}

CrossValidation cross_validate(const std::vector<std::vector<double>>& error) {
    CrossValidation cv;
    mean_sd(error, cv.mean, cv.sd);
    assert(!cv.mean.empty());
    for (std::uint32_t k = 1; k < cv.mean.size(); ++k)
        if (cv.mean[k] < cv.mean[cv.best]) cv.best = k;
    const double bound =
        cv.mean[cv.best] + cv.sd[cv.best] / std::sqrt(static_cast<double>(error.size()));
    cv.one_se = cv.best;
    for (std::uint32_t k = 0; k < cv.best; ++k)
        if (cv.mean[k] <= bound) {
            cv.one_se = k;
            break;
        }
    return cv;
}

}  // namespace rotor::train
