// Shares of work by measured speed: the targets that rebalancing between ranks aims at, and how
// far the current split is from them. Used by LDA (documents between ranks, apps/lda) and RICA
// (row blocks between workers, apps/rica). Plain arithmetic: every rank computing it from the same
// amounts and speeds gets the same answer.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace rotor::sched {

/// Each rank's target amount of work (tokens, rows, ...) for its measured `speeds` (work per
/// second, one per rank): the total of `amounts` shared by speed_q / Σ speed, each share floored
/// at `min_share` of an even share (so a very slow rank keeps some work and its speed stays
/// measurable). With `max_amount` > 0 no target exceeds it (the excess goes to the other ranks by
/// their shares), unless the ranks together cannot hold the total at that limit. Empty when there
/// is nothing to balance (one rank, no speed, no work).
std::vector<double> rebalance_targets(std::span<const std::uint64_t> amounts,
                                      std::span<const double> speeds, double min_share = 0.1,
                                      std::uint64_t max_amount = 0);

/// max_q amounts_q / target_q for rebalance_targets' targets (>= 1; 1 for one rank): how much
/// longer than a balanced one an iteration is predicted to take.
double rebalance_imbalance(std::span<const std::uint64_t> amounts, std::span<const double> speeds,
                           double min_share = 0.1, std::uint64_t max_amount = 0);

}  // namespace rotor::sched
