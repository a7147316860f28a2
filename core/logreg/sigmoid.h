// The logistic function σ(−z) = 1 / (1 + e^z) of logistic regression's gradient, inline and
// without a call to libm's exp: the block gradient evaluates it once for every example whose
// margin changed since the last block (7 M times in 20 passes over sotu-party), and libm's exp
// behind its wrapper was 22% of a single-threaded run's instructions.
//
// e^z = 2^k e^r with k = round(z / ln 2) and |r| <= ln 2 / 2, e^r by Cephes' rational form
// e^r = (Q(r²) + r P(r²)) / (Q(r²) − r P(r²)) (relative error 2.2e-16 on that range). Then
//     σ(−z) = D / (D + 2^k N),  N = Q + r P,  D = Q − r P,
// one division for the exponential and the reciprocal together. Only +, ×, one ÷ and bit
// operations on IEEE doubles: the same bits on every machine and at every thread count (libm's
// exp differs between library versions). Measured against a long double reference in
// tests/core/logreg/test_sigmoid.cpp: within 4 ulp of σ(−z) for every z.
#pragma once

#include <bit>
#include <cstdint>

namespace rotor::logreg {

/// Two doubles in one register (GCC and Clang vector extensions: SSE2 on x86-64, plain scalar
/// code where a target has no such registers). Elementwise IEEE operations, so a lane gets the
/// bits the scalar code gives.
using DoublePair = double __attribute__((vector_size(16)));

namespace detail {

using U64Pair = std::uint64_t __attribute__((vector_size(16)));

/// σ(−z) on a double (D = double, U = std::uint64_t) or on each lane of a DoublePair (D =
/// DoublePair, U = U64Pair): one source for both, so they agree bit for bit.
template <class D, class U>
inline D sigmoid_neg_lanes(D z) noexcept {
    // Beyond ±746 the result is 0 or 1 in double either way; clamping keeps 2^k representable as
    // the product of two normal powers. A NaN fails both tests and passes through.
    const D lo = D{} - 746.0, hi = D{} + 746.0;
    z = z < lo ? lo : z;
    z = z > hi ? hi : z;
    constexpr double kLog2e = 1.4426950408889634074;
    constexpr double kShift = 0x1.8p52;  // adding it rounds to an integer in the low bits
    const D t = z * kLog2e + kShift;
    const D kd = t - kShift;
    // ln 2 in two parts (Cephes' C1, C2): kd * C1 is exact for |k| < 2^11.
    const D r = (z - kd * 6.93145751953125E-1) - kd * 1.42860682030941723212E-6;
    const D rr = r * r;
    const D p = r * ((1.26177193074810590878E-4 * rr + 3.02994407707441961300E-2) * rr +
                     9.99999999999999999910E-1);
    const D q = ((3.00198505138664455042E-6 * rr + 2.52448340349684104192E-3) * rr +
                 2.27265548208155028766E-1) *
                    rr +
                2.00000000000000000009E0;
    // 2^k = 2^k1 · 2^k2 with k1 = round(k / 2) and k2 = k − k1, both normal (|k| <= 1077): each
    // is an integer in the low bits of h and g, as k is in t's.
    const D h = kd * 0.5 + kShift;
    const D g = (kd - (h - kShift)) + kShift;
    constexpr std::uint64_t kBias = std::bit_cast<std::uint64_t>(kShift) - 1023;
    const D s1 = std::bit_cast<D>((std::bit_cast<U>(h) - kBias) << 52);
    const D s2 = std::bit_cast<D>((std::bit_cast<U>(g) - kBias) << 52);
    const D d = q - p;
    return d / (d + (q + p) * s1 * s2);
}

}  // namespace detail

/// 1 / (1 + e^z) for every double z: 1 for z <= −746, +0 where e^z overflows (z > 709.78, as
/// 1 / (1 + exp(z)) gives in double), NaN for NaN.
inline double sigmoid_neg(double z) noexcept {
    return detail::sigmoid_neg_lanes<double, std::uint64_t>(z);
}

/// sigmoid_neg of both lanes, the same bits, about half the instructions of two calls.
inline DoublePair sigmoid_neg(DoublePair z) noexcept {
    return detail::sigmoid_neg_lanes<DoublePair, detail::U64Pair>(z);
}

}  // namespace rotor::logreg
