#include "core/base/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace rotor {
namespace {

TEST(Rng, SameKeySameStreamDifferentKeyDifferentStream) {
    Rng a = Rng::from({42, 1, 7});
    Rng b = Rng::from({42, 1, 7});
    Rng c = Rng::from({42, 7, 1});
    bool differs = false;
    for (int i = 0; i < 100; ++i) {
        const auto x = a.next();
        EXPECT_EQ(x, b.next());
        differs |= (x != c.next());
    }
    EXPECT_TRUE(differs);
}

TEST(Rng, FromWordsMatchesFrom) {
    const std::vector<std::uint64_t> words{3, 0x5049434b, 12, 1};
    Rng a = Rng::from({3, 0x5049434b, 12, 1});
    Rng b = Rng::from_words(words);
    EXPECT_EQ(a.state(), b.state());
    Rng c = Rng::from_words(std::span<const std::uint64_t>(words).first(3));
    EXPECT_NE(a.state(), c.state());
}

TEST(Rng, BelowIsUniform) {
    // chi-square goodness of fit over 10 cells, 100k draws: the 0.999 quantile with 9 dof is 27.9.
    Rng r(123);
    constexpr int kCells = 10;
    constexpr int kDraws = 100000;
    std::vector<int> hist(kCells, 0);
    for (int i = 0; i < kDraws; ++i) ++hist[r.below(kCells)];
    double chi2 = 0;
    const double expect = static_cast<double>(kDraws) / kCells;
    for (int h : hist) chi2 += (h - expect) * (h - expect) / expect;
    EXPECT_LT(chi2, 27.9);
}

TEST(Rng, UniformInUnitInterval) {
    Rng r(5);
    double sum = 0;
    for (int i = 0; i < 100000; ++i) {
        const double u = r.uniform();
        ASSERT_GE(u, 0.0);
        ASSERT_LT(u, 1.0);
        sum += u;
    }
    EXPECT_NEAR(sum / 100000, 0.5, 0.01);
}

TEST(Rng, StateRoundTrips) {
    Rng a(9);
    a.next();
    Rng b;
    b.set_state(a.state());
    EXPECT_EQ(a.next(), b.next());
}

}  // namespace
}  // namespace rotor
