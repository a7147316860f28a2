#include "sched/rebalance.h"

#include <algorithm>
#include <numeric>

#include "core/base/error.h"

namespace rotor::sched {

std::vector<double> rebalance_targets(std::span<const std::uint64_t> amounts,
                                      std::span<const double> speeds, double min_share,
                                      std::uint64_t max_amount) {
    const std::size_t ranks = amounts.size();
    ROTOR_ASSERT(speeds.size() == ranks, "rebalancing: one speed per rank");
    const double total_speed = std::accumulate(speeds.begin(), speeds.end(), 0.0);
    const std::uint64_t total = std::accumulate(amounts.begin(), amounts.end(), std::uint64_t{0});
    if (ranks < 2 || !(total_speed > 0) || total == 0) return {};
    std::vector<double> share(ranks);
    for (std::size_t q = 0; q < ranks; ++q)
        share[q] = std::max(speeds[q] / total_speed, min_share / static_cast<double>(ranks));
    const double share_sum = std::accumulate(share.begin(), share.end(), 0.0);
    std::vector<double> target(ranks);
    for (std::size_t q = 0; q < ranks; ++q)
        target[q] = static_cast<double>(total) * share[q] / share_sum;
    const double cap = static_cast<double>(max_amount);
    if (max_amount == 0 || cap * static_cast<double>(ranks) < static_cast<double>(total))
        return target;
    // Water-filling: ranks over the cap are held at it, their excess shared out by the others'
    // shares, until none is over (at most P rounds).
    std::vector<std::uint8_t> capped(ranks, 0);
    for (std::size_t round = 0; round < ranks; ++round) {
        double excess = 0;
        double free_share = 0;
        for (std::size_t q = 0; q < ranks; ++q) {
            if (target[q] > cap) {
                excess += target[q] - cap;
                target[q] = cap;
                capped[q] = 1;
            }
            if (capped[q] == 0) free_share += share[q];
        }
        if (excess <= 0 || free_share <= 0) break;
        for (std::size_t q = 0; q < ranks; ++q)
            if (capped[q] == 0) target[q] += excess * share[q] / free_share;
    }
    return target;
}

double rebalance_imbalance(std::span<const std::uint64_t> amounts, std::span<const double> speeds,
                           double min_share, std::uint64_t max_amount) {
    const std::vector<double> target = rebalance_targets(amounts, speeds, min_share, max_amount);
    double imbalance = 1;
    for (std::size_t q = 0; q < target.size(); ++q)
        imbalance = std::max(imbalance, static_cast<double>(amounts[q]) / std::max(target[q], 1.0));
    return imbalance;
}

}  // namespace rotor::sched
