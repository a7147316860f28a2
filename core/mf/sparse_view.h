// Read-only views of ratings that the MF kernels take, so that they depend on no container: the
// ratings data layer (or a test) owns the arrays and hands out spans.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/base/error.h"

namespace rotor::mf {

/// A sparse matrix in compressed form: CSR when the outer index is a row (a user), CSC when it
/// is a column (an item). Outer index o's entries are [offsets[o], offsets[o + 1]) of `ids` (the
/// inner indices) and `values` (the ratings a_ij). offsets has outer_size() + 1 entries,
/// offsets[0] == 0, non-decreasing, offsets.back() == ids.size() == values.size().
///
/// The MF kernels take a PART of the ratings as a CSR view: some rows, numbered 0..rows-1 in the
/// part (the part's rows of W are indexed the same way), their ids the global column ids (rows
/// of H). Non-owning; the arrays must outlive the view.
struct SparseView {
    std::span<const std::uint64_t> offsets;
    std::span<const std::uint32_t> ids;
    std::span<const float> values;

    /// Rows of a CSR view (columns of a CSC view).
    std::uint32_t outer_size() const {
        return offsets.empty() ? 0 : static_cast<std::uint32_t>(offsets.size() - 1);
    }
    /// Number of ratings.
    std::uint64_t nnz() const { return values.size(); }
    /// Ratings of outer index o: |Ω_o|.
    std::uint64_t count(std::uint32_t o) const { return offsets[o + 1] - offsets[o]; }
    /// Checks the sizes (not the ids: the data layer validates them when it reads the input).
    /// A mismatch is a caller bug.
    void check_shape() const {
        ROTOR_ASSERT(!offsets.empty() && offsets.front() == 0, "a view needs offsets[0] == 0");
        ROTOR_ASSERT(offsets.back() == ids.size() && ids.size() == values.size(),
                     "offsets.back(), ids and values disagree");
    }
};

/// One rating of an SGD block in 8 bytes (LIBMF's nodes take 12): `key` packs the rating's W row
/// and H row as offsets from its view's bases, (row − row_base) << col_bits | (col − col_base).
struct BlockEntry {
    std::uint32_t key;
    float value;
};

/// The least number of bits that hold the offsets 0..count − 1 (0 for count <= 1).
inline std::uint32_t offset_bits(std::uint64_t count) {
    std::uint32_t b = 0;
    while (b < 64 && (std::uint64_t{1} << b) < count) ++b;
    return b;
}

/// The ratings of one SGD block (one row group x one column group), or of a part of one: rating t
/// is (row(t), col(t), entries[t].value), row(t) a row of the W the kernel is given and col(t) a
/// row of its H. A block's rows fit in 32 − col_bits bits above row_base (the trainer splits a
/// block whose rows do not into views of that many rows each). Non-owning.
struct BlockView {
    std::span<const BlockEntry> entries;
    std::uint32_t row_base = 0;
    std::uint32_t col_base = 0;
    std::uint32_t col_bits = 0;  ///< <= 32

    std::uint64_t size() const { return entries.size(); }
    std::uint32_t row(std::uint64_t t) const {
        return row_base + static_cast<std::uint32_t>(std::uint64_t{entries[t].key} >> col_bits);
    }
    std::uint32_t col(std::uint64_t t) const {
        return col_base + static_cast<std::uint32_t>(entries[t].key & col_mask());
    }
    std::uint32_t col_mask() const {
        return static_cast<std::uint32_t>((std::uint64_t{1} << col_bits) - 1);
    }
    /// Ratings [lo, lo + n).
    BlockView part(std::uint64_t lo, std::uint64_t n) const {
        return BlockView{entries.subspan(lo, n), row_base, col_base, col_bits};
    }
    /// The entry of (row, col); row − row_base < 2^(32 − col_bits), col − col_base < 2^col_bits.
    static BlockEntry entry(std::uint32_t row_offset, std::uint32_t col_offset,
                            std::uint32_t col_bits, float value) {
        return BlockEntry{
            static_cast<std::uint32_t>((std::uint64_t{row_offset} << col_bits) | col_offset),
            value};
    }
};

/// A block packed from parallel arrays of rows, columns and values (tests and benchmarks; the
/// trainer packs its blocks in place). The rows' and the columns' spans (largest − smallest + 1)
/// must fit in 32 bits together: asserted.
struct PackedBlock {
    std::vector<BlockEntry> entries;
    std::uint32_t row_base = 0, col_base = 0, col_bits = 0;

    PackedBlock(std::span<const std::uint32_t> rows, std::span<const std::uint32_t> cols,
                std::span<const float> values) {
        ROTOR_ASSERT(rows.size() == values.size() && cols.size() == values.size(),
                     "PackedBlock: arrays of different sizes");
        if (values.empty()) return;
        const auto [rlo, rhi] = std::minmax_element(rows.begin(), rows.end());
        const auto [clo, chi] = std::minmax_element(cols.begin(), cols.end());
        row_base = *rlo;
        col_base = *clo;
        col_bits = offset_bits(std::uint64_t{*chi} - *clo + 1);
        ROTOR_ASSERT(offset_bits(std::uint64_t{*rhi} - *rlo + 1) + col_bits <= 32,
                     "PackedBlock: rows and columns do not fit in 32 bits");
        entries.reserve(values.size());
        for (std::size_t t = 0; t < values.size(); ++t)
            entries.push_back(
                BlockView::entry(rows[t] - row_base, cols[t] - col_base, col_bits, values[t]));
    }
    BlockView view() const { return BlockView{entries, row_base, col_base, col_bits}; }
};

}  // namespace rotor::mf
