// Tests of the correlation check's pair cache: the cached and pushed pair dots are the bits of
// push_candidate_dots (for 1 and 3 parts), the on-demand greedy scan selects what the full
// check selects and reads only the pairs it reaches, and a pair found in the cache is always its
// own.
#include "core/lasso/pair_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <set>
#include <tuple>
#include <vector>

#include "tests/core/lasso/lasso_test_util.h"

namespace rotor::lasso {
namespace {

using testing::correlated_data;
using testing::random_data;
using testing::Split;

TEST(PairDotCache, FindsInsertedPairsEitherWayRoundUntilOverwritten) {
    PairDotCache c(1);  // two slots: a third pair overwrites one
    EXPECT_EQ(c.find(1, 2), nullptr);
    c.insert(2, 1, 0.5);
    ASSERT_NE(c.find(1, 2), nullptr);
    EXPECT_EQ(*c.find(1, 2), 0.5);
    EXPECT_EQ(*c.find(2, 1), 0.5);
    c.insert(1, 3, 1.5);
    c.insert(7, 4, 2.5);
    int found = 0;
    for (const auto& [a, b, v] : {std::tuple{1u, 2u, 0.5}, {1u, 3u, 1.5}, {4u, 7u, 2.5}}) {
        if (const double* d = c.find(a, b)) {
            EXPECT_EQ(*d, v);  // a pair found is always its own value
            ++found;
        }
    }
    EXPECT_GE(found, 1);
    EXPECT_LE(found, 2);
    EXPECT_EQ(*c.find(4, 7), 2.5);  // the last insert is always there
}

TEST(PairDotCache, CachedCandidateDotsListTheMissingPairsGroupedByFirst) {
    PairDotCache c;
    c.insert(5, 2, 1.25);
    const std::vector<std::uint32_t> cand{2, 5, 9};
    const CandidateDots m = cached_candidate_dots(cand, c);
    ASSERT_EQ(m.dots.size(), 3u);
    EXPECT_EQ(m.dots[pair_index(0, 1, 3)], 1.25);
    ASSERT_EQ(m.missing.size(), 2u);
    EXPECT_EQ(m.missing[0].a, 2u);
    EXPECT_EQ(m.missing[0].b, 9u);
    EXPECT_EQ(m.missing[1].a, 5u);
    EXPECT_EQ(m.missing[1].b, 9u);
    EXPECT_EQ(m.missing_index,
              (std::vector<std::size_t>{pair_index(0, 2, 3), pair_index(1, 2, 3)}));
}

TEST(PairDotCache, PushedPairsAreTheBitsOfTheFullPushAndSelectAlike) {
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
        Rng rng(seed);
        const std::uint32_t p = 10 + static_cast<std::uint32_t>(rng.below(20));
        const RawData raw = seed % 2 ? random_data(40, p, 0.2 + 0.6 * rng.uniform(), 3, seed)
                                     : correlated_data(40, p, 4, 0.2 + rng.uniform(), seed);
        const Design d = build_design(raw);
        const ProblemView pv = ProblemView::of(d);
        StradsParams params;
        params.rho = 0.05 + 0.9 * rng.uniform();
        params.parallel = 1 + static_cast<std::uint32_t>(rng.below(p));
        const std::vector<std::uint32_t> cand = schedule_shotgun(rng, p, p);
        Split one(d, 1), three(d, 3);
        std::vector<core::ExactSum> full(pair_count(cand.size()));
        std::vector<double> scratch;
        push_candidate_dots(one.views[0], cand, full, scratch);
        // Half the pairs cached already; the rest pushed over 3 parts.
        PairDotCache cache;
        for (std::size_t a = 0; a + 1 < cand.size(); a += 2)
            cache.insert(cand[a], cand[a + 1], full[pair_index(a, a + 1, cand.size())].value());
        const std::vector<CoordinatePair> missing = cached_candidate_dots(cand, cache).missing;
        std::vector<core::ExactSum> pushed(missing.size());
        for (const PartView& v : three.views) push_pair_dots(v, missing, pushed, scratch);
        for (std::size_t t = 0; t < missing.size(); ++t)
            cache.insert(missing[t].a, missing[t].b, pushed[t].value());
        for (std::size_t a = 0; a < cand.size(); ++a) {
            for (std::size_t b = a + 1; b < cand.size(); ++b) {
                const double* got = cache.find(cand[b], cand[a]);
                ASSERT_NE(got, nullptr);
                EXPECT_EQ(std::bit_cast<std::uint64_t>(*got),
                          std::bit_cast<std::uint64_t>(full[pair_index(a, b, cand.size())].value()))
                    << "seed " << seed;
            }
        }
        // The on-demand scan: the selection of the full check, reading only reached pairs.
        std::set<std::pair<std::uint32_t, std::uint32_t>> read;
        const Selection s =
            select_uncorrelated(pv, cand, params, [&](std::uint32_t a, std::uint32_t b) {
                read.insert({a, b});
                return *cache.find(a, b);
            });
        const Selection want = select_uncorrelated(pv, cand, full, params);
        EXPECT_EQ(s.kept, want.kept) << "seed " << seed;
        EXPECT_EQ(s.rejected, want.rejected) << "seed " << seed;
        EXPECT_LE(read.size(), cand.size() * params.parallel);
        for (const auto& [a, b] : read) {
            EXPECT_TRUE(std::find(s.kept.begin(), s.kept.end(), a) != s.kept.end())
                << "a pair read with a candidate that was never kept";
        }
    }
}

}  // namespace
}  // namespace rotor::lasso
