#include "core/mf/ratings_split.h"

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::mf {
namespace {

/// One part's CSR arrays, filled user by user.
struct CsrBuilder {
    std::vector<std::uint64_t> offsets{0};
    std::vector<ItemId> items;
    std::vector<float> values;

    void add(ItemId i, float v) {
        items.push_back(i);
        values.push_back(v);
    }
    void end_user() { offsets.push_back(items.size()); }
    Ratings build(const Ratings& shape, const char* name) {
        return Ratings::from_csr(shape.num_users(), shape.num_items(), std::move(offsets),
                                 std::move(items), std::move(values), name);
    }
};

/// Marks which of user u's n ratings go to test (1) and which stay in train (0).
void draw_user(std::vector<char>& to_test, std::uint64_t n, double fraction, Rng& rng, SplitBy by) {
    to_test.assign(n, 0);
    if (by == SplitBy::kRating) {
        for (std::uint64_t k = 0; k < n; ++k) to_test[k] = rng.uniform() < fraction ? 1 : 0;
        return;
    }
    if (n < 2) return;
    const auto wanted = static_cast<std::uint64_t>(std::floor(fraction * double(n) + 0.5));
    const std::uint64_t t = std::min(wanted, n - 1);
    // The first t positions of a partial Fisher-Yates shuffle.
    std::vector<std::uint64_t> pos(n);
    std::iota(pos.begin(), pos.end(), std::uint64_t{0});
    for (std::uint64_t k = 0; k < t; ++k) {
        std::swap(pos[k], pos[k + rng.below(n - k)]);
        to_test[pos[k]] = 1;
    }
}

}  // namespace

RatingsSplit split_ratings(const Ratings& ratings, double fraction, std::uint64_t seed,
                           SplitBy by) {
    if (!(fraction >= 0.0 && fraction <= 1.0)) {
        throw ConfigError("fraction", "must be in [0, 1], got " + std::to_string(fraction));
    }
    CsrBuilder train;
    CsrBuilder test;
    const auto expected_test = static_cast<std::size_t>(fraction * double(ratings.nnz()));
    test.items.reserve(expected_test);
    test.values.reserve(expected_test);
    train.items.reserve(ratings.nnz() - expected_test);
    train.values.reserve(ratings.nnz() - expected_test);
    std::vector<char> to_test;
    for (UserId u = 0; u < ratings.num_users(); ++u) {
        const auto items = ratings.items_of(u);
        const auto values = ratings.values_of_user(u);
        Rng rng = Rng::from({seed, kSplitStream, u});
        draw_user(to_test, items.size(), fraction, rng, by);
        for (std::size_t k = 0; k < items.size(); ++k) {
            (to_test[k] != 0 ? test : train).add(items[k], values[k]);
        }
        train.end_user();
        test.end_user();
    }
    return {train.build(ratings, "train split"), test.build(ratings, "test split")};
}

}  // namespace rotor::mf
