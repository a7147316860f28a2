// The design matrix of the Lasso: X (N samples x p features) with targets y, standardised as
// glmnet does (docs/lasso.md, "Standardisation"), held by column (CSC) for the coordinate
// update, and cut into parts of samples for the push/pull of STRADS (Lee et al., NIPS 2014).
//
// The model the kernels fit is on standardised data: z_ij = (x_ij − m_j) / s_j, so that each
// column of Z has mean 0 and Σ_i z_ij² = N (the paper's assumption), and ỹ = (y − ȳ) / σ_y
// (glmnet scales y as well; every sum the kernels push is then of order 1, which keeps the
// fixed-point exact sums precise whatever the units of y). Sparse input is stored WITHOUT
// centring, x̃_ij = x_ij / s_j on the nonzeros only, and the centring is carried by the shift
// c_j = m_j / s_j (z_j = x̃_j − c_j·1); dense input is stored centred (x̃ = z, c_j = 0).
// Without an intercept nothing is centred (m_j = ȳ = 0) and the scales are root mean squares.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/base/huge_pages.h"

namespace rotor::lasso {

/// A read-only CSC view: column j's entries are [offsets[j], offsets[j + 1]) of `rows` (sample
/// indices, increasing within a column) and `values`. Non-owning.
struct ColumnsView {
    std::span<const std::uint64_t> offsets;  ///< columns + 1 entries, offsets[0] == 0
    std::span<const std::uint32_t> rows;
    std::span<const double> values;

    std::uint32_t columns() const {
        return offsets.empty() ? 0 : static_cast<std::uint32_t>(offsets.size() - 1);
    }
    std::uint64_t nnz() const { return values.size(); }
    std::uint64_t count(std::uint32_t j) const { return offsets[j + 1] - offsets[j]; }
};

/// Samples as a reader returns them, before standardisation: CSR by sample, features 0-based and
/// increasing within a row. A value type.
struct RawData {
    std::uint32_t features = 0;                 ///< p: columns of X
    std::vector<std::uint64_t> row_offsets{0};  ///< samples + 1 entries
    std::vector<std::uint32_t> cols;            ///< feature of each stored entry
    std::vector<double> values;                 ///< x_ij of each stored entry
    std::vector<double> targets;                ///< y_i, one per sample
    /// True for dense input (CSV/TSV): every entry is stored and columns are centred in storage.
    bool dense = false;
    /// Feature names from a CSV header (p names), else empty.
    std::vector<std::string> feature_names;

    /// Reading memory per stored entry (column index and value) and per sample (row offset and
    /// target): what a reader's `--max-memory` check counts (reading_bytes()).
    static constexpr std::uint64_t kBytesPerEntry = 12;
    static constexpr std::uint64_t kBytesPerSample = 16;

    std::uint32_t samples() const { return static_cast<std::uint32_t>(targets.size()); }
    /// The memory the samples read so far take, by kBytesPerEntry and kBytesPerSample.
    std::uint64_t reading_bytes() const {
        return kBytesPerEntry * values.size() + kBytesPerSample * targets.size();
    }
    /// Appends one sample: entries (col, value) with increasing cols < features.
    void add_sample(double y, std::span<const std::uint32_t> c, std::span<const double> v);
};

/// How build_design() standardises.
struct StandardizeOptions {
    /// Fit an unpenalised intercept: centre X (in storage or through the shifts) and y.
    bool intercept = true;
    /// Scale each column to Σ_i z_ij² = N (glmnet's default). Off: s_j = 1 (still centred).
    bool standardize = true;
};

/// How raw features and targets map to the standardised problem; kept with a model so that it
/// predicts on raw features. A value type.
struct Standardization {
    bool intercept = true;
    double y_mean = 0;   ///< ȳ (0 without intercept)
    double y_scale = 1;  ///< σ_y: population sd of y (root mean square without intercept); 1 if 0
    std::vector<double> means;   ///< m_j per feature (0 without intercept)
    std::vector<double> scales;  ///< s_j per feature (> 0; 1 for a constant column)

