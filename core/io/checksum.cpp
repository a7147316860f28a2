#include "core/io/checksum.h"

#include <zlib.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/base/error.h"

namespace rotor::core {

std::uint32_t crc32(std::string_view bytes, std::uint32_t crc) {
    uLong c = crc;
    while (!bytes.empty()) {
        const std::size_t n = std::min<std::size_t>(bytes.size(), 1U << 30);
        c = ::crc32(c, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n));
        bytes.remove_prefix(n);
    }
    return static_cast<std::uint32_t>(c);
}

std::string crc32_line(std::string_view body, char sep) {
    return fmt::format("crc32{}{:08x}\n", sep, crc32(body));
}

std::string_view checked_body(std::string_view text, const std::string& path, char sep) {
    const auto line_of = [&](std::size_t pos) {
        return 1 + static_cast<std::uint64_t>(std::count(text.begin(), text.begin() + pos, '\n'));
    };
    if (text.empty()) throw InputError(path, "empty file (it ends with a crc32 line)");
    if (text.back() != '\n')
        throw InputError(path, line_of(text.size()), 1,
                         "the last line has no newline: the file was truncated or appended to");
    const std::size_t prev = text.rfind('\n', text.size() - 2);
    const std::size_t start = prev == std::string_view::npos ? 0 : prev + 1;
    const std::string_view last = text.substr(start);
    const std::string key = fmt::format("crc32{}", sep);
    if (!last.starts_with(key) || last.size() != key.size() + 9)
        throw InputError(path, line_of(start), 1,
                         "the last line is not the crc32 line: the file was truncated or "
                         "appended to");
    const std::string_view body = text.substr(0, start);
    if (last != crc32_line(body, sep))
        throw InputError(path, line_of(start), key.size() + 1,
                         "CRC-32 mismatch: the file is corrupt");
    return body;
}

}  // namespace rotor::core
