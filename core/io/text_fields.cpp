#include "core/io/text_fields.h"

#include <fmt/format.h>

#include <string>

#include "core/io/number.h"
#include "core/io/parse.h"

namespace rotor::core {

std::string_view next_line(LineReader& r, std::string_view what) {
    std::string_view line;
    if (!r.next(line)) r.fail(1, fmt::format("missing {}", what));
    return line;
}

std::string_view named_field(LineReader& r, std::string_view name, bool value_required) {
    const std::string_view line = next_line(r, name);
    const std::size_t n = name.size();
    if (!line.starts_with(name) || (line.size() > n && line[n] != ' ') ||
        (value_required && line.size() <= n + 1))
        r.fail(1, fmt::format("expected \"{} <value>\"", name));
    return line.size() > n ? line.substr(n + 1) : std::string_view();
}

double finite_number_at(LineReader& r, std::string_view text, std::size_t col) {
    const auto v = parse_number(text);
    if (!v) r.fail(col, fmt::format("\"{}\" is not a finite number", text));
    return *v;
}

std::uint64_t unsigned_at(LineReader& r, std::string_view text, std::size_t col) {
    std::size_t pos = 0;
    std::uint64_t v = 0;
    if (parse_uint(text, pos, v) != ParseStatus::kOk || pos != text.size())
        r.fail(col, fmt::format("\"{}\" is not an unsigned integer", text));
    return v;
}

}  // namespace rotor::core
