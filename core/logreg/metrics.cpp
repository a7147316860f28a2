#include "core/logreg/metrics.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/base/error.h"
#include "core/logreg/objective.h"

namespace rotor::logreg {

Metrics compute_metrics(std::span<const double> margins, std::span<const std::int8_t> labels) {
    ROTOR_ASSERT(margins.size() == labels.size(), "one margin per label");
    Metrics m;
    m.examples = labels.size();
    if (labels.empty()) return m;
    core::ExactSum loss;
    std::uint64_t right = 0, positives = 0;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        loss.add(log1pexp_neg(labels[i] * margins[i]));
        right += (margins[i] > 0 ? 1 : -1) == labels[i];
        positives += labels[i] > 0;
    }
    const double n = static_cast<double>(labels.size());
    m.logloss = loss.value() / n;
    m.accuracy = static_cast<double>(right) / n;
    const std::uint64_t negatives = labels.size() - positives;
    if (positives == 0 || negatives == 0) {
        m.auc = 0.5;
        return m;
    }
    // Mann–Whitney: the sum of the positives' ranks (ties get their average rank).
    std::vector<std::size_t> order(labels.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return margins[a] < margins[b]; });
    double rank_sum = 0;
    for (std::size_t lo = 0; lo < order.size();) {
        std::size_t hi = lo;
        while (hi < order.size() && margins[order[hi]] == margins[order[lo]]) ++hi;
        const double mid = 0.5 * static_cast<double>(lo + 1 + hi);  // average of ranks lo+1..hi
        for (std::size_t r = lo; r < hi; ++r) {
            if (labels[order[r]] > 0) rank_sum += mid;
        }
        lo = hi;
    }
    const double p = static_cast<double>(positives);
    m.auc = (rank_sum - p * (p + 1) / 2) / (p * static_cast<double>(negatives));
    return m;
}

}  // namespace rotor::logreg
