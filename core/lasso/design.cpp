#include "core/lasso/design.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/base/exact_sum.h"

namespace rotor::lasso {
namespace {

// Mean and population scale of a column given its stored values (the other rows are 0).
struct ColumnMoments {
    double mean = 0;
    double scale = 1;
    bool constant = false;
};

ColumnMoments moments(std::span<const double> v, std::uint32_t n, const StandardizeOptions& o) {
    ColumnMoments m;
    double lo = 0, hi = 0;
    if (!v.empty()) {
        const auto [a, b] = std::minmax_element(v.begin(), v.end());
        lo = *a;
        hi = *b;
        if (v.size() < n) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
    }
    // A constant column is all zero once centred; uncentred, only a column of zeros is.
    m.constant = lo == hi && (o.intercept || lo == 0);
    if (o.intercept) {
        double s = 0;
        for (double x : v) s += x;
        m.mean = s / n;
    }
    // Two passes: Σ (x − m)² over the stored values plus the (n − nnz) zeros' m².
    double ss = static_cast<double>(n - v.size()) * m.mean * m.mean;
    for (double x : v) ss += (x - m.mean) * (x - m.mean);
    const double scale = std::sqrt(ss / n);
    if (o.standardize && !m.constant && scale > 0) m.scale = scale;
    return m;
}

}  // namespace

void RawData::add_sample(double y, std::span<const std::uint32_t> c, std::span<const double> v) {
    ROTOR_ASSERT(c.size() == v.size(), "one value per column");
    cols.insert(cols.end(), c.begin(), c.end());
    values.insert(values.end(), v.begin(), v.end());
    row_offsets.push_back(cols.size());
    targets.push_back(y);
}

double Standardization::raw_intercept(std::span<const double> b) const {
    core::ExactSum s;
    for (std::size_t j = 0; j < b.size(); ++j) {
        if (b[j] != 0) s.add(means[j] * raw_coefficient(static_cast<std::uint32_t>(j), b[j]));
    }
    return y_mean - s.value();
}

Design build_design(const RawData& raw, const StandardizeOptions& options) {
    const std::uint32_t n = raw.samples();
    const std::uint32_t p = raw.features;
    if (n == 0) throw InputError("design", "no samples");
    ROTOR_ASSERT(
        raw.row_offsets.size() == std::size_t{n} + 1 && raw.cols.size() == raw.values.size(),
        "RawData: offsets, cols and values disagree");
    Design d;
    d.samples_ = n;
    d.dense_ = raw.dense;

    // CSR -> CSC: count, prefix sums, scatter in row order (rows increase within a column).
    d.offsets_.assign(std::size_t{p} + 1, 0);
    for (std::uint32_t c : raw.cols) {
        ROTOR_ASSERT(c < p, "RawData: a column past features");
        ++d.offsets_[c + 1];
    }
    for (std::uint32_t j = 0; j < p; ++j) d.offsets_[j + 1] += d.offsets_[j];
    d.rows_.resize(raw.cols.size());
    d.values_.resize(raw.cols.size());
    std::vector<std::uint64_t> next(d.offsets_.begin(), d.offsets_.end() - 1);
    for (std::uint32_t i = 0; i < n; ++i) {
        for (std::uint64_t e = raw.row_offsets[i]; e < raw.row_offsets[i + 1]; ++e) {
            if (!std::isfinite(raw.values[e])) throw InputError("design", "a value is not finite");
            const std::uint64_t at = next[raw.cols[e]]++;
            d.rows_[at] = i;
            d.values_[at] = raw.values[e];
        }
    }

    Standardization& st = d.standardization_;
    st.intercept = options.intercept;
    st.means.assign(p, 0);
    st.scales.assign(p, 1);
    d.shifts_.assign(p, 0);
    d.sq_norms_.assign(p, 0);
    for (std::uint32_t j = 0; j < p; ++j) {
        const std::span<double> v(d.values_.data() + d.offsets_[j],
                                  d.offsets_[j + 1] - d.offsets_[j]);
        const ColumnMoments m = moments(v, n, options);
        st.means[j] = m.mean;
        st.scales[j] = m.scale;
        if (raw.dense) {  // centred in storage
            for (double& x : v) x = (x - m.mean) / m.scale;
        } else {
            for (double& x : v) x /= m.scale;
            d.shifts_[j] = m.mean / m.scale;
        }
        if (m.constant) continue;  // z_j = 0: d_j = 0 keeps b_j at 0
        const double c = d.shifts_[j];
        double ss = static_cast<double>(n - v.size()) * c * c;
        for (double x : v) ss += (x - c) * (x - c);
        d.sq_norms_[j] = ss / n;
    }

    // ỹ = (y − ȳ) / σ_y.
    for (double y : raw.targets) {
        if (!std::isfinite(y)) throw InputError("design", "a target is not finite");
    }
    double ysum = 0;
    for (double y : raw.targets) ysum += y;
    st.y_mean = options.intercept ? ysum / n : 0;
    double yss = 0;
    for (double y : raw.targets) yss += (y - st.y_mean) * (y - st.y_mean);
    const double ysd = std::sqrt(yss / n);
    st.y_scale = ysd > 0 ? ysd : 1;
    d.targets_.resize(n);
    core::ExactSum tsum;
    for (std::uint32_t i = 0; i < n; ++i) {
        d.targets_[i] = (raw.targets[i] - st.y_mean) / st.y_scale;
        tsum.add(d.targets_[i]);
    }
    d.target_sum_ = tsum.value();
    return d;
}

DesignPart::DesignPart(const Design& design, std::uint32_t row_begin, std::uint32_t row_end)
    : row_begin_(row_begin) {
    ROTOR_ASSERT(row_begin <= row_end && row_end <= design.samples(), "part rows out of range");
    const ColumnsView x = design.columns();
    const std::uint32_t p = x.columns();
    offsets_.assign(std::size_t{p} + 1, 0);
    // Each column's entries in [row_begin, row_end): counted first, so the arrays are allocated
    // once at their size (growing them would double the peak of a large part).
    const auto range = [&](std::uint32_t j) {
        const auto first = x.rows.begin() + static_cast<std::ptrdiff_t>(x.offsets[j]);
        const auto last = x.rows.begin() + static_cast<std::ptrdiff_t>(x.offsets[j + 1]);
        const auto lo = std::lower_bound(first, last, row_begin);
        return std::pair{lo, std::lower_bound(lo, last, row_end)};
    };
    std::uint64_t entries = 0;
    for (std::uint32_t j = 0; j < p; ++j) {
        const auto [lo, hi] = range(j);
        entries += static_cast<std::uint64_t>(hi - lo);
    }
    rows_.reserve(entries);
    values_.reserve(entries);
    for (std::uint32_t j = 0; j < p; ++j) {
        const auto [lo, hi] = range(j);
        for (auto it = lo; it != hi; ++it) {
            rows_.push_back(*it - row_begin);
            values_.push_back(x.values[static_cast<std::size_t>(it - x.rows.begin())]);
        }
        offsets_[j + 1] = rows_.size();
    }
    const auto t = design.targets();
    targets_.assign(t.begin() + row_begin, t.begin() + row_end);
}

std::vector<DesignPart> split_design(const Design& design, std::uint32_t parts) {
    ROTOR_ASSERT(parts >= 1, "at least one part");
    std::vector<DesignPart> out;
    const std::uint32_t n = design.samples();
    std::uint32_t begin = 0;
    for (std::uint32_t q = 0; q < parts; ++q) {
        const std::uint32_t size = n / parts + (q < n % parts ? 1 : 0);
        out.emplace_back(design, begin, begin + size);
        begin += size;
    }
    return out;
}

}  // namespace rotor::lasso
