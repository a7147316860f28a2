#include "sched/block_grid.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::sched {
namespace {

/// Heavy-tailed weights, like document lengths or word frequencies.
std::vector<std::uint64_t> zipf_weights(std::size_t n, std::uint64_t seed) {
    Rng rng(seed);
    std::vector<std::uint64_t> w(n);
    for (auto& x : w) x = 1 + static_cast<std::uint64_t>(1000.0 / (1.0 + rng.below(200)));
    return w;
}

/// Every item in exactly one group, consistent group_of / members / group_weight.
void check_partition(const Partition& p, std::span<const std::uint64_t> w, int groups) {
    ASSERT_EQ(p.groups(), groups);
    ASSERT_EQ(p.group_of.size(), w.size());
    std::vector<int> seen(w.size(), 0);
    std::uint64_t total = 0;
    for (int g = 0; g < groups; ++g) {
        std::uint64_t sum = 0;
        for (std::uint32_t item : p.members[static_cast<std::size_t>(g)]) {
            ASSERT_LT(item, w.size());
            ++seen[item];
            EXPECT_EQ(p.group_of[item], static_cast<std::uint32_t>(g));
            sum += w[item];
        }
        EXPECT_EQ(sum, p.group_weight[static_cast<std::size_t>(g)]);
        total += sum;
    }
    for (int s : seen) EXPECT_EQ(s, 1);
    EXPECT_EQ(total, std::accumulate(w.begin(), w.end(), std::uint64_t{0}));
}

TEST(BlockGrid, DefaultSideIsCeilSqrt2P) {
    EXPECT_EQ(default_grid_side(1), 2);
    EXPECT_EQ(default_grid_side(2), 3);
    EXPECT_EQ(default_grid_side(3), 5);
    EXPECT_EQ(default_grid_side(4), 6);
    EXPECT_EQ(default_grid_side(8), 12);
    EXPECT_EQ(default_grid_side(16), 23);
    for (int p = 1; p <= 2000; ++p) {
        const std::int64_t l = default_grid_side(p);
        EXPECT_GE(l * l, 2LL * p * p);
        EXPECT_LT((l - 1) * (l - 1), 2LL * p * p);
        EXPECT_EQ(l, static_cast<std::int64_t>(std::ceil(std::sqrt(2.0) * p)));
    }
    EXPECT_THROW(default_grid_side(0), ConfigError);
}

TEST(BlockGrid, DefaultSideFollowsTheProcessorsWhenOversubscribed) {
    EXPECT_EQ(default_grid_side(64, 2), default_grid_side(2));
    EXPECT_EQ(default_grid_side(1000, 8), 12);
    EXPECT_EQ(default_grid_side(4, 64), default_grid_side(4));  // unchanged when the cores suffice
    EXPECT_EQ(default_grid_side(3, 0), default_grid_side(1));
    EXPECT_THROW(default_grid_side(0, 4), ConfigError);
    EXPECT_GE(available_cpus(), 1);
}

TEST(BlockGrid, RowsBalancedWithinOneMaxWeight) {
    const auto w = zipf_weights(5000, 1);
    const std::uint64_t total = std::accumulate(w.begin(), w.end(), std::uint64_t{0});
    const std::uint64_t wmax = *std::max_element(w.begin(), w.end());
    for (int l : {1, 3, 7, 12, 23}) {
        const Partition p = partition_rows(w, l, 42);
        check_partition(p, w, l);
        // Midpoint cuts: each group is within wmax of total / L (see block_grid.h).
        const double mean = static_cast<double>(total) / l;
        for (std::uint64_t gw : p.group_weight) {
            EXPECT_LE(std::abs(static_cast<double>(gw) - mean), static_cast<double>(wmax));
        }
        EXPECT_LE(p.imbalance(), 1.0 + l * static_cast<double>(wmax) / total + 1e-12);
        EXPECT_GE(p.imbalance(), 1.0);
    }
}

TEST(BlockGrid, RowsDeterministicForASeed) {
    const auto w = zipf_weights(300, 2);
    const Partition a = partition_rows(w, 5, 7);
    const Partition b = partition_rows(w, 5, 7);
    const Partition c = partition_rows(w, 5, 8);
    EXPECT_EQ(a.group_of, b.group_of);
    EXPECT_EQ(a.members, b.members);
    EXPECT_NE(a.members, c.members);
    // Rows are permuted: group 0 is not simply the first rows.
    std::vector<std::uint32_t> sorted = a.members[0];
    std::sort(sorted.begin(), sorted.end());
    EXPECT_NE(sorted, a.members[0]);
}

TEST(BlockGrid, RowsEdgeCases) {
    const std::vector<std::uint64_t> zeros(10, 0);
    const Partition z = partition_rows(zeros, 3, 1);
    check_partition(z, zeros, 3);
    for (const auto& m : z.members) EXPECT_GE(m.size(), 3u);  // 10 rows spread by position
    EXPECT_DOUBLE_EQ(z.imbalance(), 1.0);
    const std::vector<std::uint64_t> few{5, 9};
    check_partition(partition_rows(few, 4, 1), few, 4);
    check_partition(partition_rows({}, 4, 1), {}, 4);
    EXPECT_THROW(partition_rows(few, 0, 1), ConfigError);
}

TEST(BlockGrid, GreedyColumnsTieBreaksAndOrder) {
    // Sorted: col1 (10), col3 (7), col2 (3), col0 (1). 10 -> g0; 7 -> g1; 3 -> g1 (7 < 10);
    // 1 -> g0 (tie 10/10, lowest index).
    const std::vector<std::uint64_t> w{1, 10, 3, 7};
    const Partition p = partition_cols_greedy(w, 2);
    check_partition(p, w, 2);
    EXPECT_EQ(p.group_of, (std::vector<std::uint32_t>{0, 0, 1, 1}));
    EXPECT_EQ(p.members[0], (std::vector<std::uint32_t>{1, 0}));
    const std::vector<std::uint64_t> equal(4, 5);
    EXPECT_EQ(partition_cols_greedy(equal, 2).group_of, (std::vector<std::uint32_t>{0, 1, 0, 1}));
}

TEST(BlockGrid, GreedyColumnsBalanced) {
    const auto w = zipf_weights(20000, 3);
    const std::uint64_t wmax = *std::max_element(w.begin(), w.end());
    for (int l : {2, 5, 12, 23}) {
        const Partition p = partition_cols_greedy(w, l);
        check_partition(p, w, l);
        const auto [mn, mx] = std::minmax_element(p.group_weight.begin(), p.group_weight.end());
        EXPECT_LE(*mx - *mn, wmax);
        EXPECT_EQ(partition_cols_greedy(w, l).group_of, p.group_of);
    }
    EXPECT_THROW(partition_cols_greedy(w, 0), ConfigError);
}

/// Per (column group, dimension) loads of a partition of multi-dimensional columns.
std::vector<std::vector<std::uint64_t>> cell_loads(const Partition& p,
                                                   const std::vector<std::uint64_t>& w, int dims) {
    std::vector<std::vector<std::uint64_t>> cells(static_cast<std::size_t>(p.groups()),
                                                  std::vector<std::uint64_t>(dims, 0));
    for (std::size_t c = 0; c < p.group_of.size(); ++c)
        for (int d = 0; d < dims; ++d)
            cells[p.group_of[c]][static_cast<std::size_t>(d)] +=
                w[c * static_cast<std::size_t>(dims) + static_cast<std::size_t>(d)];
    return cells;
}

/// The worst over dimensions of max cell / mean cell over the groups.
double cell_imbalance(const std::vector<std::vector<std::uint64_t>>& cells) {
    double worst = 0;
    for (std::size_t d = 0; d < cells.front().size(); ++d) {
        std::uint64_t mx = 0;
        std::uint64_t sum = 0;
        for (const auto& g : cells) {
            mx = std::max(mx, g[d]);
            sum += g[d];
        }
        worst = std::max(worst, static_cast<double>(mx) * static_cast<double>(cells.size()) /
                                    static_cast<double>(sum));
    }
    return worst;
}

TEST(BlockGrid, BalancedColumnsEvenOutEveryCell) {
    // Words with a weight per rank, skewed: each word's tokens sit mostly in one rank's docs, so
    // balancing totals alone leaves (rank, slice) cells uneven.
    constexpr int kDims = 3;
    const auto base = zipf_weights(6000, 5);
    Rng rng(9);
    std::vector<std::uint64_t> w;
    std::vector<std::uint64_t> totals;
    for (std::uint64_t b : base) {
        const auto home = rng.below(kDims);
        std::uint64_t t = 0;
        for (std::uint64_t d = 0; d < kDims; ++d) {
            const std::uint64_t x = d == home ? b : b / 8;
            w.push_back(x);
            t += x;
        }
        totals.push_back(t);
    }
    for (int l : {2, 6, 12}) {
        const Partition balanced = partition_cols_balanced(w, kDims, l);
        check_partition(balanced, totals, l);
        EXPECT_EQ(partition_cols_balanced(w, kDims, l).group_of, balanced.group_of);
        const double bal = cell_imbalance(cell_loads(balanced, w, kDims));
        const double greedy =
            cell_imbalance(cell_loads(partition_cols_greedy(totals, l), w, kDims));
        EXPECT_LE(bal, greedy) << l << " groups";
        EXPECT_LT(bal, 1.01) << l << " groups";
    }
    // One dimension: the same assignment as the scalar greedy (same order, same tie-breaks).
    EXPECT_EQ(partition_cols_balanced(base, 1, 7).group_of,
              partition_cols_greedy(base, 7).group_of);
    EXPECT_THROW(partition_cols_balanced(w, kDims, 0), ConfigError);
    EXPECT_THROW(partition_cols_balanced(w, 0, 2), ConfigError);
    const std::vector<std::uint64_t> ragged{1, 2, 3};
    EXPECT_THROW(partition_cols_balanced(ragged, 2, 2), ConfigError);
}

}  // namespace
}  // namespace rotor::sched
