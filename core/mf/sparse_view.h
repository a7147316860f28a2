// Read-only views of ratings that the MF kernels take, so that they depend on no container: the
// ratings data layer (or a test) owns the arrays and hands out spans.
#pragma once

#include <cstdint>
#include <span>

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

/// The ratings of one SGD block (one row group x one column group) as parallel arrays: rating t
/// is (rows[t], cols[t], values[t]), rows[t] a row of the W the kernel is given and cols[t] a row
/// of its H. Non-owning.
struct BlockView {
    std::span<const std::uint32_t> rows;
    std::span<const std::uint32_t> cols;
    std::span<const float> values;

    std::uint64_t size() const { return values.size(); }
};

}  // namespace rotor::mf
