#include "comm/wire.h"

#include <fmt/format.h>

#include "core/base/error.h"

namespace rotor::comm {

std::string WireReader::get_string() {
    const std::size_t n = get_length(1);
    const std::byte* at = consume(n);
    return std::string(reinterpret_cast<const char*>(at), n);
}

std::size_t WireReader::get_length(std::size_t element_bytes) {
    const std::size_t at = pos_;
    const auto n = get<std::uint64_t>();
    // n elements of element_bytes must fit in what is left (no overflow: divide instead).
    if (n > remaining() / element_bytes) fail_length(n, element_bytes, at);
    return static_cast<std::size_t>(n);
}

void WireReader::fail_length(std::uint64_t n, std::size_t element_bytes, std::size_t at) const {
    throw CommError(
        rank_, fmt::format("{}: truncated or corrupt length: {} elements of {} bytes at offset {} "
                           "exceed the {} bytes left",
                           message_, n, element_bytes, at, remaining()));
}

std::uint64_t WireReader::get_varint() {
    const std::size_t start = pos_;
    std::uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        const auto b = std::to_integer<std::uint8_t>(*consume(1));
        // The tenth byte holds bit 63 only.
        if (shift == 63 && b > 1) fail_at(start, "a varint past 2^64");
        v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
        if ((b & 0x80) == 0) return v;
    }
}

void WireReader::expect_u32(std::uint32_t expected, std::string_view what) {
    const auto got = get<std::uint32_t>();
    if (got != expected)
        throw CommError(rank_, fmt::format("{}: bad {}: {:#x} (expected {:#x})", message_, what,
                                           got, expected));
}

void WireReader::finish() const {
    if (pos_ != bytes_.size())
        throw CommError(rank_, fmt::format("{}: {} trailing bytes after offset {}", message_,
                                           bytes_.size() - pos_, pos_));
}

void WireReader::fail(std::string_view what) const {
    throw CommError(rank_, fmt::format("{}: {}", message_, what));
}

void WireReader::truncated(std::size_t n) const {
    throw CommError(rank_, fmt::format("{}: truncated: needs {} bytes at offset {} of {}", message_,
                                       n, pos_, bytes_.size()));
}

void WireReader::fail_at(std::size_t offset, std::string_view what) const {
    throw CommError(rank_, fmt::format("{}: {} at offset {}", message_, what, offset));
}

}  // namespace rotor::comm
