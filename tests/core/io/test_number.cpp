// The number fields of the text readers (core/io/number.h): the plain-decimal fast path gives
// bit for bit what std::from_chars gives, on hand-picked edge cases and on random decimals around
// its limits (15 digits, the point anywhere, signs), and declines what it does not cover.
#include "core/io/number.h"

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/rng.h"

namespace rotor::core {
namespace {

/// from_chars on all of `s`, as parse_number's contract says (finite, whole field).
std::optional<double> reference(std::string_view s) {
    if (s.size() > 1 && s.front() == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

void expect_same(const std::string& s) {
    const std::optional<double> got = parse_number(s);
    const std::optional<double> want = reference(s);
    ASSERT_EQ(got.has_value(), want.has_value()) << '"' << s << '"';
    if (got) {
        EXPECT_EQ(std::bit_cast<std::uint64_t>(*got), std::bit_cast<std::uint64_t>(*want))
            << '"' << s << '"';
    }
}

TEST(ParseNumber, EdgeCasesAgreeWithFromChars) {
    for (const char* s : {"0",
                          "-0",
                          "-0.0",
                          "0.0",
                          "1",
                          "-1",
                          "+1",
                          "1.69315",
                          "0.1",
                          "0.3",
                          "2.09861",
                          "123456789012345",
                          "1234567890123456",
                          "12345678901234.5",
                          "0.000000000000001",
                          "9.99999999999999",
                          "999999999999999",
                          "-999999999999999",
                          "1.",
                          ".5",
                          "-.5",
                          "1.2.3",
                          "1e5",
                          "1E-3",
                          "",
                          "-",
                          "+",
                          "--1",
                          "+-1",
                          "1-",
                          " 1",
                          "1 ",
                          "0x10",
                          "inf",
                          "nan",
                          "1.7976931348623157e308",
                          "1e400",
                          "00000000000000000001",
                          "007",
                          "0.5000000000000"}) {
        expect_same(s);
    }
    double v = 0;
    EXPECT_TRUE(parse_plain_decimal("1.69315", v));
    EXPECT_TRUE(parse_plain_decimal("-0", v));
    EXPECT_TRUE(std::signbit(v));
    EXPECT_FALSE(parse_plain_decimal("1e5", v));
    EXPECT_FALSE(parse_plain_decimal("1234567890123456", v));
}

TEST(ParseNumber, RandomDecimalsAgreeWithFromChars) {
    Rng rng(11);
    for (int trial = 0; trial < 200000; ++trial) {
        std::string s;
        if (rng.below(4) == 0) s += '-';
        const auto digits = 1 + rng.below(17);
        const auto point = rng.below(digits + 2);  // digits + 1: no point
        for (std::uint64_t d = 0; d < digits; ++d) {
            if (d == point && d > 0) s += '.';
            s += static_cast<char>('0' + rng.below(10));
        }
        expect_same(s);
    }
}

}  // namespace
}  // namespace rotor::core
