// The binary form of a ratings matrix, for inputs too big to parse as text on every run
// (docs/formats.md, "Binary ratings"): a 64-byte header (magic "ROTORRAT", version, N, M, nnz,
// payload size, CRC-32 of the payload), then the CSR arrays and the two id maps, every section
// 8-byte aligned, little-endian. The item counts are rebuilt on reading.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "core/io/read_limits.h"
#include "core/mf/ratings.h"

namespace rotor::mf {

/// Writes `ratings` and its id maps to `path` atomically (a complete file or none). Each map
/// holds N (resp. M) ids, or none (then nothing is stored for it and it reads back empty).
/// Throws SystemError on an I/O failure.
void write_ratings_binary(const std::string& path, const Ratings& ratings, const IdMap& users,
                          const IdMap& items);

/// Reads a file written by write_ratings_binary() (memory-mapped, then copied into the arrays
/// the result owns). Checks the magic, version, flags, the sizes against the file's, the CRC-32
/// of the payload, the CSR structure (offsets, item ids < M, items increasing within a user,
/// finite values) and the maps (N or 0 ids, M or 0, non-empty and distinct); any mismatch throws
/// InputError naming the file. The result's first_new_user/item are 0. `limits.max_bytes`
/// bounds the ratings' memory (ReadRatingsOptions::kBytesPerRating a rating, 8 bytes a user and
/// an item id), checked from the header before any array is built (ReadLimits::refuse_bytes).
RatingsFile read_ratings_binary(const std::string& path, const core::ReadLimits& limits = {});

/// The same over bytes in memory, named `name` in errors (tests, fuzzing). Any alignment.
RatingsFile parse_ratings_binary(std::span<const std::byte> bytes, const std::string& name,
                                 const core::ReadLimits& limits = {});

/// True if `prefix` starts with the binary ratings magic (to tell the two forms apart).
bool has_ratings_binary_magic(std::span<const std::byte> prefix) noexcept;

}  // namespace rotor::mf
