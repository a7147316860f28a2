// Test helpers for rotor's binary data files (core/io/binary_sections.h): patch a file's bytes
// with its CRC-32 recomputed, and expect a reader to refuse bytes with an InputError naming the
// file.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "core/base/error.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::testing {

/// Recomputes the header's CRC-32 (bytes 48..52, over everything after the 64-byte header)
/// after a test changed the payload.
inline void fix_crc(std::string& bytes) {
    constexpr std::size_t kHeader = 64, kCrcAt = 48;
    const auto crc =
        static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(bytes.data() + kHeader),
                                         static_cast<uInt>(bytes.size() - kHeader)));
    std::memcpy(bytes.data() + kCrcAt, &crc, 4);
}

/// `good` with n bytes at `at` replaced by v's, the CRC fixed: what the structural checks behind
/// the CRC must catch.
inline std::string patched(const std::string& good, std::size_t at, const void* v, std::size_t n) {
    std::string b = good;
    std::memcpy(b.data() + at, v, n);
    fix_crc(b);
    return b;
}

/// read(path) on a file of `bytes` throws InputError naming the file, its message containing
/// `what`.
template <class Read>
void expect_corrupt(const Read& read, const std::string& bytes, const std::string& what) {
    TempDir dir;
    const std::string path = dir.write("bad.bin", bytes);
    try {
        read(path);
        ADD_FAILURE() << "no error for " << what;
    } catch (const InputError& e) {
        EXPECT_EQ(e.path(), path);
        EXPECT_NE(std::string(e.what()).find(path + ": "), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
}

/// The checks every binary file gets from core::read_header and core::check_payload, on a good
/// file's bytes `good` of format `kind` ("binary ratings"): size, magic, version, the payload's
/// size (truncated, appended to) and its CRC-32 (a flipped bit anywhere after the header). Also
/// the flags (`bad_flags`, a flags byte the format rejects) and N at 16 below 2^32.
template <class Read>
void expect_header_and_crc_checks(const Read& read, const std::string& good,
                                  const std::string& kind, char bad_flags) {
    const auto corrupt = [&](const std::string& bytes, const std::string& what) {
        expect_corrupt(read, bytes, what);
    };
    corrupt(good.substr(0, 40), "the header alone is 64");
    const auto with = [&](std::size_t at, char v) {
        std::string b = good;
        b[at] = v;
        return b;
    };
    corrupt(with(0, 'X'), "bad magic");
    corrupt(with(8, 2), "unsupported " + kind + " version 2");
    corrupt(with(12, bad_flags), "unknown flags");
    corrupt(with(16 + 4, 1), "does not fit in 32 bits");  // N >= 2^32
    corrupt(good.substr(0, good.size() - 8), "truncated or appended to");
    corrupt(good + std::string(8, '\0'), "truncated or appended to");
    for (const std::size_t at : {std::size_t{64}, std::size_t{64 + 40}, good.size() - 1})
        corrupt(with(at, static_cast<char>(good[at] ^ 0x10)), "CRC-32 mismatch");
}

}  // namespace rotor::testing
