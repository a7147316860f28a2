// Quality metrics of a logistic regression model on labelled examples (docs/logreg.md,
// "Metrics"), from the margins m_i = x_iᵀ w: the probability of +1 is σ(m_i).
#pragma once

#include <cstdint>
#include <span>

namespace rotor::logreg {

/// A plain struct.
struct Metrics {
    double logloss = 0;   ///< mean of log(1 + exp(−y_i m_i)) (natural log)
    double auc = 0;       ///< area under the ROC curve, ties counted one half; 0.5 with one class
    double accuracy = 0;  ///< share of examples with sign(m_i) = y_i (m_i = 0 predicts −1)
    std::uint64_t examples = 0;
};

/// The metrics of `margins` against `labels` (in {−1, +1}, same size). O(n log n).
Metrics compute_metrics(std::span<const double> margins, std::span<const std::int8_t> labels);

}  // namespace rotor::logreg
