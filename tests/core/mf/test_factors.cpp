#include "core/mf/factors.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <vector>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::mf {
namespace {

TEST(Factors, ShapeAndZeros) {
    const Factors f(5, 3);
    EXPECT_EQ(f.rows(), 5u);
    EXPECT_EQ(f.k(), 3u);
    EXPECT_EQ(f.values().size(), 15u);
    for (float x : f.values()) EXPECT_EQ(x, 0.0f);
    EXPECT_THROW(Factors(5, 0), ConfigError);
    EXPECT_THROW(Factors(1, kMaxRank + 1), ConfigError);
}

TEST(Factors, InitDependsOnTheGlobalRowOnly) {
    Factors all(10, 7);
    all.init_uniform(42, 5, -0.5f, 0.5f);
    for (float x : all.values()) {
        EXPECT_GE(x, -0.5f);
        EXPECT_LE(x, 0.5f);
    }
    const std::vector<std::uint32_t> ids{8, 2, 5};
    Factors some(3, 7);
    some.init_uniform(42, 5, -0.5f, 0.5f, ids);
    for (std::uint32_t r = 0; r < 3; ++r) {
        for (std::uint32_t k = 0; k < 7; ++k) {
            EXPECT_EQ(std::bit_cast<std::uint32_t>(some.at(r, k)),
                      std::bit_cast<std::uint32_t>(all.at(ids[r], k)));
        }
    }
    Factors other(10, 7);
    other.init_uniform(42, 6, -0.5f, 0.5f);  // another stream: other values
    EXPECT_FALSE(other == all);
}

TEST(Factors, ColumnsRoundTrip) {
    Factors f(4, 3);
    f.init_uniform(1, 1, 0.0f, 1.0f);
    std::vector<float> col(4);
    f.get_column(1, col);
    for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(col[i], f.at(i, 1));
    for (float& x : col) x += 1;
    f.set_column(1, col);
    for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(f.row(i)[1], col[i]);
}

TEST(Factors, DotIsTheInnerProduct) {
    Rng rng(3);
    for (std::size_t n : {0, 1, 3, 4, 5, 17, 1024}) {
        std::vector<float> a(n), b(n);
        double want = 0;
        for (std::size_t k = 0; k < n; ++k) {
            a[k] = float(rng.uniform() - 0.5);
            b[k] = float(rng.uniform() - 0.5);
            want += double(a[k]) * b[k];
        }
        EXPECT_NEAR(dot(a, b), want, 1e-12) << n;
    }
}

}  // namespace
}  // namespace rotor::mf
