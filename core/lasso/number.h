// Number fields of the Lasso's text readers: strict, locale-free parsing of one field.
#pragma once

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <system_error>

namespace rotor::lasso::detail {

/// The finite double spelt by all of `s` (strtod syntax without hex, an optional leading '+'),
/// or nothing: not a number, out of range or not finite.
inline std::optional<double> parse_number(std::string_view s) {
    if (s.size() > 1 && s.front() == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

}  // namespace rotor::lasso::detail
