// Number fields of the text readers (LIBSVM, CSV/TSV, model files): strict, locale-free
// parsing of one field.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <system_error>

namespace rotor::core {

/// Clinger's fast path: when `s` is a plain decimal, an optional '-', 1 to 15 digits with at
/// most one '.' between two of them, sets `out` and returns true. The digits make an integer
/// n < 10^15 < 2^53 and the point a power 10^k with k <= 15 < 22, both exact doubles, so n / 10^k
/// is ONE correctly rounded operation: the double nearest the decimal, what from_chars gives
/// (bit for bit, -0 included). Anything else (exponents, more digits, "1.", ".5") returns false.
inline bool parse_plain_decimal(std::string_view s, double& out) noexcept {
    static constexpr double kTens[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    std::size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
    const bool negative = i == 1;
    std::uint64_t n = 0;
    int digits = 0;
    int fraction = -1;  // digits after the point; -1: no point
    for (; i < s.size(); ++i) {
        const char c = s[i];
        if (c >= '0' && c <= '9') {
            if (++digits > 15) return false;
            n = n * 10 + static_cast<std::uint64_t>(c - '0');
            if (fraction >= 0) ++fraction;
        } else if (c == '.' && fraction < 0 && digits > 0) {
            fraction = 0;
        } else {
            return false;
        }
    }
    if (digits == 0 || fraction == 0) return false;
    double v = static_cast<double>(n);
    if (fraction > 0) v /= kTens[fraction];
    out = negative ? -v : v;
    return true;
}

/// The finite double spelt by all of `s` (strtod syntax without hex, an optional leading '+'),
/// or nothing: not a number, out of range or not finite.
inline std::optional<double> parse_number(std::string_view s) {
    if (s.size() > 1 && s.front() == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
    double v = 0;
    if (parse_plain_decimal(s, v)) return v;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

}  // namespace rotor::core
