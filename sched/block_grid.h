// Partitioning of a weighted rows × columns matrix into an L × L grid of blocks (HarpLDA+,
// Peng et al. VLDB 2017, section 4). Generic: rows and columns are indexes with a weight (for
// LDA, documents and words weighted by token count; for MF, users and items weighted by ratings).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace rotor::sched {

/// The grid side for P threads: ceil(sqrt(2) * P), so that an idle worker usually finds a free
/// block (about half the rows and columns are idle at any time). Throws ConfigError for P < 1.
int default_grid_side(int threads);
/// The grid side for P threads on `cpus` processors: default_grid_side(min(P, cpus)). Workers
/// beyond the processors only take turns, and a side grown for them only adds per-block work
/// (64 threads on 2 cores: 91 x 91 blocks instead of 3 x 3); the extra workers block on the
/// scheduler while the blocks are taken. Throws ConfigError for P < 1.
int default_grid_side(int threads, int cpus);
/// The processors this process may run on: its affinity mask (taskset, cgroups), at least 1.
int available_cpus();

/// An assignment of items (rows or columns) to L groups. A value type.
struct Partition {
    std::vector<std::uint32_t> group_of;              ///< group of each item, < L
    std::vector<std::vector<std::uint32_t>> members;  ///< items of each group, L lists
    std::vector<std::uint64_t> group_weight;          ///< total weight of each group

    int groups() const noexcept { return static_cast<int>(members.size()); }
    /// max group weight / mean group weight; 1.0 when the total weight is 0.
    double imbalance() const noexcept;
};

/// Rows in a random permutation (seeded by `seed` only), cut into L contiguous runs of about equal
/// weight: a row goes to the group in which the midpoint of its weight interval falls. Each group
/// then weighs within max(row_weights) of total / L, so imbalance() <= 1 + L * max / total.
/// Members are listed in permutation order. Throws ConfigError (key "blocks") for L < 1.
Partition partition_rows(std::span<const std::uint64_t> row_weights, int groups,
                         std::uint64_t seed);

/// Columns sorted by decreasing weight (ties: lower index first), each assigned to the currently
/// lightest group (ties: lowest group index). Deterministic. Greedy list scheduling keeps
/// max - min group weight <= max(col_weights). Members are listed in assignment order.
/// Throws ConfigError (key "blocks") for L < 1.
Partition partition_cols_greedy(std::span<const std::uint64_t> col_weights, int groups);

/// Like partition_cols_greedy, for columns that have a weight in each of `dims` row groups
/// (`col_weights[c * dims + d]`; for LDA across ranks: a word's tokens in each rank's documents).
/// Columns by decreasing total weight, each to the group whose largest per-dimension load, as a
/// share of that dimension's total, would be smallest after adding it (ties: smaller current
/// load, then lower index), so that every
/// (row group, column group) cell gets about the same weight, not only every column group.
/// Deterministic; O(columns × groups × dims). group_weight holds totals over dimensions.
/// Throws ConfigError (key "blocks") for L < 1 or dims < 1, or a size not a multiple of dims.
Partition partition_cols_balanced(std::span<const std::uint64_t> col_weights, int dims, int groups);

}  // namespace rotor::sched
