// Hand-written field parsing for the text formats: fast (no iostreams, no locale) and precise
// about where a field went wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rotor::core {

/// Outcome of parse_uint().
enum class ParseStatus {
    kOk,
    kMissing,   ///< no field before the end of the line
    kNegative,  ///< the field starts with '-'
    kNotANumber,
    kOverflow,  ///< more than 2^64 - 1
};

/// True for the field separators of the text formats: space and tab.
inline bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

/// Skips blanks from `pos`; returns the new position.
inline std::size_t skip_blanks(std::string_view s, std::size_t pos) noexcept {
    while (pos < s.size() && is_blank(s[pos])) ++pos;
    return pos;
}

/// Parses an unsigned decimal integer starting at s[pos] (after skipping blanks). On kOk sets
/// `value` and moves `pos` past the digits; a field must end at a blank or at the end of the
/// line, else kNotANumber. On failure `pos` is the column (0-based) of the offending field.
inline ParseStatus parse_uint(std::string_view s, std::size_t& pos, std::uint64_t& value) noexcept {
    pos = skip_blanks(s, pos);
    if (pos >= s.size()) return ParseStatus::kMissing;
    if (s[pos] == '-') return ParseStatus::kNegative;
    std::size_t i = pos;
    std::uint64_t v = 0;
    constexpr std::uint64_t kTenth = UINT64_MAX / 10;  // v * 10 + d fits iff v < kTenth, or
    constexpr unsigned kLast = UINT64_MAX % 10;        // v == kTenth and d <= kLast
    while (i < s.size()) {
        const unsigned d = static_cast<unsigned char>(s[i]) - static_cast<unsigned>('0');
        if (d > 9) break;
        if (v >= kTenth && (v > kTenth || d > kLast)) return ParseStatus::kOverflow;
        v = v * 10 + d;
        ++i;
    }
    if (i == pos || (i < s.size() && !is_blank(s[i]))) return ParseStatus::kNotANumber;
    value = v;
    pos = i;
    return ParseStatus::kOk;
}

}  // namespace rotor::core
