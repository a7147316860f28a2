// Internal to the distributed trainer's sources (distributed_trainer.cpp,
// distributed_documents.cpp): message helpers and the seed stream both use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "core/base/error.h"

namespace rotor::lda::detail {

/// Seed stream of the doc groups inside rank p ("DROW"), at construction and after documents
/// move.
inline constexpr std::uint64_t kRowStream = 0x44524f57;

inline std::vector<std::byte> to_bytes(std::span<const std::uint32_t> words) {
    std::vector<std::byte> out(words.size_bytes());
    if (!words.empty()) std::memcpy(out.data(), words.data(), out.size());
    return out;
}

/// Copies bytes into `out` as uint32 (memcpy: no aliasing of the byte buffer).
inline void from_bytes(std::span<const std::byte> bytes, std::vector<std::uint32_t>& out, int rank,
                       const char* what) {
    if (bytes.size() % sizeof(std::uint32_t) != 0)
        throw CommError(
            rank, fmt::format("{}: {} bytes is not a whole number of words", what, bytes.size()));
    out.resize(bytes.size() / sizeof(std::uint32_t));
    if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
}

}  // namespace rotor::lda::detail
