#include "core/mf/ials.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "core/base/error.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ROTOR_HAVE_IALS_AVX2 1
#endif

// The kernel passes 8-float vectors between its inline helpers; in the baseline build GCC warns
// that such a value would be passed differently with AVX. They never cross this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace rotor::mf {
namespace detail {
namespace scalar {
#include "core/mf/ials_kernel.inc"
}  // namespace scalar

#ifdef ROTOR_HAVE_IALS_AVX2
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif
namespace avx2 {
#include "core/mf/ials_kernel.inc"
}  // namespace avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

namespace {
struct Kernels {
    IalsKernels k;
    void (*row_terms)(const SparseView&, const Factors&, std::span<const float>, const IalsParams&,
                      const Factors&, std::uint32_t, std::uint32_t, std::span<double>);
    void (*scores)(const Factors&, std::span<const float>, std::span<float>);
};

const Kernels& best() {
    static const Kernels b = [] {
#ifdef ROTOR_HAVE_IALS_AVX2
        if (__builtin_cpu_supports("avx2"))
            return Kernels{{&avx2::gram_upper, &avx2::solve}, &avx2::row_terms, &avx2::scores};
#endif
        return Kernels{{&scalar::gram_upper, &scalar::solve}, &scalar::row_terms, &scalar::scores};
    }();
    return b;
}
}  // namespace

IalsKernels ials_kernels_scalar() { return {&scalar::gram_upper, &scalar::solve}; }

IalsKernels ials_kernels_avx2() {
#ifdef ROTOR_HAVE_IALS_AVX2
    if (__builtin_cpu_supports("avx2")) return {&avx2::gram_upper, &avx2::solve};
#endif
    return {nullptr, nullptr};
}

}  // namespace detail

void IalsParams::validate() const {
    if (!(lambda >= 0) || !std::isfinite(lambda))
        throw ConfigError("--lambda", fmt::format("must be a finite number >= 0, got {}", lambda));
    if (!(alpha >= 0) || !std::isfinite(alpha))
        throw ConfigError("--alpha", fmt::format("must be a finite number >= 0, got {}", alpha));
    if (cg_steps == 0 || cg_steps > 1024)
        throw ConfigError("--cg-steps", fmt::format("must be in 1..1024, got {}", cg_steps));
}

std::vector<std::uint32_t> gram_row_split(std::uint32_t k, int parts) {
    ROTOR_ASSERT(parts >= 1, "gram_row_split: no parts");
    // Row group a0 (4 rows) costs its columns from a0 rounded down to 16 on.
    std::vector<std::uint64_t> cost_before{0};
    for (std::uint32_t a0 = 0; a0 < k; a0 += 4)
        cost_before.push_back(cost_before.back() + (k - (a0 & ~15U)) * std::min(4U, k - a0));
    const std::uint64_t total = cost_before.back();
    std::vector<std::uint32_t> begin(static_cast<std::size_t>(parts) + 1, k);
    begin[0] = 0;
    for (int q = 1; q < parts; ++q) {
        const std::uint64_t target =
            total * static_cast<std::uint64_t>(q) / static_cast<std::uint64_t>(parts);
        const auto it = std::lower_bound(cost_before.begin(), cost_before.end(), target);
        const auto groups = static_cast<std::uint32_t>(it - cost_before.begin());
        begin[static_cast<std::size_t>(q)] =
            std::max(begin[static_cast<std::size_t>(q) - 1], std::min(k, 4 * groups));
    }
    return begin;
}

void gram_upper(const Factors& y, double lambda, std::uint32_t row_begin, std::uint32_t row_end,
                std::span<float> g) {
    ROTOR_ASSERT(g.size() == std::size_t{y.k()} * y.k(), "gram_upper: G is not K x K");
    ROTOR_ASSERT(row_begin % 4 == 0 && row_begin <= row_end && row_end <= y.k(),
                 "gram_upper: bad row range");
    detail::best().k.gram_upper(y, lambda, row_begin, row_end, g);
}

void gram_mirror(std::uint32_t k, std::uint32_t row_begin, std::uint32_t row_end,
                 std::span<float> g) {
    for (std::size_t a = row_begin; a < row_end; ++a)
        for (std::size_t b = 0; b < (a & ~std::size_t{15}); ++b) g[a * k + b] = g[b * k + a];
}

void gram(const Factors& y, double lambda, std::span<float> g) {
    gram_upper(y, lambda, 0, y.k(), g);
    gram_mirror(y.k(), 0, y.k(), g);
}

void ials_solve(const SparseView& a, const Factors& y, std::span<const float> g,
                const IalsParams& params, Factors& x, std::uint32_t begin, std::uint32_t end,
                IalsScratch& scratch) {
    ROTOR_ASSERT(a.outer_size() == x.rows() && x.k() == y.k() && end <= x.rows() &&
                     g.size() == std::size_t{y.k()} * y.k(),
                 "ials_solve: shapes disagree");
    detail::best().k.solve(a, y, g, params, x, begin, end, scratch);
}

void ials_row_terms(const SparseView& a, const Factors& y, std::span<const float> g,
                    const IalsParams& params, const Factors& x, std::uint32_t begin,
                    std::uint32_t end, std::span<double> terms) {
    ROTOR_ASSERT(a.outer_size() == x.rows() && x.k() == y.k() && end <= x.rows() &&
                     terms.size() >= end - begin && g.size() == std::size_t{y.k()} * y.k(),
                 "ials_row_terms: shapes disagree");
    detail::best().row_terms(a, y, g, params, x, begin, end, terms);
}

void ials_scores(const Factors& h, std::span<const float> w_u, std::span<float> out) {
    ROTOR_ASSERT(w_u.size() == h.k() && out.size() == h.rows(), "ials_scores: shapes disagree");
    detail::best().scores(h, w_u, out);
}

double ials_objective(const SparseView& a, const Factors& x, const Factors& y,
                      const IalsParams& params) {
    std::vector<float> g(std::size_t{y.k()} * y.k());
    gram(y, params.lambda, g);
    std::vector<double> terms(x.rows());
    ials_row_terms(a, y, g, params, x, 0, x.rows(), terms);
    double f = 0;
    for (const double t : terms) f += t;
    for (const float v : y.values()) f += params.lambda * static_cast<double>(v) * v;
    return f;
}

}  // namespace rotor::mf
