// Tests of sigmoid_neg, the inline σ(−z) = 1 / (1 + e^z) of the block gradient: within 4 ulp of a
// long double reference on a dense grid and on random arguments over every range that matters,
// the limits and special values exactly, monotone to rounding, and two lanes at a time with the
// scalar bits.
#include "core/logreg/sigmoid.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/base/rng.h"

namespace rotor::logreg {
namespace {

/// |got − want| in units of the last place of `want`'s double (want > 0, normal or subnormal).
double ulp_error(double got, long double want) {
    const double w = static_cast<double>(want);
    const double ulp = std::nextafter(w, std::numeric_limits<double>::infinity()) - w;
    return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / ulp);
}

long double reference(double z) { return 1.0L / (1.0L + std::exp(static_cast<long double>(z))); }

TEST(Sigmoid, WithinFourUlpOnAGridAndAtRandom) {
    double worst = 0;
    double worst_z = 0;
    const auto check = [&](double z) {
        const long double want = reference(z);
        if (static_cast<double>(want) < std::numeric_limits<double>::min()) return;  // subnormal
        const double e = ulp_error(sigmoid_neg(z), want);
        if (e > worst) worst = e, worst_z = z;
    };
    for (double z = -720; z <= 720; z += 1.0 / 1024) check(z);
    Rng rng(20261124);
    for (int i = 0; i < 1'000'000; ++i) {
        const double u = rng.uniform();
        check(-40 + 80 * u);                       // where gradients live
        check(std::ldexp(2 * u - 1, -(i % 60)));   // near 0, down to 2^-60
        check((i % 2 ? 1 : -1) * (650 + 58 * u));  // close to the limits
    }
    EXPECT_LE(worst, 4.0) << "at z = " << worst_z;
    RecordProperty("worst_ulp", std::to_string(worst));
}

TEST(Sigmoid, LimitsAndSpecialValues) {
    EXPECT_EQ(sigmoid_neg(0.0), 0.5);
    EXPECT_EQ(sigmoid_neg(-0.0), 0.5);
    EXPECT_EQ(sigmoid_neg(-746.0), 1.0);
    EXPECT_EQ(sigmoid_neg(-1e300), 1.0);
    EXPECT_EQ(sigmoid_neg(-std::numeric_limits<double>::infinity()), 1.0);
    EXPECT_EQ(sigmoid_neg(746.0), 0.0);
    EXPECT_EQ(sigmoid_neg(1e300), 0.0);
    EXPECT_EQ(sigmoid_neg(std::numeric_limits<double>::infinity()), 0.0);
    EXPECT_TRUE(std::isnan(sigmoid_neg(std::numeric_limits<double>::quiet_NaN())));
    EXPECT_EQ(sigmoid_neg(-40.0), 1.0);  // 1 − 4e-18 rounds to 1
    // Where e^z overflows (z > 709.78) the result is +0, as 1 / (1 + exp(z)) is in double
    // (exactly it is subnormal up to 745).
    EXPECT_EQ(sigmoid_neg(709.0), static_cast<double>(reference(709.0)));
    EXPECT_EQ(sigmoid_neg(730.0), 0.0);
}

TEST(Sigmoid, PairsGiveTheScalarBits) {
    // The block gradient takes σ two at a time: each lane must be the scalar function's bits.
    Rng rng(7);
    const double special[] = {0.0,
                              -0.0,
                              709.78,
                              745.5,
                              -745.5,
                              746.5,
                              -746.5,
                              1e300,
                              -1e300,
                              1e-300,
                              -1e-300,
                              std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(),
                              std::numeric_limits<double>::quiet_NaN()};
    const auto same = [](double a, double b) { return std::isnan(a) ? std::isnan(b) : a == b; };
    for (int i = 0; i < 200'000; ++i) {
        const double a = i < 14 ? special[i] : -800 + 1600 * rng.uniform();
        const double b = i < 14 ? special[13 - i] : std::ldexp(rng.uniform() - 0.5, i % 12);
        const DoublePair s = sigmoid_neg(DoublePair{a, b});
        ASSERT_TRUE(same(s[0], sigmoid_neg(a))) << "z = " << a;
        ASSERT_TRUE(same(s[1], sigmoid_neg(b))) << "z = " << b;
        ASSERT_EQ(std::signbit(s[0]), std::signbit(sigmoid_neg(a)));
    }
}

TEST(Sigmoid, MonotoneToRounding) {
    // Falls everywhere; a rise could only be rounding, never more than 4 ulp.
    double last = 1.0;
    for (double z = -50; z <= 50; z += 1.0 / 4096) {
        const double s = sigmoid_neg(z);
        ASSERT_LE(s, last + 4 * (std::nextafter(last, 2.0) - last)) << "at z = " << z;
        last = s;
    }
    EXPECT_LT(sigmoid_neg(1.0), sigmoid_neg(0.5));
}

}  // namespace
}  // namespace rotor::logreg
