#include "sched/block_grid.h"

#include <sched.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <string>
#include <thread>
#include <utility>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::sched {
namespace {

void check_groups(int groups) {
    if (groups < 1) {
        throw ConfigError("blocks",
                          "the grid side must be at least 1, got " + std::to_string(groups));
    }
}

Partition empty_partition(std::size_t items, int groups) {
    Partition p;
    p.group_of.assign(items, 0);
    p.members.resize(static_cast<std::size_t>(groups));
    p.group_weight.assign(static_cast<std::size_t>(groups), 0);
    return p;
}

void assign(Partition& p, std::uint32_t item, std::uint32_t group, std::uint64_t weight) {
    p.group_of[item] = group;
    p.members[group].push_back(item);
    p.group_weight[group] += weight;
}

}  // namespace

int default_grid_side(int threads, int cpus) {
    return default_grid_side(std::min(threads, std::max(cpus, 1)));
}

int available_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(CPU_COUNT(&set), 1);
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

int default_grid_side(int threads) {
    if (threads < 1) {
        throw ConfigError("threads", "must be at least 1, got " + std::to_string(threads));
    }
    // Smallest L with L^2 >= 2 P^2, in integers: sqrt(2) P is irrational, so this is its ceiling.
    const std::int64_t target = 2 * static_cast<std::int64_t>(threads) * threads;
    std::int64_t l = static_cast<std::int64_t>(1.41421356237 * threads);
    while (l * l < target) ++l;
    while (l > 1 && (l - 1) * (l - 1) >= target) --l;
    return static_cast<int>(l);
}

double Partition::imbalance() const noexcept {
    if (group_weight.empty()) return 1.0;
    std::uint64_t total = 0;
    std::uint64_t max = 0;
    for (std::uint64_t w : group_weight) {
        total += w;
        max = std::max(max, w);
    }
    if (total == 0) return 1.0;
    const double mean = static_cast<double>(total) / static_cast<double>(group_weight.size());
    return static_cast<double>(max) / mean;
}

Partition partition_rows(std::span<const std::uint64_t> row_weights, int groups,
                         std::uint64_t seed) {
    check_groups(groups);
    const std::size_t n = row_weights.size();
    Partition p = empty_partition(n, groups);
    // Fisher-Yates with our own generator, so the permutation is the same on every platform.
    std::vector<std::uint32_t> perm(n);
    std::iota(perm.begin(), perm.end(), std::uint32_t{0});
    Rng rng = Rng::from({seed, 0x726f7773ULL /* "rows" */});
    for (std::size_t i = n; i > 1; --i) {
        std::swap(perm[i - 1], perm[rng.below(i)]);
    }
    __extension__ using U128 = unsigned __int128;
    U128 total = 0;
    for (std::uint64_t w : row_weights) total += w;
    const auto l = static_cast<U128>(groups);
    U128 before = 0;
    for (std::size_t pos = 0; pos < n; ++pos) {
        const std::uint32_t row = perm[pos];
        const std::uint64_t w = row_weights[row];
        U128 g;
        if (total == 0) {
            g = static_cast<U128>(pos) * l / n;
        } else {
            // The midpoint (before + w/2) falls in group floor(midpoint * L / total).
            g = (2 * before + w) * l / (2 * total);
        }
        if (g >= l) g = l - 1;
        assign(p, row, static_cast<std::uint32_t>(g), w);
        before += w;
    }
    return p;
}

Partition partition_cols_greedy(std::span<const std::uint64_t> col_weights, int groups) {
    check_groups(groups);
    const std::size_t n = col_weights.size();
    Partition p = empty_partition(n, groups);
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), std::uint32_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return col_weights[a] > col_weights[b];
    });
    // Min-heap on (weight, group): the lightest group, lowest index on ties.
    using Entry = std::pair<std::uint64_t, std::uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
    for (int g = 0; g < groups; ++g) heap.emplace(0, static_cast<std::uint32_t>(g));
    for (std::uint32_t col : order) {
        auto [weight, g] = heap.top();
        heap.pop();
        assign(p, col, g, col_weights[col]);
        heap.emplace(weight + col_weights[col], g);
    }
    return p;
}

Partition partition_cols_balanced(std::span<const std::uint64_t> col_weights, int dims,
                                  int groups) {
    check_groups(groups);
    if (dims < 1 || col_weights.size() % static_cast<std::size_t>(dims) != 0) {
        throw ConfigError("blocks", "column weights must come in rows of dims >= 1 values, got " +
                                        std::to_string(col_weights.size()) + " values for " +
                                        std::to_string(dims) + " dimensions");
    }
    const auto d_count = static_cast<std::size_t>(dims);
    const std::size_t n = col_weights.size() / d_count;
    Partition p = empty_partition(n, groups);
    std::vector<std::uint64_t> total(n, 0);
    for (std::size_t c = 0; c < n; ++c)
        for (std::size_t d = 0; d < d_count; ++d) total[c] += col_weights[c * d_count + d];
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), std::uint32_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return total[a] > total[b]; });
    // Loads relative to each dimension's total, so that a light dimension counts as much as a
    // heavy one.
    std::vector<double> inv_total(d_count, 0.0);
    for (std::size_t d = 0; d < d_count; ++d) {
        std::uint64_t t = 0;
        for (std::size_t c = 0; c < n; ++c) t += col_weights[c * d_count + d];
        inv_total[d] = t > 0 ? 1.0 / static_cast<double>(t) : 0.0;
    }
    std::vector<std::uint64_t> load(static_cast<std::size_t>(groups) * d_count, 0);
    for (std::uint32_t col : order) {
        const std::uint64_t* w = col_weights.data() + col * d_count;
        std::size_t best = 0;
        double best_max = std::numeric_limits<double>::infinity();
        double best_sum = std::numeric_limits<double>::infinity();
        for (std::size_t g = 0; g < static_cast<std::size_t>(groups); ++g) {
            const std::uint64_t* l = load.data() + g * d_count;
            double worst = 0;
            double sum = 0;
            for (std::size_t d = 0; d < d_count; ++d) {
                const double x = static_cast<double>(l[d] + w[d]) * inv_total[d];
                worst = std::max(worst, x);
                sum += static_cast<double>(l[d]) * inv_total[d];
            }
            if (worst < best_max || (worst == best_max && sum < best_sum)) {
                best = g;
                best_max = worst;
                best_sum = sum;
            }
        }
        for (std::size_t d = 0; d < d_count; ++d) load[best * d_count + d] += w[d];
        assign(p, col, static_cast<std::uint32_t>(best), total[col]);
    }
    return p;
}

}  // namespace rotor::sched
