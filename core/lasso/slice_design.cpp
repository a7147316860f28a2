#include "core/lasso/slice_design.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace rotor::lasso {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double square(double x) { return x * x; }

/// 2^-e with 2^e the power of two at or above max(hi, -lo_neg) (1 for a column of zeros or
/// none): terms times it are at most 1 in absolute value.
double unit_scale(double hi, double lo_neg) {
    const double m = std::max(hi, lo_neg);
    if (!(m > 0) || !std::isfinite(m)) return 1;
    return std::ldexp(1.0, -std::ilogb(m) - 1);
}

}  // namespace

Reducer Reducer::single() {
    return {[](std::span<core::ExactSum>) {}, [](std::span<double>) {}};
}

RawData slice_rows(const RawData& raw, std::uint32_t begin, std::uint32_t end) {
    ROTOR_ASSERT(begin <= end && end <= raw.samples(), "slice_rows: rows out of range");
    RawData out;
    out.features = raw.features;
    out.dense = raw.dense;
    out.feature_names = raw.feature_names;
    const std::uint64_t e0 = raw.row_offsets[begin], e1 = raw.row_offsets[end];
    out.cols.assign(raw.cols.begin() + static_cast<std::ptrdiff_t>(e0),
                    raw.cols.begin() + static_cast<std::ptrdiff_t>(e1));
    out.values.assign(raw.values.begin() + static_cast<std::ptrdiff_t>(e0),
                      raw.values.begin() + static_cast<std::ptrdiff_t>(e1));
    out.row_offsets.clear();
    for (std::uint32_t i = begin; i <= end; ++i) out.row_offsets.push_back(raw.row_offsets[i] - e0);
    out.targets.assign(raw.targets.begin() + begin, raw.targets.begin() + end);
    return out;
}

/// Fills a Design's private members (a friend of Design).
struct SliceBuilder {
    static SliceDesign build(const RawData& raw, const StandardizeOptions& options,
                             const Reducer& reduce);
    static void to_columns(const RawData& raw, Design& d);
    static std::span<double> column(Design& d, std::uint32_t j) {
        return {d.values_.data() + d.offsets_[j], d.offsets_[j + 1] - d.offsets_[j]};
    }
    static std::vector<double> extremes(Design& d, const RawData& raw, const Reducer& reduce);
    static void store(const RawData& raw, std::span<const double> zeros,
                      const std::vector<bool>& constant, const Reducer& reduce, SliceDesign& out);
};

void SliceBuilder::to_columns(const RawData& raw, Design& d) {
    const std::uint32_t p = raw.features;
    d.offsets_.assign(std::size_t{p} + 1, 0);
    for (std::uint32_t c : raw.cols) {
        ROTOR_ASSERT(c < p, "RawData: a column past features");
        ++d.offsets_[c + 1];
    }
    for (std::uint32_t j = 0; j < p; ++j) d.offsets_[j + 1] += d.offsets_[j];
    d.rows_.resize(raw.cols.size());
    d.values_.resize(raw.cols.size());
    std::vector<std::uint64_t> next(d.offsets_.begin(), d.offsets_.end() - 1);
    for (std::uint32_t i = 0; i < raw.samples(); ++i) {
        for (std::uint64_t e = raw.row_offsets[i]; e < raw.row_offsets[i + 1]; ++e) {
            if (!std::isfinite(raw.values[e])) throw InputError("design", "a value is not finite");
            const std::uint64_t at = next[raw.cols[e]]++;
            d.rows_[at] = i;
            d.values_[at] = raw.values[e];
        }
    }
    for (double y : raw.targets) {
        if (!std::isfinite(y)) throw InputError("design", "a target is not finite");
    }
}

std::vector<double> SliceBuilder::extremes(Design& d, const RawData& raw, const Reducer& reduce) {
    // (0) The extremes of each column's stored values and of y: every sum below is of terms
    // scaled by a power of two k_j ≈ 1 / max|x_ij| (exact, and the same on every slice), so
    // that the fixed point of core::ExactSum keeps its relative precision whatever the units.
    const std::uint32_t p = raw.features;
    std::vector<double> extremes(2 * std::size_t{p} + 2, -kInf);
    for (std::uint32_t j = 0; j < p; ++j) {
        for (double x : column(d, j)) {
            extremes[2 * j] = std::max(extremes[2 * j], x);
            extremes[2 * j + 1] = std::max(extremes[2 * j + 1], -x);
        }
    }
    for (double y : raw.targets) {
        extremes[2 * p] = std::max(extremes[2 * p], y);
        extremes[2 * p + 1] = std::max(extremes[2 * p + 1], -y);
    }
    reduce.max(extremes);
    return extremes;
}

