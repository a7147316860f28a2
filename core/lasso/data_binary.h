// The binary form of regression data (docs/formats.md, "Binary Lasso data"), for inputs too big
// to parse as text on every run: a 64-byte header (magic "ROTORLSO", version, flags: dense,
// samples N, features p, stored entries, payload size, CRC-32 of the payload), then the CSR
// arrays of RawData (N + 1 row offsets, the column indices, the values), the targets and the
// feature names, every section 8-byte aligned, native little-endian. Read with one mmap and a
// copy into RawData, every invariant a text reader guarantees checked again; a rank of a
// distributed run copies only its own samples (MappedData). Written by `rotor lasso build`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "core/io/binary_sections.h"
#include "core/io/mapped_file.h"
#include "core/io/read_limits.h"
#include "core/lasso/design.h"

namespace rotor::lasso {

/// Writes `data` to `path` atomically (a temporary renamed into place). SystemError on I/O
/// failure.
void write_data_binary(const std::string& path, const RawData& data);

/// A file of write_data_binary() mapped, with its header, CRC-32, sections and row offsets
/// checked and its arrays left in the mapping: a rank of a distributed run copies only its own
/// samples (rows()), so no process holds the whole data. Movable, not copyable.
class MappedData {
  public:
    /// Maps `path`. InputError naming the file as read_data_binary() does; of the rows, only the
    /// offsets are checked here ("sample <i>: row offsets ...", a dense row's width), the rest by
    /// rows().
    explicit MappedData(const std::string& path);
    /// The same over bytes in memory, named `name` in errors (tests): 8-byte aligned, and they
    /// must outlive this object.
    MappedData(std::span<const std::byte> bytes, std::string name);

    std::uint32_t samples() const noexcept { return static_cast<std::uint32_t>(targets_.size()); }
    std::uint32_t features() const noexcept { return features_; }
    std::uint64_t entries() const noexcept { return values_.size(); }
    bool dense() const noexcept { return dense_; }
    /// The arrays of RawData, in the mapping (row_offsets checked; the others checked by rows()).
    std::span<const std::uint64_t> row_offsets() const noexcept { return offsets_; }
    std::span<const std::uint32_t> cols() const noexcept { return cols_; }
    std::span<const double> values() const noexcept { return values_; }
    std::span<const double> targets() const noexcept { return targets_; }

    /// Samples [begin, end) as a RawData of their own (offsets from 0, every feature name), each
    /// row checked for what the text readers guarantee: columns below p and strictly increasing,
    /// finite values and target. Errors name the sample by its 1-based number in the file.
    /// limits.max_bytes bounds the copy's RawData::reading_bytes(), refused before copying.
    RawData rows(std::uint32_t begin, std::uint32_t end, const core::ReadLimits& limits = {}) const;
    /// Drops every page of a mapped file from the resident set, after a pass over the whole of
    /// it (a fingerprint): the arrays stay readable, faulted in again from the file.
    void release_all() const noexcept;

  private:
    void map(std::span<const std::byte> bytes);
    /// Drops `range` of a mapped file from the resident set (MappedFile::release).
    void release(std::span<const std::byte> range) const noexcept;

    std::optional<core::MappedFile> file_;
    std::string name_;
    std::uint32_t features_ = 0;
    bool dense_ = false;
    std::span<const std::uint64_t> offsets_;
    std::span<const std::uint32_t> cols_;
    std::span<const double> values_;
    std::span<const double> targets_;
    core::StringsSection names_;
};

/// Reads a file of write_data_binary(). InputError naming the file when it is not one, is
/// truncated or corrupt (CRC-32), or breaks an invariant: "<path>: sample <i>: <what>" (i
/// 1-based) for a row's offsets, columns (< p, strictly increasing), values and target
/// (finite), and a dense row's width. limits.max_bytes bounds RawData::reading_bytes() of the
/// data, refused before anything is copied. MappedData(path).rows(0, N, limits).
RawData read_data_binary(const std::string& path, const core::ReadLimits& limits = {});

/// The same over bytes in memory, named `name` in errors (tests). Must be 8-byte aligned.
RawData parse_data_binary(std::span<const std::byte> bytes, const std::string& name,
                          const core::ReadLimits& limits = {});

/// True if `prefix` starts with the magic "ROTORLSO".
bool has_data_binary_magic(std::span<const std::byte> prefix) noexcept;

}  // namespace rotor::lasso
