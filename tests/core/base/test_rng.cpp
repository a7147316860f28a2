#include "core/base/rng.h"

#include <gtest/gtest.h>

#include <cmath>
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
