#include "core/mf/sgd.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/base/error.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ROTOR_HAVE_SGD_AVX2 1
#endif

namespace rotor::mf {
namespace detail {
namespace scalar {
#include "core/mf/sgd_kernel.inc"
}  // namespace scalar

#ifdef ROTOR_HAVE_SGD_AVX2
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif
#define ROTOR_SGD_AVX2 1
namespace avx2 {
#include "core/mf/sgd_kernel.inc"
}  // namespace avx2
#undef ROTOR_SGD_AVX2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

SgdBlockFn sgd_block_scalar() { return &scalar::block; }

SgdBlockFn sgd_block_avx2() {
#ifdef ROTOR_HAVE_SGD_AVX2
    if (__builtin_cpu_supports("avx2")) return &avx2::block;
#endif
    return nullptr;
}

SgdBlockFn sgd_block_best() {
    static const SgdBlockFn best = [] {
        const SgdBlockFn a = sgd_block_avx2();
        return a != nullptr ? a : sgd_block_scalar();
    }();
    return best;
}

}  // namespace detail

namespace {

void check_side(const SgdSide& s, const SgdParams& p, const char* what) {
    ROTOR_ASSERT(s.factors != nullptr, what);
    const std::size_t n = s.factors->rows();
    ROTOR_ASSERT(s.factor_gsum.size() == n, what);
    ROTOR_ASSERT(!p.objective.bias || (s.bias.size() == n && s.bias_gsum.size() == n), what);
    ROTOR_ASSERT(p.objective.form == LambdaForm::kWeighted || s.counts.size() == n, what);
}

}  // namespace

void SgdParams::validate() const {
    objective.validate();
    if (!(eta > 0) || !std::isfinite(eta)) {
        throw ConfigError("--eta", "must be a positive finite number, got " + std::to_string(eta));
    }
}

SgdState::SgdState(std::uint32_t rows, bool with_bias)
    : bias(with_bias ? rows : 0, 0.0f),
      factor_gsum(rows, 1.0f),
      bias_gsum(with_bias ? rows : 0, 1.0f) {}

SgdSide SgdState::side(Factors& factors, std::span<const std::uint64_t> counts) {
    return SgdSide{&factors, bias, factor_gsum, bias_gsum, counts};
}

double sgd_update(std::uint32_t i, std::uint32_t j, float a, SgdSide& rows, SgdSide& cols,
                  double mu, const SgdParams& p) {
    return detail::scalar::update(i, j, a, rows, cols, mu, p);
}

std::uint64_t sgd_block(const BlockView& block, SgdSide& rows, SgdSide& cols, double mu,
                        const SgdParams& p, const std::atomic<bool>* stop, double* loss,
                        detail::SgdBlockFn kernel) {
    ROTOR_ASSERT(block.col_bits <= 32, "sgd_block: more than 32 column bits");
    check_side(rows, p, "sgd_block: the row side's arrays do not match W");
    check_side(cols, p, "sgd_block: the column side's arrays do not match H");
    ROTOR_ASSERT(rows.factors->k() == cols.factors->k(), "sgd_block: W and H differ in K");
    if (kernel == nullptr) kernel = detail::sgd_block_best();
    return kernel(block, rows, cols, mu, p, stop, loss);
}

}  // namespace rotor::mf
