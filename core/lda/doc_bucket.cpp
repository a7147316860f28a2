#include "core/lda/doc_bucket.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ROTOR_HAVE_AVX2_KERNEL 1
#endif

namespace rotor::lda::detail {

double doc_masses_scalar(const TopicCount* e, std::uint32_t n, TopicId old, const double* coef,
                         double* masses, std::uint32_t* old_at) {
    *old_at = n;
    for (std::uint32_t i = 0; i < n; ++i) {
        const TopicId k = e[i].topic;
        const Count c = e[i].count - static_cast<Count>(k == old);
        if (k == old) *old_at = i;
        masses[i] = c * coef[k];
    }
    // Four chains: the loop is bound by the latency of the additions otherwise.
    double q0 = 0, q1 = 0, q2 = 0, q3 = 0;
    std::uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        q0 += masses[i];
        q1 += masses[i + 1];
        q2 += masses[i + 2];
        q3 += masses[i + 3];
    }
    for (; i < n; ++i) q0 += masses[i];
    return (q0 + q1) + (q2 + q3);
}

#ifdef ROTOR_HAVE_AVX2_KERNEL
namespace {

// Four (topic, count) pairs per step: topics and counts apart by one permute, the count of `old`
// lowered by adding the all-ones compare mask, the coefficients gathered. The four lanes of the
// accumulator are the four chains of the scalar version, added in the same order; no FMA (the
// target does not enable it), so every product and sum rounds as in the scalar code.
__attribute__((target("avx2"))) double doc_masses_avx2_impl(const TopicCount* e, std::uint32_t n,
                                                            TopicId old, const double* coef,
                                                            double* masses, std::uint32_t* old_at) {
    static_assert(sizeof(TopicCount) == 8, "pairs of two 32-bit words");
    const __m256i split = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const __m128i old4 = _mm_set1_epi32(static_cast<int>(old));
    // The masked gather with every lane on: the unmasked intrinsic trips GCC 12's
    // -Wmaybe-uninitialized inside its own header.
    const __m256d zero = _mm256_setzero_pd();
    const __m256d all = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
    __m256d acc = zero;
    std::uint32_t at = n;
    std::uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const __m256i pairs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e + i));
        const __m256i parts = _mm256_permutevar8x32_epi32(pairs, split);
        const __m128i topics = _mm256_castsi256_si128(parts);
        const __m128i is_old = _mm_cmpeq_epi32(topics, old4);
        const int old_lanes = _mm_movemask_ps(_mm_castsi128_ps(is_old));
        if (old_lanes != 0) at = i + static_cast<std::uint32_t>(__builtin_ctz(old_lanes));
        const __m128i counts = _mm_add_epi32(_mm256_extracti128_si256(parts, 1), is_old);
        const __m256d m = _mm256_mul_pd(_mm256_cvtepi32_pd(counts),
                                        _mm256_mask_i32gather_pd(zero, coef, topics, all, 8));
        _mm256_storeu_pd(masses + i, m);
        acc = _mm256_add_pd(acc, m);
    }
    alignas(32) double q[4];
    _mm256_store_pd(q, acc);
    for (; i < n; ++i) {
        const TopicId k = e[i].topic;
        const Count c = e[i].count - static_cast<Count>(k == old);
        if (k == old) at = i;
        masses[i] = c * coef[k];
        q[0] += masses[i];
    }
    *old_at = at;
    return (q[0] + q[1]) + (q[2] + q[3]);
}

}  // namespace
#endif

DocMassesFn doc_masses_avx2() {
#ifdef ROTOR_HAVE_AVX2_KERNEL
    if (__builtin_cpu_supports("avx2")) return &doc_masses_avx2_impl;
#endif
    return nullptr;
}

DocMassesFn doc_masses_best() {
    const DocMassesFn avx2 = doc_masses_avx2();
    return avx2 != nullptr ? avx2 : &doc_masses_scalar;
}

}  // namespace rotor::lda::detail
