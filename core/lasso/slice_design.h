// The design of one slice of the samples (a rank's rows) standardised with the statistics of
// every slice together, so that ranks holding different rows agree on m_j, s_j, ȳ, σ_y, c_j and
// d_j bit for bit (docs/lasso.md, "Training on ranks x threads").
//
// build_design() sums its moments in plain doubles over all the rows it holds; a slice cannot,
// since its sums must be added to the other slices'. Here every moment is an core::ExactSum (order
// independent, core/base/exact_sum.h) that the caller's `Reducer` adds over the slices (an int64
// allreduce of the limbs across ranks; nothing for one slice), and every term is a function of
// one sample, so any cut of the same samples into slices gives bitwise the same statistics.
// Three reductions: (1) Σx_j, stored counts, N, Σy and the columns' extremes; (2) Σ(x_ij − m_j)²
// and Σ(y − ȳ)²; (3) Σ(x̃_ij − c_j)² and Σỹ_i. The zeros of a sparse column add
// (N − nnz_j)·m_j² once, after the reduction, so their count never enters a rounded term.
//
// The result differs from build_design() in the last bits only (tests/core/lasso compare them).
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "core/lasso/cd.h"
#include "core/lasso/design.h"

namespace rotor::lasso {

/// Reductions over every slice, run collectively (every slice calls them in the same order with
/// the same sizes). For one slice both are no-ops.
struct Reducer {
    /// Replaces each sum by the total of every slice's (exactly).
    std::function<void(std::span<core::ExactSum>)> sum;
    /// Replaces each value by its maximum over the slices.
    std::function<void(std::span<double>)> max;

    /// The reducer of a single slice.
    static Reducer single();
};

/// One slice's rows (part-local row ids 0..rows-1) with the statistics of all the samples.
/// A value type; `rows.samples()` is the slice's row count, and `rows`' shifts, squared norms
/// and standardisation are the global ones; problem() gives the kernels the global N and Σỹ.
struct SliceDesign {
    Design rows;
    std::uint32_t total_samples = 0;  ///< N over every slice
    double total_target_sum = 0;      ///< Σỹ over every slice (exact)

    ProblemView problem() const {
        return {total_samples, rows.shifts(), rows.sq_norms(), total_target_sum,
                rows.standardization().y_scale};
    }
};

/// Standardises the slice `raw` (its own samples; raw.features the same on every slice) with
/// the statistics of every slice (see the file comment). Collective over `reduce`. Throws
/// InputError (path "design") when no slice has samples or a value is not finite.
SliceDesign build_slice_design(const RawData& raw, const StandardizeOptions& options,
                               const Reducer& reduce);

/// The samples [begin, end) of `raw` as a RawData of their own (same features and names).
RawData slice_rows(const RawData& raw, std::uint32_t begin, std::uint32_t end);

}  // namespace rotor::lasso
