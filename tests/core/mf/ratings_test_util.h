// Test helpers of core/mf: random ratings with distinct (user, item) pairs, and a matrix's
// entries listed from its CSR.
#pragma once

#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include "core/base/rng.h"
#include "core/mf/ratings.h"

namespace rotor::mf::testing {

/// (user, item, value) of one rating, comparable.
using Entry = std::tuple<std::uint32_t, std::uint32_t, float>;

/// `nnz` triples with distinct (user, item) pairs drawn uniformly from N x M (nnz <= N M / 2),
/// values in {1, 1.5, ..., 5}, in random order.
inline std::vector<RatingTriple> random_triples(std::uint32_t n, std::uint32_t m, std::size_t nnz,
                                                std::uint64_t seed) {
    Rng rng(seed);
    std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
    std::vector<RatingTriple> out;
    while (out.size() < nnz) {
        const auto u = static_cast<std::uint32_t>(rng.below(n));
        const auto i = static_cast<std::uint32_t>(rng.below(m));
        if (!seen.emplace(u, i).second) continue;
        out.push_back({u, i, 1.0f + 0.5f * static_cast<float>(rng.below(9))});
    }
    return out;
}

/// Every rating read through the CSR (by user).
inline std::multiset<Entry> csr_entries(const Ratings& r) {
    std::multiset<Entry> out;
    for (UserId u = 0; u < r.num_users(); ++u) {
        const auto items = r.items_of(u);
        const auto values = r.values_of_user(u);
        for (std::size_t k = 0; k < items.size(); ++k) out.emplace(u, items[k], values[k]);
    }
    return out;
}

/// True when item_degree(i) of every item is its number of ratings in the CSR.
inline bool item_degrees_match(const Ratings& r) {
    std::vector<std::uint64_t> counts(r.num_items(), 0);
    for (const ItemId i : r.user_items()) ++counts[i];
    for (ItemId i = 0; i < r.num_items(); ++i)
        if (r.item_degree(i) != counts[i]) return false;
    return r.item_offsets().size() == std::uint64_t{r.num_items()} + 1;
}

/// The triples as entries.
inline std::multiset<Entry> entries(const std::vector<RatingTriple>& triples) {
    std::multiset<Entry> out;
    for (const RatingTriple& t : triples) out.emplace(t.user, t.item, t.value);
    return out;
}

}  // namespace rotor::mf::testing
