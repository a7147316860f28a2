// CRC-32 (zlib's polynomial, as in gzip and PNG) of bytes in memory, for the checksums rotor's
// binary files carry and check on load. Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rotor::core {

/// The CRC-32 of `bytes`, continuing from `crc` (0 starts a new checksum): crc32(a + b) ==
/// crc32(b, crc32(a)). Any length (zlib's 32-bit length limit is handled in pieces).
std::uint32_t crc32(std::string_view bytes, std::uint32_t crc = 0);

/// The last line of rotor's checksummed text files (a logistic-regression model, a MANIFEST):
/// `crc32<sep><8 lowercase hex digits>\n`, the CRC-32 of `body`, every byte before the line.
std::string crc32_line(std::string_view body, char sep);

/// Checks that `text` ends with the crc32_line() of the bytes before it and returns those bytes.
/// Throws InputError `path:line:col` otherwise: no final newline, a last line that is not a
/// crc32 line (the file was truncated or appended to), or a CRC-32 mismatch (corrupt).
std::string_view checked_body(std::string_view text, const std::string& path, char sep);

}  // namespace rotor::core