void SliceBuilder::store(const RawData& raw, std::span<const double> zeros,
                         const std::vector<bool>& constant, const Reducer& reduce,
                         SliceDesign& out) {
    Design& d = out.rows;
    const Standardization& st = d.standardization_;
    const std::uint32_t p = raw.features;
    const std::uint32_t n_local = raw.samples();
    const double n = out.total_samples;
    // Storage as build_design has it; (3) Σ(x̃ − c)² over the stored values and Σỹ.
    d.shifts_.assign(p, 0);
    d.sq_norms_.assign(p, 0);
    std::vector<core::ExactSum> third(std::size_t{p} + 1);
    for (std::uint32_t j = 0; j < p; ++j) {
        const std::span<double> v = column(d, j);
        if (raw.dense) {
            for (double& x : v) x = (x - st.means[j]) / st.scales[j];
        } else {
            for (double& x : v) x /= st.scales[j];
            d.shifts_[j] = st.means[j] / st.scales[j];
        }
        const double c = d.shifts_[j];
        for (double x : v) third[j].add((x - c) * (x - c));
    }
    d.targets_.resize(n_local);
    for (std::uint32_t i = 0; i < n_local; ++i) {
        d.targets_[i] = (raw.targets[i] - st.y_mean) / st.y_scale;
        third[p].add(d.targets_[i]);
    }
    reduce.sum(third);
    for (std::uint32_t j = 0; j < p; ++j) {
        if (constant[j]) continue;  // z_j = 0: d_j = 0 keeps b_j at 0
        const double c = d.shifts_[j];
        d.sq_norms_[j] = (third[j].value() + zeros[j] * c * c) / n;
    }
    out.total_target_sum = third[p].value();
    // The slice's own Σỹ, as build_design() keeps it for its rows.
    core::ExactSum local;
    for (double t : d.targets_) local.add(t);
    d.target_sum_ = local.value();
}

SliceDesign SliceBuilder::build(const RawData& raw, const StandardizeOptions& options,
                                const Reducer& reduce) {
    const std::uint32_t p = raw.features;
    const std::uint32_t n_local = raw.samples();
    ROTOR_ASSERT(
        raw.row_offsets.size() == std::size_t{n_local} + 1 && raw.cols.size() == raw.values.size(),
        "RawData: offsets, cols and values disagree");
    SliceDesign out;
    Design& d = out.rows;
    d.samples_ = n_local;
    d.dense_ = raw.dense;
    to_columns(raw, d);

    const std::vector<double> extremes = SliceBuilder::extremes(d, raw, reduce);
    std::vector<double> k(std::size_t{p} + 1);
    for (std::uint32_t j = 0; j <= p; ++j) k[j] = unit_scale(extremes[2 * j], extremes[2 * j + 1]);

    // (1) Σx_j k_j, nnz_j per column, then N and Σy k_y.
    std::vector<core::ExactSum> first(2 * std::size_t{p} + 2);
    for (std::uint32_t j = 0; j < p; ++j) {
        for (double x : column(d, j)) first[j].add(x * k[j]);
        first[p + j] = core::ExactSum::of(static_cast<double>(column(d, j).size()));
    }
    first[2 * p] = core::ExactSum::of(n_local);
    for (double y : raw.targets) first[2 * p + 1].add(y * k[p]);
    reduce.sum(first);
    const double n = first[2 * p].value();
    if (!(n > 0)) throw InputError("design", "no samples");
    out.total_samples = static_cast<std::uint32_t>(n);

    Standardization& st = d.standardization_;
    st.intercept = options.intercept;
    st.means.assign(p, 0);
    st.scales.assign(p, 1);
    std::vector<double> zeros(p);
    std::vector<bool> constant(p);
    for (std::uint32_t j = 0; j < p; ++j) {
        zeros[j] = n - first[p + j].value();
        double hi = extremes[2 * j], lo = -extremes[2 * j + 1];  // ±inf: no stored value
        if (zeros[j] > 0) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
        constant[j] = lo == hi && (options.intercept || lo == 0);
        if (options.intercept) st.means[j] = first[j].value() / n / k[j];
    }
    st.y_mean = options.intercept ? first[2 * p + 1].value() / n / k[p] : 0;

    // (2) Σ(x − m)² over the stored values (the zeros' (N − nnz)·m² after), Σ(y − ȳ)².
    std::vector<core::ExactSum> second(std::size_t{p} + 1);
    for (std::uint32_t j = 0; j < p; ++j) {
        for (double x : column(d, j)) second[j].add(square((x - st.means[j]) * k[j]));
    }
    for (double y : raw.targets) second[p].add(square((y - st.y_mean) * k[p]));
    reduce.sum(second);
    for (std::uint32_t j = 0; j < p; ++j) {
        const double ss = second[j].value() / (k[j] * k[j]) + zeros[j] * st.means[j] * st.means[j];
        const double scale = std::sqrt(ss / n);
        if (options.standardize && !constant[j] && scale > 0) st.scales[j] = scale;
    }
    const double ysd = std::sqrt(second[p].value() / (k[p] * k[p]) / n);
    st.y_scale = ysd > 0 ? ysd : 1;

    store(raw, zeros, constant, reduce, out);
    return out;
}

SliceDesign build_slice_design(const RawData& raw, const StandardizeOptions& options,
                               const Reducer& reduce) {
    return SliceBuilder::build(raw, options, reduce);
}

}  // namespace rotor::lasso
