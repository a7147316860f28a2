#include "core/mf/ratings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/base/error.h"
#include "core/base/page_array.h"

namespace rotor::mf {

// IdMap ---------------------------------------------------------------------------------------

namespace {

/// The value of a plain decimal id (digits only, no leading zero unless it is "0", at most 19
/// digits: below 10^19, so it fits 64 bits), or nothing.
std::optional<std::uint64_t> plain_integer(std::string_view id) {
    if (id.empty() || id.size() > 19 || (id[0] == '0' && id.size() > 1)) return std::nullopt;
    std::uint64_t v = 0;
    for (const char c : id) {
        if (c < '0' || c > '9') return std::nullopt;
        v = 10 * v + static_cast<std::uint64_t>(c - '0');
    }
    return v;
}

/// Values below this bound are indexed by value: a table of at most 4 x 8 = 32 bytes an id (or
/// 256 KiB), against a hash node of about 40.
std::uint64_t dense_bound(std::size_t ids) {
    return std::max<std::uint64_t>(std::uint64_t{1} << 16, 8 * (std::uint64_t{ids} + 1));
}

}  // namespace

std::uint32_t IdMap::find_value(std::uint64_t value) const {
    if (value < by_value_.size()) return by_value_[value];
    if (const auto it = sparse_.find(value); it != sparse_.end()) return it->second;
    return kNone;
}

void IdMap::to_strings() {
    names_.reserve(values_.size());
    for (const std::uint64_t v : values_) names_.push_back(std::to_string(v));
    index_.reserve(names_.size());
    for (std::uint32_t i = 0; i < names_.size(); ++i) index_.emplace(names_[i], i);
    integers_ = false;
    std::vector<std::uint64_t>().swap(values_);
    std::vector<std::uint32_t>().swap(by_value_);
    std::unordered_map<std::uint64_t, std::uint32_t>().swap(sparse_);
}

std::pair<std::uint32_t, bool> IdMap::insert(std::string_view id) {
    if (integers_) {
        if (const auto value = plain_integer(id)) {
            if (const std::uint32_t found = find_value(*value); found != kNone)
                return {found, false};
            ROTOR_ASSERT(!full(), "IdMap holds 2^32 - 1 ids already");
            const auto index = static_cast<std::uint32_t>(values_.size());
            values_.push_back(*value);
            if (*value < dense_bound(values_.size())) {
                if (*value >= by_value_.size()) {
                    // Values that were sparse under the old size move into the grown table.
                    const std::size_t grown =
                        std::min(std::max<std::uint64_t>(*value + 1, 2 * by_value_.size()),
                                 dense_bound(values_.size()));
                    by_value_.resize(grown, kNone);
                    for (auto it = sparse_.begin(); it != sparse_.end();) {
                        if (it->first < grown) {
                            by_value_[it->first] = it->second;
                            it = sparse_.erase(it);
                        } else {
                            ++it;
                        }
                    }
                }
                by_value_[*value] = index;
            } else {
                sparse_.emplace(*value, index);
            }
            return {index, true};
        }
        to_strings();
    }
    if (const auto it = index_.find(id); it != index_.end()) return {it->second, false};
    ROTOR_ASSERT(!full(), "IdMap holds 2^32 - 1 ids already");
    const auto index = static_cast<std::uint32_t>(names_.size());
    names_.emplace_back(id);
    index_.emplace(names_.back(), index);
    return {index, true};
}

std::optional<std::uint32_t> IdMap::find(std::string_view id) const {
    if (integers_) {
        const auto value = plain_integer(id);
        if (!value) return std::nullopt;  // every id held is a plain integer
        if (const std::uint32_t found = find_value(*value); found != kNone) return found;
        return std::nullopt;
    }
    if (const auto it = index_.find(id); it != index_.end()) return it->second;
    return std::nullopt;
}

std::vector<std::string> IdMap::names() const {
    if (!integers_) return names_;
    std::vector<std::string> out;
    out.reserve(values_.size());
    for (const std::uint64_t v : values_) out.push_back(std::to_string(v));
    return out;
}

std::size_t IdMap::memory_bytes() const noexcept {
    // A hash node costs about its key, an index and two pointers.
    const std::size_t int_node = 2 * sizeof(std::uint64_t) + 2 * sizeof(void*);
    std::size_t bytes = values_.capacity() * sizeof(std::uint64_t) +
                        by_value_.capacity() * sizeof(std::uint32_t) + sparse_.size() * int_node +
                        sparse_.bucket_count() * sizeof(void*);
    // Each name is held twice.
    std::size_t chars = 0;
    for (const std::string& s : names_) chars += s.capacity() + 1;
    const std::size_t node = sizeof(std::string) + 2 * sizeof(void*) + sizeof(std::uint64_t);
    return bytes + names_.capacity() * sizeof(std::string) + index_.size() * node +
           index_.bucket_count() * sizeof(void*) + 2 * chars;
}

bool operator==(const IdMap& a, const IdMap& b) {
    if (a.size() != b.size()) return false;
    if (a.integers_ && b.integers_) return a.values_ == b.values_;
    if (!a.integers_ && !b.integers_) return a.names_ == b.names_;
    for (std::uint32_t i = 0; i < a.size(); ++i) {
        if (a.name(i) != b.name(i)) return false;
    }
    return true;
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

void Ratings::release_users_before(UserId u, bool items) noexcept {
    if (u >= num_users_) {
        std::vector<float>().swap(user_values_);
        if (items) std::vector<ItemId>().swap(user_items_);
        return;
    }
    // From the start every time: the pages released before cost nothing to release again.
    const std::uint64_t n = user_offsets_[u];
    if (!user_values_.empty()) release_pages(user_values_.data(), n * sizeof(float));
    if (items && !user_items_.empty()) release_pages(user_items_.data(), n * sizeof(ItemId));
}

template <class Triples>
Ratings Ratings::build(std::uint32_t num_users, std::uint32_t num_items, const Triples& triples,
                       const TripleOrigin& origin, TripleList* consume) {
    Ratings r;
    r.num_users_ = num_users;
    r.num_items_ = num_items;
    const std::uint64_t nnz = triples.size();

    // A counting sort by user (each user's ratings in input order), then each user's ratings
    // sorted by item: no index arrays and no second copy of the matrix, so the triples and the
    // CSR are all there is (20 bytes a rating). When the users never decrease (a file grouped by
    // user, whose ids are numbered in order of first appearance), the CSR is the triples in input
    // order: it is appended to (no zero-filled arrays) and a list given away releases its chunks
    // as they are copied, so the CSR's pages replace them (12 bytes a rating). A triple's index
    // is then its user's offset plus its place among the user's ratings (for a duplicate's lines).
    std::vector<std::uint64_t> counts(num_users, 0);
    bool in_order = true;
    for (std::uint64_t k = 0; k < nnz; ++k) {
        const RatingTriple& t = triples[k];
        ROTOR_ASSERT(t.user < num_users && t.item < num_items, "triple out of the matrix");
        if (k > 0 && t.user < triples[k - 1].user) in_order = false;
        ++counts[t.user];
    }
    r.user_offsets_ = offsets_from_counts(counts);
    std::vector<std::uint64_t>().swap(counts);
    if (in_order) {
        r.user_items_.reserve(nnz);
        r.user_values_.reserve(nnz);
        for (std::uint64_t k = 0; k < nnz; ++k) {
            const RatingTriple& t = triples[k];
            r.user_items_.push_back(t.item);
            r.user_values_.push_back(t.value);
            if (consume != nullptr && ((k + 1) & (TripleList::kChunk - 1)) == 0)
                consume->release_before(k + 1);
        }
        if (consume != nullptr) consume->clear();
        r.built_in_place_ = consume != nullptr;
    } else {
        r.user_items_.resize(nnz);
        r.user_values_.resize(nnz);
        std::vector<std::uint64_t> next(r.user_offsets_.begin(), r.user_offsets_.end() - 1);
        for (std::uint64_t k = 0; k < nnz; ++k) {
            const RatingTriple& t = triples[k];
            const std::uint64_t q = next[t.user]++;
            r.user_items_[q] = t.item;
            r.user_values_[q] = t.value;
        }
    }
    // Readers mostly see a user's items in increasing order: then nothing moves. Else a stable
    // sort of the user's ratings by item (equal items stay in input order). A duplicate is kept
    // with the places of both among its user's ratings (input order).
    struct Duplicate {
        UserId user;
        ItemId item;
        std::uint64_t first, second;
    };
    struct Entry {
        ItemId item;
        float value;
        std::uint64_t place;
    };
    std::vector<Entry> row;
    std::vector<Duplicate> duplicates;
    for (std::uint32_t u = 0; u < num_users; ++u) {
        const std::uint64_t lo = r.user_offsets_[u];
        const std::uint64_t hi = r.user_offsets_[u + 1];
        ItemId* items = r.user_items_.data();
        float* values = r.user_values_.data();
        if (std::is_sorted(items + lo, items + hi)) {
            for (std::uint64_t p = lo + 1; p < hi; ++p)
                if (items[p] == items[p - 1])
                    duplicates.push_back({u, items[p], p - 1 - lo, p - lo});
            continue;
        }
        row.clear();
        for (std::uint64_t p = lo; p < hi; ++p) row.push_back({items[p], values[p], p - lo});
        std::stable_sort(row.begin(), row.end(),
                         [](const Entry& x, const Entry& y) { return x.item < y.item; });
        for (std::uint64_t p = lo; p < hi; ++p) {
            items[p] = row[p - lo].item;
            values[p] = row[p - lo].value;
            if (p > lo && items[p] == items[p - 1])
                duplicates.push_back({u, items[p], row[p - lo - 1].place, row[p - lo].place});
        }
    }
    if (!duplicates.empty()) {
        // Report the duplicate whose second occurrence comes first in the input, with its first.
        if (in_order) {
            const auto at = [&r](UserId u, std::uint64_t place) {
                return r.user_offsets_[u] + place;
            };
            const Duplicate* best = &duplicates[0];
            for (const Duplicate& d : duplicates)
                if (at(d.user, d.second) < at(best->user, best->second)) best = &d;
            duplicate_error(origin, RatingTriple{best->user, best->item, 0.0f},
                            at(best->user, best->first), at(best->user, best->second));
        }
        std::vector<std::pair<UserId, ItemId>> keys;
        for (const Duplicate& d : duplicates) keys.emplace_back(d.user, d.item);
        std::sort(keys.begin(), keys.end());
        std::map<std::pair<UserId, ItemId>, std::uint64_t> seen;
        for (std::uint64_t k = 0; k < nnz; ++k) {
            const RatingTriple& t = triples[k];
            const std::pair<UserId, ItemId> key{t.user, t.item};
            if (!std::binary_search(keys.begin(), keys.end(), key)) continue;
            const auto [it, fresh] = seen.emplace(key, k);
            if (!fresh) duplicate_error(origin, t, it->second, k);
        }
        ROTOR_ASSERT(false, "a duplicate rating not found again");
    }
    r.count_items();
    r.compute_mean();
    return r;
}

Ratings Ratings::from_triples(std::uint32_t num_users, std::uint32_t num_items,
                              std::span<const RatingTriple> triples, const TripleOrigin& origin) {
    return build(num_users, num_items, triples, origin, nullptr);
}

Ratings Ratings::from_triples(std::uint32_t num_users, std::uint32_t num_items,
                              const TripleList& triples, const TripleOrigin& origin) {
    return build(num_users, num_items, triples, origin, nullptr);
}

Ratings Ratings::from_triples(std::uint32_t num_users, std::uint32_t num_items,
                              TripleList&& triples, const TripleOrigin& origin) {
    Ratings r = build(num_users, num_items, triples, origin, &triples);
    triples.clear();
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
    r.count_items();
    r.compute_mean();
    return r;
}

void Ratings::count_items() {
    std::vector<std::uint64_t> counts(num_items_, 0);
    for (const ItemId i : user_items_) ++counts[i];
    item_offsets_ = offsets_from_counts(counts);
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

std::size_t Ratings::memory_bytes() const noexcept {
    return (user_offsets_.size() + item_offsets_.size()) * sizeof(std::uint64_t) +
           user_items_.size() * sizeof(std::uint32_t) + user_values_.size() * sizeof(float);
}

std::uint64_t Ratings::build_peak_bytes() const noexcept {
    const std::uint64_t bytes_per_rating = built_in_place_ ? 12 : 20;
    // The counts and offsets a user and an item.
    return bytes_per_rating * nnz() + 16 * (std::uint64_t{num_users_} + num_items_ + 2);
}

bool operator==(const Ratings& a, const Ratings& b) {
    return a.num_users_ == b.num_users_ && a.num_items_ == b.num_items_ &&
           a.user_offsets_ == b.user_offsets_ && a.user_items_ == b.user_items_ &&
           a.user_values_ == b.user_values_;
}

}  // namespace rotor::mf
