// What the λ paths of the L1 models share (docs/lasso.md "Paths", docs/logreg.md "Path and
// cross-validation"): the log-spaced grid from λ_max down, the assignment of examples to
// cross-validation folds, and the choice of λ from the folds' held-out losses (glmnet's
// lambda.min and lambda.1se, Friedman, Hastie & Tibshirani, J. Stat. Softw. 2010, section 2.6).
// Pure functions; names no model.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace rotor::train {

/// `--n-lambdas` and `--eps`: ConfigError naming the flag unless n >= 1 and eps in (0, 1).
void check_grid(std::uint32_t n, double eps);

/// λ_k = λ_max · eps^(k / (n − 1)), k = 0 .. n − 1 (λ_max alone when n = 1): n values, log-spaced
/// and decreasing from λ_max to eps · λ_max, as glmnet's (lambda.min.ratio = eps).
std::vector<double> lambda_grid(double lambda_max, std::uint32_t n, double eps);

/// The fold (0 .. folds − 1) of each of `strata.size()` examples, stratified: the examples of each
/// stratum value (e.g. a class label), in an order shuffled by `seed`, are dealt to the folds in
/// turn, continuing from one stratum to the next, so every fold gets ⌊n/folds⌋ or ⌈n/folds⌉
/// examples and its share of each stratum to within one. The same strata, folds and seed give
/// the same folds. `folds` >= 2 and <= strata.size() (ConfigError "--folds" otherwise).
std::vector<std::uint32_t> assign_folds(std::span<const std::int8_t> strata, std::uint32_t folds,
                                        std::uint64_t seed);

/// The folds' held-out errors at every λ of a path, summarised. Plain struct.
struct CrossValidation {
    std::vector<double> mean;  ///< per λ: the mean over the folds
    std::vector<double> sd;    ///< per λ: the folds' standard deviation (n − 1 in the divisor)
    std::uint32_t best = 0;    ///< lambda.min: the λ of the least mean (the largest on ties)
    /// lambda.1se: the largest λ whose mean is within one standard error (sd / √folds) of the
    /// least mean, as glmnet's cv.glmnet chooses.
    std::uint32_t one_se = 0;
};

/// `error[f][k]`: fold f's held-out error at λ_k (lower is better; every row the same length,
/// at least one row and one λ).
CrossValidation cross_validate(const std::vector<std::vector<double>>& error);

/// Mean and standard deviation (n − 1 in the divisor; 0 for one value) of `error[f][k]` over f
/// at every k: what cross_validate summarises, for another measure (e.g. accuracy).
void mean_sd(const std::vector<std::vector<double>>& error, std::vector<double>& mean,
             std::vector<double>& sd);

}  // namespace rotor::train
