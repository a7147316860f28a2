// Tests of split_ratings(): deterministic for a seed, disjoint, covering every rating, and by
// user keeping every rated user in train.
#include "core/mf/ratings_split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "core/base/error.h"
#include "tests/core/mf/ratings_test_util.h"

namespace rotor::mf {
namespace {

using testing::csr_entries;
using testing::Entry;
using testing::item_degrees_match;
using testing::random_triples;

Ratings sample(std::uint64_t seed = 1) {
    // 400 users x 300 items, 12,000 ratings: users with 0, 1 and many ratings.
    return Ratings::from_triples(400, 300, random_triples(400, 300, 12000, seed));
}

void expect_partition(const Ratings& all, const RatingsSplit& s) {
    EXPECT_EQ(s.train.num_users(), all.num_users());
    EXPECT_EQ(s.test.num_items(), all.num_items());
    EXPECT_EQ(s.train.nnz() + s.test.nnz(), all.nnz());
    std::multiset<Entry> both = csr_entries(s.train);
    const auto test = csr_entries(s.test);
    both.insert(test.begin(), test.end());
    EXPECT_EQ(both, csr_entries(all));  // covers all; with the sizes, disjoint
    EXPECT_TRUE(item_degrees_match(s.test));
}

TEST(SplitRatings, ByRatingIsDeterministicDisjointAndCovering) {
    const Ratings all = sample();
    const RatingsSplit a = split_ratings(all, 0.2, 42, SplitBy::kRating);
    const RatingsSplit b = split_ratings(all, 0.2, 42, SplitBy::kRating);
    EXPECT_EQ(a.train, b.train);
    EXPECT_EQ(a.test, b.test);
    expect_partition(all, a);
    const double f = double(a.test.nnz()) / double(all.nnz());
    EXPECT_NEAR(f, 0.2, 0.015);  // 12,000 Bernoulli(0.2): sd 0.0037
    const RatingsSplit c = split_ratings(all, 0.2, 43, SplitBy::kRating);
    EXPECT_NE(c.test, a.test);
}

TEST(SplitRatings, ByUserKeepsEveryRatedUserInTrain) {
    const Ratings all = sample(2);
    const RatingsSplit s = split_ratings(all, 0.3, 7, SplitBy::kUser);
    expect_partition(all, s);
    EXPECT_EQ(s.test, split_ratings(all, 0.3, 7, SplitBy::kUser).test);
    EXPECT_NE(s.test, split_ratings(all, 0.3, 8, SplitBy::kUser).test);
    for (UserId u = 0; u < all.num_users(); ++u) {
        const std::uint64_t n = all.user_degree(u);
        const std::uint64_t want =
            std::min<std::uint64_t>(std::llround(0.3 * double(n)), n == 0 ? 0 : n - 1);
        EXPECT_EQ(s.test.user_degree(u), want) << "user " << u;
        if (n > 0) {
            EXPECT_GE(s.train.user_degree(u), 1u) << "user " << u;
        }
    }
}

TEST(SplitRatings, ByUserSingleRatingUsersStayInTrain) {
    // Users 0..9 with one rating each, user 10 with two.
    std::vector<RatingTriple> t;
    for (std::uint32_t u = 0; u < 10; ++u) t.push_back({u, u, 1.0f});
    t.push_back({10, 0, 2.0f});
    t.push_back({10, 1, 3.0f});
    const Ratings all = Ratings::from_triples(11, 10, t);
    const RatingsSplit s = split_ratings(all, 0.9, 3, SplitBy::kUser);
    EXPECT_EQ(s.test.nnz(), 1u);
    EXPECT_EQ(s.test.user_degree(10), 1u);
    EXPECT_EQ(s.train.nnz(), 11u);
}

TEST(SplitRatings, ExtremeFractions) {
    const Ratings all = sample(3);
    EXPECT_EQ(split_ratings(all, 0.0, 1, SplitBy::kRating).train, all);
    EXPECT_EQ(split_ratings(all, 1.0, 1, SplitBy::kRating).test, all);
    EXPECT_EQ(split_ratings(all, 0.0, 1, SplitBy::kUser).test.nnz(), 0u);
    const RatingsSplit one = split_ratings(all, 1.0, 1, SplitBy::kUser);
    for (UserId u = 0; u < all.num_users(); ++u) {
        EXPECT_EQ(one.train.user_degree(u), all.user_degree(u) == 0 ? 0u : 1u);
    }
}

TEST(SplitRatings, FractionOutsideZeroOneIsAConfigError) {
    const Ratings all = sample();
    EXPECT_THROW(split_ratings(all, -0.1, 1, SplitBy::kRating), ConfigError);
    EXPECT_THROW(split_ratings(all, 1.5, 1, SplitBy::kUser), ConfigError);
    EXPECT_THROW(split_ratings(all, std::nan(""), 1, SplitBy::kUser), ConfigError);
}

}  // namespace
}  // namespace rotor::mf
