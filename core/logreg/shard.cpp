#include "core/logreg/shard.h"

#include <algorithm>
#include <unordered_map>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::logreg {

Shard::Shard(const Examples& ex, bool intercept) : labels_(ex.labels), margins_(ex.size(), 0.0) {
    ROTOR_ASSERT(ex.size() < 0xFFFFFFFFu, "a part holds fewer than 2^32 - 1 examples");
    std::vector<std::uint32_t> column_of(ex.nonzeros());
    std::vector<std::uint64_t> counts;
    const std::uint64_t top =
        ex.keys.empty() ? 0 : *std::max_element(ex.keys.begin(), ex.keys.end());
    if (top <= 4 * ex.nonzeros() + 1024) {
        // Keys no larger than a few times the entries (LIBSVM's feature numbers): a table
        // indexed by the key, walked in key order, gives the same sorted keys and columns.
        constexpr std::uint32_t kAbsent = 0xFFFFFFFFu;
        std::vector<std::uint32_t> column(top + 1, kAbsent);
        for (const std::uint64_t k : ex.keys) column[k] = 0;
        for (std::uint64_t k = 0; k <= top; ++k) {
            if (column[k] == kAbsent) continue;
            column[k] = static_cast<std::uint32_t>(keys_.size());
            keys_.push_back(k);
        }
        if (intercept) keys_.push_back(kInterceptKey);
        counts.assign(keys_.size() + 1, 0);
        for (std::size_t e = 0; e < ex.nonzeros(); ++e) {
            column_of[e] = column[ex.keys[e]];
            ++counts[column_of[e] + 1];
        }
    } else {
        // The distinct keys through a hash map (entries far outnumber keys in sparse data),
        // sorted, then each entry's column through the same map.
        std::unordered_map<std::uint64_t, std::uint32_t> column;
        for (const std::uint64_t k : ex.keys) column.try_emplace(k, 0);
        keys_.reserve(column.size() + 1);
        for (const auto& kv : column) keys_.push_back(kv.first);
        std::sort(keys_.begin(), keys_.end());
        for (std::size_t c = 0; c < keys_.size(); ++c)
            column[keys_[c]] = static_cast<std::uint32_t>(c);
        if (intercept) keys_.push_back(kInterceptKey);
        counts.assign(keys_.size() + 1, 0);
        for (std::size_t e = 0; e < ex.nonzeros(); ++e) {
            column_of[e] = column.find(ex.keys[e])->second;
            ++counts[column_of[e] + 1];
        }
    }
    const std::size_t n = ex.size();
    if (intercept) counts[keys_.size()] = n;
    offsets_.assign(keys_.size() + 1, 0);
    for (std::size_t c = 0; c < keys_.size(); ++c) offsets_[c + 1] = offsets_[c] + counts[c + 1];
    rows_.resize(offsets_.back());
    values_.resize(offsets_.back());
    std::vector<std::uint64_t> next(offsets_.begin(), offsets_.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::uint64_t e = ex.offsets[i]; e < ex.offsets[i + 1]; ++e) {
            const std::uint64_t at = next[column_of[e]]++;
            rows_[at] = static_cast<std::uint32_t>(i);
            values_[at] = ex.values[e];
        }
        if (intercept) {
            const std::uint64_t at = next[keys_.size() - 1]++;
            rows_[at] = static_cast<std::uint32_t>(i);
            values_[at] = 1.0;
        }
    }
}

void Shard::match(std::span<const std::uint64_t> wanted, std::vector<std::int64_t>& columns) const {
    columns.assign(wanted.size(), -1);
    std::size_t c = 0;
    for (std::size_t t = 0; t < wanted.size(); ++t) {
        while (c < keys_.size() && keys_[c] < wanted[t]) ++c;
        if (c < keys_.size() && keys_[c] == wanted[t]) columns[t] = static_cast<std::int64_t>(c);
    }
}

std::uint32_t block_of(std::uint64_t key, std::uint32_t blocks, std::uint64_t seed) noexcept {
    std::uint64_t x = key ^ (seed * 0x9E3779B97F4A7C15ULL);
    return static_cast<std::uint32_t>(splitmix64(x) % blocks);
}

std::vector<std::vector<std::uint64_t>> split_blocks(std::span<const std::uint64_t> keys,
                                                     std::uint32_t blocks, std::uint64_t seed,
                                                     const BlockGroups* groups) {
    ROTOR_ASSERT(blocks >= 1, "at least one block");
    std::vector<std::vector<std::uint64_t>> out(blocks);
    if (groups == nullptr) {
        for (const std::uint64_t k : keys) out[block_of(k, blocks, seed)].push_back(k);
        return out;
    }
    const std::uint32_t listed = groups->groups();
    ROTOR_ASSERT(listed < blocks, "at least one hash block after the groups");
    for (const std::uint64_t k : keys) {
        const std::optional<std::uint32_t> g = groups->group_of(k);
        out[g ? *g : listed + block_of(k, blocks - listed, seed)].push_back(k);
    }
    return out;
}

std::vector<std::uint64_t> union_keys(std::span<const Shard> parts) {
    std::vector<std::uint64_t> all;
    for (const Shard& p : parts) all.insert(all.end(), p.keys().begin(), p.keys().end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return all;
}

}  // namespace rotor::logreg
