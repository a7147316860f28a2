#include "core/mf/ratings_load.h"

#include <cstddef>
#include <vector>

#include <fmt/format.h>

#include "core/base/error.h"
#include "core/io/binary_sections.h"
#include "core/mf/ratings_binary.h"

namespace rotor::mf {
namespace {

/// True when `path` opens and starts with the binary magic. A file that cannot be opened is left
/// to the text reader, whose error names it.
bool is_binary(const std::string& path) {
    const std::string prefix = core::file_prefix(path);
    return has_ratings_binary_magic(std::as_bytes(std::span(prefix)));
}

/// The new index of every index of `from`: its id's index in `into` (appended when new, so ids
/// new to `into` follow the known ones in `from`'s order, as the text reader orders them by
/// first appearance).
std::vector<std::uint32_t> remap(const IdMap& from, IdMap& into, const std::string& path,
                                 const char* what) {
    std::vector<std::uint32_t> index(from.size());
    for (std::uint32_t i = 0; i < from.size(); ++i) {
        if (const auto found = into.find(from.name(i))) {
            index[i] = *found;
            continue;
        }
        if (into.full())
            throw InputError(path, fmt::format("more than 2^32 - 1 distinct {}", what));
        index[i] = into.insert(from.name(i)).first;
    }
    return index;
}

/// A binary file's ratings with its ids mapped through the given maps.
RatingsFile map_binary(RatingsFile bin, const std::string& path,
                       const ReadRatingsOptions& options) {
    RatingsFile out;
    if (options.users != nullptr) out.users = *options.users;
    if (options.items != nullptr) out.items = *options.items;
    out.first_new_user = out.users.size();
    out.first_new_item = out.items.size();
    const Ratings& r = bin.ratings;
    if ((bin.users.empty() && r.num_users() > 0) || (bin.items.empty() && r.num_items() > 0)) {
        throw InputError(path,
                         "holds no ids, so it cannot be read against another file's ids "
                         "(rebuild it with rotor ratings build)");
    }
    const auto users = remap(bin.users, out.users, path, "user ids");
    const auto items = remap(bin.items, out.items, path, "item ids");
    std::vector<RatingTriple> triples;
    triples.reserve(r.nnz());
    for (UserId u = 0; u < r.num_users(); ++u) {
        const auto its = r.items_of(u);
        const auto vals = r.values_of_user(u);
        for (std::size_t t = 0; t < its.size(); ++t) {
            const RatingTriple x{users[u], items[its[t]], vals[t]};
            if (x.user >= out.first_new_user || x.item >= out.first_new_item)
                ++out.ratings_with_new_ids;
            triples.push_back(x);
        }
    }
    TripleOrigin origin;
    origin.path = path;
    origin.users = &out.users;
    origin.items = &out.items;
    out.ratings = Ratings::from_triples(out.users.size(), out.items.size(), triples, origin);
    return out;
}

/// ReadRatingsOptions::nonnegative for a binary file: the first negative rating by user.
void check_nonnegative(const RatingsFile& f, const std::string& path, const char* reason) {
    const Ratings& r = f.ratings;
    for (UserId u = 0; u < r.num_users(); ++u) {
        const auto items = r.items_of(u);
        const auto values = r.values_of_user(u);
        for (std::size_t t = 0; t < items.size(); ++t) {
            if (values[t] >= 0) continue;
            const auto name = [](const IdMap& m, std::uint32_t i) {
                return i < m.size() ? m.name(i) : std::to_string(i);
            };
            throw InputError(
                path, fmt::format("rating {} of user {}, item {} is negative ({})", values[t],
                                  name(f.users, u), name(f.items, items[t]), reason));
        }
    }
}

}  // namespace

RatingsFile load_ratings(const std::string& path, const ReadRatingsOptions& options) {
    if (!is_binary(path)) return read_ratings(path, options);
    RatingsFile bin = read_ratings_binary(path, options.limits);
    if (options.nonnegative != nullptr) check_nonnegative(bin, path, options.nonnegative);
    if (options.users == nullptr && options.items == nullptr) return bin;
    return map_binary(std::move(bin), path, options);
}

}  // namespace rotor::mf
