// A rank's rows of the ratings matrix: the users it owns and their ratings. W's rows never move
// between ranks (as LDA's doc-topic rows never do); both solvers start from a Shard.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/mf/ratings.h"
#include "core/mf/sparse_view.h"

namespace rotor::mf {

/// The users of each of `ranks` ranks: sched::partition_rows of the users' rating counts with
/// `seed` (about the same number of ratings per rank), each list sorted. Deterministic; every
/// user is in exactly one list. ranks >= 1.
std::vector<std::vector<std::uint32_t>> assign_users(const Ratings& ratings, int ranks,
                                                     std::uint64_t seed);

/// The ratings of some users as a CSR part: local row r is global user users[r]; the ids are
/// global item ids (rows of H). A value type owning its arrays.
struct Shard {
    std::vector<std::uint32_t> users;    ///< global user ids, distinct, in the part's row order
    std::vector<std::uint64_t> offsets;  ///< users.size() + 1 entries
    std::vector<std::uint32_t> items;    ///< global item ids, increasing within a row
    std::vector<float> values;           ///< the ratings, aligned with items

    /// The part of `ratings` made of `users` (distinct, < N), rows in that order.
    static Shard of(const Ratings& ratings, std::span<const std::uint32_t> users);

    SparseView view() const { return SparseView{offsets, items, values}; }
    std::uint32_t rows() const { return static_cast<std::uint32_t>(users.size()); }
    std::uint64_t nnz() const { return values.size(); }
};

}  // namespace rotor::mf
