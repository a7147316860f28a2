#include "core/base/exact_sum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/base/rng.h"

namespace rotor::core {
namespace {

std::vector<double> random_terms(std::size_t n, std::uint64_t seed) {
    Rng rng(seed);
    std::vector<double> t(n);
    for (double& x : t) {
        const double mag = std::pow(10.0, -8 + 18 * rng.uniform());  // 1e-8 .. 1e10
        x = (rng.uniform() < 0.5 ? -mag : mag) * (1 + rng.uniform());
    }
    return t;
}

TEST(ExactSum, DoesNotDependOnOrderOrGrouping) {
    std::vector<double> t = random_terms(5000, 1);
    ExactSum ref;
    for (double x : t) ref.add(x);
    Rng rng(2);
    for (int trial = 0; trial < 10; ++trial) {
        std::shuffle(t.begin(), t.end(), rng);
        // Cut into 1..6 groups at random points, sum each, add the groups.
        const auto groups = 1 + rng.below(6);
        std::vector<ExactSum> parts(groups);
        for (double x : t) parts[rng.below(groups)].add(x);
        ExactSum total;
        for (const ExactSum& p : parts) total.add(p);
        EXPECT_TRUE(total == ref) << "trial " << trial;
        EXPECT_EQ(total.value(), ref.value());
    }
}

TEST(ExactSum, IsAccurate) {
    const std::vector<double> t = random_terms(5000, 3);
    ExactSum s;
    long double ref = 0;
    for (double x : t) {
        s.add(x);
        ref += x;
    }
    // each term rounded by < 2^-48, plus the long double sum's own error
    EXPECT_NEAR(s.value(), static_cast<double>(ref), 5000 * 0x1p-48 + 1e-15 * std::fabs(ref));
    // Cancellation a double sum gets wrong: 1e10 + 1e-6 - 1e10.
    ExactSum c;
    c.add(1e10);
    c.add(1e-6);
    c.add(-1e10);
    EXPECT_NEAR(c.value(), 1e-6, 1e-14);
}

TEST(ExactSum, RoundsEachTermToTheGrid) {
    // Both conversion paths (|x| < 2^15 and above) are exact for values on the 2^-48 grid, and
    // round toward zero the others.
    for (double x :
         {0.0, 1.0, -0.375, 0x1p-48, 32767.99999999, 32768.0, -32768.5, 1e13 + 0.25, -1.4e14}) {
        EXPECT_EQ(ExactSum::of(x).value(), x) << x;
    }
    EXPECT_EQ(ExactSum::of(0x1p-49).value(), 0.0);        // half a step: toward zero
    EXPECT_EQ(ExactSum::of(-0x3p-49).value(), -0x1p-48);  // -1.5 steps: -1 step
    EXPECT_EQ(ExactSum::of(0x7p-50).value(), 0x1p-48);    // 1.75 steps: 1 step
    // Above 2^15 the two-part conversion: values there are on the grid, exact.
    EXPECT_EQ(ExactSum::of(-40000.0 - 0x1p-37).value(), -40000.0 - 0x1p-37);
    ExactSum big;
    for (int i = 0; i < 100000; ++i) big.add(1e13);
    EXPECT_EQ(big.value(), 1e18);
}

TEST(ExactSum, OutOfRangeOrNotFiniteIsInvalid) {
    for (double x : {ExactSum::kMaxTerm, -2e14, double{INFINITY}, std::nan("")}) {
        ExactSum s;
        s.add(1.0);
        s.add(x);
        EXPECT_FALSE(s.valid()) << x;
        EXPECT_TRUE(std::isnan(s.value())) << x;
        ExactSum t = ExactSum::of(2.0);
        t.add(s);
        EXPECT_FALSE(t.valid());
    }
    EXPECT_TRUE(ExactSum::of(1.4e14).valid());
}

TEST(ExactSum, LimbsAddUpAndRoundTrip) {
    const std::vector<double> t = random_terms(3000, 5);
    std::vector<ExactSum> parts(4);
    for (std::size_t i = 0; i < t.size(); ++i) parts[i % 4].add(t[i] * 1e3);
    parts[3].add(-1e14);  // a negative total in one part
    std::array<std::int64_t, ExactSum::kLimbs> limbs{};
    ExactSum total;
    for (const ExactSum& p : parts) {
        EXPECT_TRUE(ExactSum::from_limbs(p.to_limbs()) == p);
        const auto l = p.to_limbs();
        for (int k = 0; k < ExactSum::kLimbs; ++k) limbs[k] += l[k];
        total.add(p);
    }
    EXPECT_TRUE(ExactSum::from_limbs(limbs) == total);
    ExactSum bad;
    bad.add(std::nan(""));
    EXPECT_FALSE(ExactSum::from_limbs(bad.to_limbs()).valid());
}

TEST(ExactSum, NarrowLimbsAddUpAndRoundTripWhereTheyFit) {
    const std::vector<double> t = random_terms(3000, 6);
    std::vector<ExactSum> parts(5);
    for (std::size_t i = 0; i < t.size(); ++i) parts[i % 5].add(t[i] * 1e-3);  // below 2^38
    parts[3].add(-2e11);                                                       // a negative part
    parts[4].add(2e11);
    std::array<std::int64_t, 2> limbs{};
    ExactSum total;
    for (const ExactSum& p : parts) {
        std::array<std::int64_t, ExactSum::kNarrowLimbs> l{};
        ASSERT_TRUE(p.to_narrow_limbs(l.data()));
        EXPECT_GE(l[0], 0);
        EXPECT_LT(l[0], std::int64_t{1} << 43);
        EXPECT_TRUE(ExactSum::from_narrow_limbs(l[0], l[1]) == p);
        limbs[0] += l[0];
        limbs[1] += l[1];
        total.add(p);
    }
    EXPECT_TRUE(ExactSum::from_narrow_limbs(limbs[0], limbs[1]) == total);
    // The range's edges: just inside on both sides, then just outside.
    std::array<std::int64_t, ExactSum::kNarrowLimbs> l{};
    ExactSum inside, outside, negative_inside, negative_outside;
    for (int i = 0; i < 2048; ++i) {  // 2048 terms of 2^27: a total of 2^38
        inside.add(ExactSum::kMaxNarrowValue / 2048 - 0x1p-25);
        negative_inside.add(-ExactSum::kMaxNarrowValue / 2048);
        outside.add(ExactSum::kMaxNarrowValue / 2048);
        negative_outside.add(-ExactSum::kMaxNarrowValue / 2048 - 0x1p-25);
    }
    EXPECT_TRUE(inside.to_narrow_limbs(l.data()));
    EXPECT_TRUE(ExactSum::from_narrow_limbs(l[0], l[1]) == inside);
    EXPECT_TRUE(negative_inside.to_narrow_limbs(l.data()));
    EXPECT_TRUE(ExactSum::from_narrow_limbs(l[0], l[1]) == negative_inside);
    EXPECT_FALSE(outside.to_narrow_limbs(l.data()));
    EXPECT_FALSE(negative_outside.to_narrow_limbs(l.data()));
    ExactSum bad = ExactSum::of(1.0);
    bad.add(std::nan(""));
    EXPECT_FALSE(bad.to_narrow_limbs(l.data()));
}

TEST(ExactSum, ValueRoundsTotalsOnBothSidesOfTheInt64Range) {
    // value() converts a total that fits an int64 in one instruction and a larger one through
    // 128 bits: both must round to nearest. Totals (in units of 2^-48) near ±2^63, where an
    // int64 ends; long double holds them exactly.
    for (const std::int64_t l1 : {std::int64_t{1} << 20, -(std::int64_t{1} << 20)}) {
        for (std::int64_t l0 = -3; l0 <= 3; ++l0) {
            for (const std::int64_t extra :
                 {std::int64_t{0}, std::int64_t{1} << 11, std::int64_t{-1}}) {
                // v = l1 * 2^43 + l0 + extra: at and around ±2^63.
                const ExactSum s = ExactSum::from_narrow_limbs(l0 + extra, l1);
                const long double v =
                    static_cast<long double>(l1) * 0x1p43L + static_cast<long double>(l0 + extra);
                EXPECT_EQ(s.value(), static_cast<double>(v * 0x1p-48L)) << l1 << " " << l0;
            }
        }
    }
}

// ExactSum::add and ExactAccumulator::add over the same terms in order: {the sum, the
// accumulator's sum()}.
std::pair<ExactSum, ExactSum> both_sums(const std::vector<double>& t) {
    ExactSum ref;
    ExactAccumulator acc;
    for (double x : t) {
        ref.add(x);
        acc.add(x);
    }
    return {ref, acc.sum()};
}

TEST(ExactAccumulator, IsBitwiseTheExactSumOfTheSameTerms) {
    // Small terms of one sign overflow the 64-bit part many times (2^15 * 2^48 = 2^63 at most
    // each); mixed with large, tiny and invalid terms.
    std::vector<double> t = random_terms(5000, 7);
    for (int i = 0; i < 3000; ++i) t.push_back(32767.99);
    for (int i = 0; i < 1000; ++i) t.push_back(-32767.5);
    t.push_back(-0x1p-49);
    Rng rng(8);
    std::shuffle(t.begin(), t.end(), rng);
    const auto [ref, sum] = both_sums(t);
    EXPECT_TRUE(sum == ref);
    EXPECT_EQ(sum.value(), ref.value());
    EXPECT_TRUE(ExactAccumulator{}.sum() == ExactSum{});
    t.push_back(std::nan(""));
    EXPECT_FALSE(both_sums(t).second.valid());
}

TEST(ExactAccumulator, MediumTermsAreBitwiseTheExactSumOfTheSameTerms) {
    // Terms in [2^15, 2^47) (ExactSum's integer part and fraction converted apart): of one sign
    // near 2^47, their integer parts (x * 2^16, near 2^63) overflow a 64-bit sum every other term;
    // mixed with fractions of both signs, small terms and the cases' edges.
    Rng rng(9);
    for (const double sign_mix : {0.0, 0.5}) {
        std::vector<double> t;
        for (int i = 0; i < 4000; ++i) {
            const double sign = rng.uniform() < sign_mix ? -1 : 1;
            const double e = 15 + 32 * rng.uniform();  // 2^15 .. 2^47
            t.push_back(sign * std::min(std::exp2(e), 0x1p47 * (1 - 0x1p-52)));
        }
        for (int i = 0; i < 500; ++i) t.push_back(0x1p47 - 0.25);
        for (int i = 0; i < 200; ++i) t.push_back(-32768.0 - 0x1p-37);
        t.push_back(32768.0);
        t.push_back(-0x1p47);  // not below 2^47: ExactSum's invalid case
        for (double x : random_terms(1000, 10)) t.push_back(x);
        std::shuffle(t.begin(), t.end(), rng);
        const auto [ref, sum] = both_sums(t);
        EXPECT_TRUE(sum == ref) << sign_mix;
        // And without the invalid term: a valid sum, its value too.
        std::erase_if(t, [](double x) { return std::fabs(x) >= 0x1p47; });
        const auto [valid_ref, valid_sum] = both_sums(t);
        ASSERT_TRUE(valid_ref.valid());
        EXPECT_TRUE(valid_sum == valid_ref) << sign_mix;
        EXPECT_EQ(valid_sum.value(), valid_ref.value());
    }
}

}  // namespace
}  // namespace rotor::core
