// The binary form of regression data (docs/formats.md, "Binary Lasso data"), for inputs too big
// to parse as text on every run: a 64-byte header (magic "ROTORLSO", version, flags: dense,
// samples N, features p, stored entries, payload size, CRC-32 of the payload), then the CSR
// arrays of RawData (N + 1 row offsets, the column indices, the values), the targets and the
// feature names, every section 8-byte aligned, native little-endian. Read with one mmap and a
// copy into RawData, every invariant a text reader guarantees checked again. Written by
// `rotor lasso build`.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "core/corpus/corpus.h"
#include "core/lasso/design.h"

namespace rotor::lasso {

/// Writes `data` to `path` atomically (a temporary renamed into place). SystemError on I/O
/// failure.
void write_data_binary(const std::string& path, const RawData& data);

/// Reads a file of write_data_binary(). InputError naming the file when it is not one, is
/// truncated or corrupt (CRC-32), or breaks an invariant: "<path>: sample <i>: <what>" (i
/// 1-based) for a row's offsets, columns (< p, strictly increasing), values and target
/// (finite), and a dense row's width. limits.max_bytes bounds RawData::reading_bytes() of the
/// data, refused from the header before anything is copied.
RawData read_data_binary(const std::string& path, const core::ReadLimits& limits = {});

/// The same over bytes in memory, named `name` in errors (tests). Must be 8-byte aligned.
RawData parse_data_binary(std::span<const std::byte> bytes, const std::string& name,
                          const core::ReadLimits& limits = {});

/// True if `prefix` starts with the magic "ROTORLSO".
bool has_data_binary_magic(std::span<const std::byte> prefix) noexcept;

}  // namespace rotor::lasso
