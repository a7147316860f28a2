#include "apps/mf/shard.h"

#include <algorithm>

#include "core/base/error.h"
#include "sched/block_grid.h"

namespace rotor::mf {

std::vector<std::vector<std::uint32_t>> assign_users(const Ratings& ratings, int ranks,
                                                     std::uint64_t seed) {
    ROTOR_ASSERT(ranks >= 1, "assign_users needs at least one rank");
    std::vector<std::uint64_t> weights(ratings.num_users());
    for (UserId u = 0; u < ratings.num_users(); ++u) weights[u] = ratings.user_degree(u);
    sched::Partition p = sched::partition_rows(weights, ranks, seed);
    for (auto& m : p.members) std::sort(m.begin(), m.end());
    return std::move(p.members);
}

Shard Shard::of(const Ratings& ratings, std::span<const std::uint32_t> users) {
    Shard s;
    s.users.assign(users.begin(), users.end());
    s.offsets.reserve(users.size() + 1);
    s.offsets.push_back(0);
    std::uint64_t total = 0;
    for (const std::uint32_t u : users) {
        ROTOR_ASSERT(u < ratings.num_users(), "Shard::of: user out of range");
        total += ratings.user_degree(u);
    }
    s.items.reserve(total);
    s.values.reserve(total);
    for (std::size_t r = 0; r < users.size(); ++r) {
        const auto it = ratings.items_of(users[r]);
        const auto va = ratings.values_of_user(users[r]);
        s.items.insert(s.items.end(), it.begin(), it.end());
        s.values.insert(s.values.end(), va.begin(), va.end());
        s.offsets.push_back(s.items.size());
    }
    return s;
}

}  // namespace rotor::mf
