// CRC-32 (zlib's polynomial, as in gzip and PNG) of bytes in memory, for the checksums rotor's
// binary files carry and check on load. Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <string_view>

namespace rotor::core {

/// The CRC-32 of `bytes`, continuing from `crc` (0 starts a new checksum): crc32(a + b) ==
/// crc32(b, crc32(a)). Any length (zlib's 32-bit length limit is handled in pieces).
std::uint32_t crc32(std::string_view bytes, std::uint32_t crc = 0);

}  // namespace rotor::core