    /// β_j on raw features from the standardised coefficient b_j: σ_y b_j / s_j.
    double raw_coefficient(std::uint32_t j, double b) const { return y_scale * b / scales[j]; }
    /// The raw-feature model's intercept ȳ − Σ_j m_j β_j for standardised coefficients b (p).
    double raw_intercept(std::span<const double> b) const;
};

/// The standardised design. Immutable after build_design(); const methods are thread-safe.
class Design {
  public:
    std::uint32_t samples() const { return samples_; }
    std::uint32_t features() const { return static_cast<std::uint32_t>(shifts_.size()); }
    /// x̃ by column (see the file comment).
    ColumnsView columns() const { return {offsets_, rows_, values_}; }
    /// ỹ, one per sample.
    std::span<const double> targets() const { return targets_; }
    /// Σ_i ỹ_i summed exactly (0 up to rounding with an intercept).
    double target_sum() const { return target_sum_; }
    /// c_j: z_j = x̃_j − c_j·1 (0 for dense or uncentred columns).
    std::span<const double> shifts() const { return shifts_; }
    /// d_j = ‖z_j‖² / N: 1 for a standardised column up to rounding, 0 for a constant column
    /// (whose coefficient stays 0).
    std::span<const double> sq_norms() const { return sq_norms_; }
    const Standardization& standardization() const { return standardization_; }
    bool dense() const { return dense_; }

  private:
    friend Design build_design(const RawData& raw, const StandardizeOptions& options);
    friend struct SliceBuilder;

    std::uint32_t samples_ = 0;
    bool dense_ = false;
    HugeVector<std::uint64_t> offsets_;  // read at random: on huge pages (core/base/huge_pages.h)
    HugeVector<std::uint32_t> rows_;
    HugeVector<double> values_;
    std::vector<double> targets_;
    double target_sum_ = 0;
    HugeVector<double> shifts_;  // read at random, as the columns
    HugeVector<double> sq_norms_;
    Standardization standardization_;
};

/// Standardises `raw` (see the file comment). Throws InputError (path "design") when there are
/// no samples, or a value is not finite.
Design build_design(const RawData& raw, const StandardizeOptions& options = {});

/// The kernels' view of one part: its samples' columns (rows 0..rows-1 local to the part), its
/// targets ỹ, and its residuals q = ỹ − X̃b (the true residual is r_i = q_i + o, o = Σ_j c_j b_j;
/// see cd.h). Non-owning; residuals are written by the kernels.
struct PartView {
    ColumnsView x;
    std::span<const double> targets;
    std::span<double> residuals;

    std::uint32_t rows() const { return static_cast<std::uint32_t>(targets.size()); }
};

/// The samples [row_begin, row_end) of a design, held by column with part-local row ids: the
/// data a worker (a thread or a rank) pushes over. Per-part CSC rather than CSR, because a push
/// for coordinate j and the residual update after its pull both walk column j over the part's
/// rows: O(nnz of the column in the part), contiguous; a CSR part would scan every entry of the
/// part to find a column's. Cost: p + 1 offsets (8 bytes) per part. A value type.
class DesignPart {
  public:
    DesignPart(const Design& design, std::uint32_t row_begin, std::uint32_t row_end);

    std::uint32_t row_begin() const { return row_begin_; }
    std::uint32_t rows() const { return static_cast<std::uint32_t>(targets_.size()); }
    ColumnsView columns() const { return {offsets_, rows_, values_}; }
    std::span<const double> targets() const { return targets_; }
    /// The kernels' view with `residuals` (rows() of them) as the part's residuals.
    PartView view(std::span<double> residuals) const {
        ROTOR_ASSERT(residuals.size() == targets_.size(), "one residual per row of the part");
        return {columns(), targets_, residuals};
    }

  private:
    std::uint32_t row_begin_ = 0;
    HugeVector<std::uint64_t> offsets_;  // read at random: on huge pages (core/base/huge_pages.h)
    HugeVector<std::uint32_t> rows_;
    HugeVector<double> values_;
    std::vector<double> targets_;
};

/// `parts` contiguous parts of nearly equal sample counts (the first N mod parts get one more).
std::vector<DesignPart> split_design(const Design& design, std::uint32_t parts);

}  // namespace rotor::lasso
