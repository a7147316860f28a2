#include "core/mf/ratings.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/base/error.h"

namespace rotor::mf {

// IdMap ---------------------------------------------------------------------------------------

std::pair<std::uint32_t, bool> IdMap::insert(std::string_view id) {
    if (const auto it = index_.find(id); it != index_.end()) return {it->second, false};
    ROTOR_ASSERT(!full(), "IdMap holds 2^32 - 1 ids already");
    const auto index = static_cast<std::uint32_t>(names_.size());
    names_.emplace_back(id);
    index_.emplace(names_.back(), index);
    return {index, true};
}

std::optional<std::uint32_t> IdMap::find(std::string_view id) const {
    if (const auto it = index_.find(id); it != index_.end()) return it->second;
    return std::nullopt;
}

std::size_t IdMap::memory_bytes() const noexcept {
    // Each name is held twice; a hash node costs about a string, an index and two pointers.
    std::size_t chars = 0;
    for (const std::string& s : names_) chars += s.capacity() + 1;
    const std::size_t node = sizeof(std::string) + 2 * sizeof(void*) + sizeof(std::uint64_t);
    return names_.capacity() * sizeof(std::string) + index_.size() * node +
           index_.bucket_count() * sizeof(void*) + 2 * chars;
}

// Ratings -------------------------------------------------------------------------------------

namespace {

/// Exclusive prefix sums of `counts` (size n) into offsets of size n+1.
std::vector<std::uint64_t> offsets_from_counts(const std::vector<std::uint64_t>& counts) {
    std::vector<std::uint64_t> offsets(counts.size() + 1, 0);
    for (std::size_t i = 0; i < counts.size(); ++i) offsets[i + 1] = offsets[i] + counts[i];
    return offsets;
}

std::string describe(const IdMap* map, std::uint32_t index) {
    if (map != nullptr && index < map->size()) return "\"" + map->name(index) + "\"";
    return std::to_string(index);
}

[[noreturn]] void duplicate_error(const TripleOrigin& origin, const RatingTriple& t,
                                  std::uint64_t first, std::uint64_t second) {
    const std::string pair =
        fmt::format("duplicate rating for user {}, item {}", describe(origin.users, t.user),
                    describe(origin.items, t.item));
    const std::string path = origin.path.empty() ? "ratings" : origin.path;
    if (origin.rows) throw InputError(path, fmt::format("rows {} and {}: {}", first, second, pair));
    if (origin.line_of) {
        throw InputError(path, origin.line_of(second), 1,
                         fmt::format("{} (first on line {})", pair, origin.line_of(first)));
    }
    throw InputError(
        path, fmt::format("{} (ratings #{} and #{} of the list)", pair, first + 1, second + 1));
}

}  // namespace

Ratings::Ratings() : user_offsets_(1, 0), item_offsets_(1, 0) {}

std::pair<std::vector<std::uint64_t>, std::vector<ItemId>> Ratings::take_user_items() && {
    std::pair<std::vector<std::uint64_t>, std::vector<ItemId>> out{std::move(user_offsets_),
                                                                   std::move(user_items_)};
    *this = Ratings();
    return out;
}

Ratings Ratings::from_triples(std::uint32_t num_users, std::uint32_t num_items,
                              std::span<const RatingTriple> triples, const TripleOrigin& origin) {
    Ratings r;
    r.num_users_ = num_users;
    r.num_items_ = num_items;
    const std::uint64_t nnz = triples.size();

    // A stable counting sort by user, then a stable one by item of that order: the result is
    // grouped by item, users increasing, equal pairs adjacent in input order (LSD radix sort).
    std::vector<std::uint64_t> counts(num_users, 0);
    for (const RatingTriple& t : triples) {
        ROTOR_ASSERT(t.user < num_users && t.item < num_items, "triple out of the matrix");
        ++counts[t.user];
    }
    r.user_offsets_ = offsets_from_counts(counts);
    // The sort's index arrays take 4 bytes a rating below 2^32 ratings (the load's peak: the
    // triples, two index arrays, then one index array and the CSC).
    const auto sort_into = [&]<class Index>() {
        std::vector<Index> by_user(nnz);
        {
            std::vector<std::uint64_t> next(r.user_offsets_.begin(), r.user_offsets_.end() - 1);
            for (std::uint64_t k = 0; k < nnz; ++k)
                by_user[next[triples[k].user]++] = static_cast<Index>(k);
        }
        counts.assign(num_items, 0);
        for (const RatingTriple& t : triples) ++counts[t.item];
        r.item_offsets_ = offsets_from_counts(counts);
        std::vector<Index> by_item(nnz);
        {
            std::vector<std::uint64_t> next(r.item_offsets_.begin(), r.item_offsets_.end() - 1);
            for (const Index k : by_user) by_item[next[triples[k].item]++] = k;
        }
        by_user = {};

        // Report the duplicate whose second occurrence comes first in the input.
        std::uint64_t dup_first = 0;
        std::uint64_t dup_second = std::numeric_limits<std::uint64_t>::max();
        for (std::uint32_t i = 0; i < num_items; ++i) {
            for (std::uint64_t p = r.item_offsets_[i] + 1; p < r.item_offsets_[i + 1]; ++p) {
                if (triples[by_item[p]].user == triples[by_item[p - 1]].user &&
                    by_item[p] < dup_second) {
                    dup_first = by_item[p - 1];
                    dup_second = by_item[p];
                }
            }
        }
        if (dup_second < nnz) duplicate_error(origin, triples[dup_second], dup_first, dup_second);

        r.item_users_.resize(nnz);
        r.item_values_.resize(nnz);
        for (std::uint64_t p = 0; p < nnz; ++p) {
            r.item_users_[p] = triples[by_item[p]].user;
            r.item_values_[p] = triples[by_item[p]].value;
        }
        by_item = {};
    };
    if (nnz < (std::uint64_t{1} << 32)) {
        sort_into.template operator()<std::uint32_t>();
    } else {
        sort_into.template operator()<std::uint64_t>();
    }

    // CSR from CSC: walking the items in order leaves each user's items increasing.
    r.user_items_.resize(nnz);
    r.user_values_.resize(nnz);
    std::vector<std::uint64_t> next(r.user_offsets_.begin(), r.user_offsets_.end() - 1);
    for (std::uint32_t i = 0; i < num_items; ++i) {
        for (std::uint64_t p = r.item_offsets_[i]; p < r.item_offsets_[i + 1]; ++p) {
            const std::uint64_t q = next[r.item_users_[p]]++;
            r.user_items_[q] = i;
            r.user_values_[q] = r.item_values_[p];
        }
    }
    r.compute_mean();
    return r;
}

Ratings Ratings::from_csr(std::uint32_t num_users, std::uint32_t num_items,
                          std::vector<std::uint64_t> offsets, std::vector<ItemId> items,
                          std::vector<float> values, const std::string& name) {
    if (offsets.size() != std::uint64_t{num_users} + 1) {
        throw InputError(name, fmt::format("{} user offsets for N = {} users (expected N + 1)",
                                           offsets.size(), num_users));
    }
    if (items.size() != values.size()) {
        throw InputError(name,
                         fmt::format("{} item ids but {} values", items.size(), values.size()));
    }
    if (offsets.front() != 0 || offsets.back() != items.size()) {
        throw InputError(name, fmt::format("user offsets run from {} to {}, expected 0 to {}",
                                           offsets.front(), offsets.back(), items.size()));
    }
    for (std::uint32_t u = 0; u < num_users; ++u) {
        if (offsets[u + 1] < offsets[u]) {
            throw InputError(name, fmt::format("user offsets decrease at user {}", u));
        }
    }
    for (std::uint32_t u = 0; u < num_users; ++u) {
        for (std::uint64_t p = offsets[u]; p < offsets[u + 1]; ++p) {
            if (items[p] >= num_items) {
                throw InputError(
                    name, fmt::format("user {}: item {} is >= M = {}", u, items[p], num_items));
            }
            if (p > offsets[u] && items[p] <= items[p - 1]) {
                throw InputError(name, fmt::format("user {}: items not strictly increasing "
                                                   "({} after {})",
                                                   u, items[p], items[p - 1]));
            }
            if (!std::isfinite(values[p])) {
                throw InputError(
                    name, fmt::format("user {}, item {}: rating is not finite", u, items[p]));
            }
        }
    }
    Ratings r;
    r.num_users_ = num_users;
    r.num_items_ = num_items;
    r.user_offsets_ = std::move(offsets);
    r.user_items_ = std::move(items);
    r.user_values_ = std::move(values);
    r.build_csc();
    r.compute_mean();
    return r;
}

void Ratings::build_csc() {
    std::vector<std::uint64_t> counts(num_items_, 0);
    for (const ItemId i : user_items_) ++counts[i];
    item_offsets_ = offsets_from_counts(counts);
    item_users_.resize(user_items_.size());
    item_values_.resize(user_items_.size());
    std::vector<std::uint64_t> next(item_offsets_.begin(), item_offsets_.end() - 1);
    for (std::uint32_t u = 0; u < num_users_; ++u) {
        for (std::uint64_t p = user_offsets_[u]; p < user_offsets_[u + 1]; ++p) {
            const std::uint64_t q = next[user_items_[p]]++;
            item_users_[q] = u;
            item_values_[q] = user_values_[p];
        }
    }
}

void Ratings::compute_mean() noexcept {
    double sum = 0.0;
    for (const float v : user_values_) sum += v;
    mean_ = user_values_.empty() ? 0.0 : sum / static_cast<double>(user_values_.size());
}

std::span<const ItemId> Ratings::items_of(UserId u) const noexcept {
    return std::span<const ItemId>(user_items_).subspan(user_offsets_[u], user_degree(u));
}

std::span<const float> Ratings::values_of_user(UserId u) const noexcept {
    return std::span<const float>(user_values_).subspan(user_offsets_[u], user_degree(u));
}

std::span<const UserId> Ratings::users_of(ItemId i) const noexcept {
    return std::span<const UserId>(item_users_).subspan(item_offsets_[i], item_degree(i));
}

std::span<const float> Ratings::values_of_item(ItemId i) const noexcept {
    return std::span<const float>(item_values_).subspan(item_offsets_[i], item_degree(i));
}

std::size_t Ratings::memory_bytes() const noexcept {
    return (user_offsets_.size() + item_offsets_.size()) * sizeof(std::uint64_t) +
           (user_items_.size() + item_users_.size()) * sizeof(std::uint32_t) +
           (user_values_.size() + item_values_.size()) * sizeof(float);
}

bool operator==(const Ratings& a, const Ratings& b) {
    return a.num_users_ == b.num_users_ && a.num_items_ == b.num_items_ &&
           a.user_offsets_ == b.user_offsets_ && a.user_items_ == b.user_items_ &&
           a.user_values_ == b.user_values_;
}

}  // namespace rotor::mf
