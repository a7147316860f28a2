// A sum of doubles whose value does not depend on the order or the grouping of its terms, so
// that partial sums pushed by any number of parts (threads, ranks) and added in any order give
// bitwise the same total: the pull of CCD's push/pull (docs/mf.md, "Exact partial sums").
//
// A plain double sum does not have that property: (a + b) + (c + d) and ((a + b) + c) + d round
// differently, so the same column update summed over 1 and over 3 parts would differ in its last
// bits, and W and H would drift apart over iterations. Here each term is rounded ONCE, on its
// own, to a multiple of 2^-48 (toward zero: a fixed-point number), and the fixed-point values
// are added exactly in a 128-bit integer. Integer addition is associative, so the total depends
// only on the multiset of terms. (Float storage of the factors would hide most of a double sum's
// differences, but not all: one flipped float bit, and the runs diverge.)
//
// Range and precision: a term must satisfy |x| < 2^47 (about 1.4e14); its rounding error is
// below 2^-48 (about 3.6e-15) in absolute value, so n terms are within n * 3.6e-15 of their
// exact sum (a double sum's bound is n * 1.1e-16 * Σ|x|). The total may reach 2^79. A term out of
// range, infinite or NaN makes the sum invalid, and value() is then NaN: the error shows, it is
// never silently inexact. Cost: about twice a double sum's time per term (docs/mf.md).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace rotor::core {

/// An exact fixed-point sum of doubles. A value type, 24 bytes (no 16-byte alignment, so arrays
/// of them pack). Not thread-safe: one writer at a time; combine per-thread sums with add().
class ExactSum {
  public:
    /// Bits after the binary point of the fixed-point representation.
    static constexpr int kFractionBits = 48;
    /// Terms must be strictly smaller than this in absolute value (2^47).
    static constexpr double kMaxTerm = 140737488355328.0;
    /// Limbs of to_limbs(): see there.
    static constexpr int kLimbs = 4;
    /// Limbs of to_narrow_limbs(): see there.
    static constexpr int kNarrowLimbs = 2;
    /// Largest |fixed-point value| (units of 2^-48) that to_narrow_limbs() takes: 2^86, a value
    /// of 2^38 (about 2.7e11).
    static constexpr double kMaxNarrowValue = 0x1p38;

    /// Adds x rounded toward zero to a multiple of 2^-48. Out-of-range or non-finite x makes the
    /// sum invalid.
    void add(double x) noexcept {
        if (std::fabs(x) < 32768.0) {  // x * 2^48 < 2^63: one conversion
            add_fixed(fixed_of_small(x));
        } else if (std::fabs(x) < kMaxTerm) {  // integer part and fraction converted apart
            const double a = x * 0x1p16;
            const auto hi = static_cast<std::int64_t>(a);  // trunc(a), exact in a double
            const double frac = a - static_cast<double>(hi);
            // hi and frac have the sign of x: truncating the fraction alone truncates x * 2^48.
            add_fixed(static_cast<Int128>(hi) * (Int128{1} << 32) +
                      static_cast<std::int64_t>(frac * 0x1p32));
        } else {
            ++invalid_;
        }
    }
    /// The fixed-point value add() gives a term with |x| < 2^15: x * 2^48 rounded toward zero.
    /// For a caller that bounds its terms and adds these values in an int64 itself (at most
    /// 2^63 in total), then once into an ExactSum with add_fixed_value().
    static std::int64_t fixed_of_small(double x) noexcept {
        return static_cast<std::int64_t>(x * 0x1p48);  // toward zero
    }
    /// Adds a fixed-point value (units of 2^-48), e.g. a sum of fixed_of_small() values.
    void add_fixed_value(std::int64_t v) noexcept { add_fixed(v); }
    /// Adds another sum exactly.
    void add(const ExactSum& o) noexcept {
        add_fixed(o.fixed());
        invalid_ += o.invalid_;
    }
    /// The sum of the single term x: convert a term that repeats once, then add() it.
    static ExactSum of(double x) noexcept {
        ExactSum s;
        s.add(x);
        return s;
    }

    /// The total rounded to the nearest double; NaN when invalid.
    double value() const noexcept {
        if (invalid_ != 0) return std::nan("");
        // Scaling by a power of two is one correctly rounded operation, as ldexp's. A total that
        // fits an int64 converts in one instruction, rounded to nearest as the 128-bit conversion
        // (a library call) rounds the same integer: the same double.
        const Int128 v = fixed();
        const auto small = static_cast<std::int64_t>(v);
        if (static_cast<Int128>(small) == v) return static_cast<double>(small) * 0x1p-48;
        return static_cast<double>(v) * 0x1p-48;
    }
    bool valid() const noexcept { return invalid_ == 0; }
    bool operator==(const ExactSum& o) const noexcept {
        return lo_ == o.lo_ && hi_ == o.hi_ && invalid_ == o.invalid_;
    }

    /// The sum as four int64 limbs whose elementwise sums over parts (e.g. one allreduce_sum of
    /// int64 across ranks) are the limbs of the total: the fixed-point value v =
    /// l2 * 2^86 + l1 * 2^43 + l0 with l0, l1 in [0, 2^43) and l2 = v >> 86 (|l2| < 2^41), and
    /// l3 the count of invalid terms. Summing the limbs of up to 2^20 parts cannot overflow.
    std::array<std::int64_t, kLimbs> to_limbs() const noexcept {
        const Int128 v = fixed();
        constexpr Int128 kMask = (Int128{1} << 43) - 1;
        return {static_cast<std::int64_t>(v & kMask), static_cast<std::int64_t>((v >> 43) & kMask),
                static_cast<std::int64_t>(v >> 86), static_cast<std::int64_t>(invalid_)};
    }
    /// Half of to_limbs() for a sum that allows it: when no term was invalid and |v| < 2^86 (a
    /// value below kMaxNarrowValue in magnitude), writes v as out[0] + out[1] * 2^43 with out[0]
    /// in [0, 2^43) and out[1] = v >> 43 in [-2^43, 2^43), and returns true; elementwise sums of
    /// such limbs over up to 2^20 parts cannot overflow, and from_narrow_limbs() of them is the
    /// total, exactly. Returns false (out unspecified) otherwise: the caller uses to_limbs().
    bool to_narrow_limbs(std::int64_t* out) const noexcept {
        // On the two words: v >> 43 is (hi_ << 21 | lo_ >> 43) when it fits, which it does when
        // v >> 86 (hi_ >> 22, arithmetic) is 0 or -1.
        out[0] = static_cast<std::int64_t>(lo_ & ((std::uint64_t{1} << 43) - 1));
        out[1] = static_cast<std::int64_t>((hi_ << 21) | (lo_ >> 43));
        const std::int64_t top = static_cast<std::int64_t>(hi_) >> 22;
        return invalid_ == 0 && static_cast<std::uint64_t>(top + 1) <= 1;
    }
    /// The sum whose narrow limbs (or the elementwise sum of several sums' narrow limbs) are
    /// l0, l1: a valid sum of value (l0 + l1 * 2^43) * 2^-48.
    static ExactSum from_narrow_limbs(std::int64_t l0, std::int64_t l1) noexcept {
        ExactSum s;
        s.add_fixed(static_cast<Int128>(l0) + static_cast<Int128>(l1) * (Int128{1} << 43));
        return s;
    }
    /// The sum whose limbs (or the elementwise sum of several sums' limbs) are `l`.
    static ExactSum from_limbs(const std::array<std::int64_t, kLimbs>& l) noexcept {
        ExactSum s;
        s.add_fixed(static_cast<Int128>(l[0]) + static_cast<Int128>(l[1]) * (Int128{1} << 43) +
                    static_cast<Int128>(l[2]) * (Int128{1} << 86));
        s.invalid_ = static_cast<std::uint64_t>(l[3]);
        return s;
    }

  private:
    friend class ExactAccumulator;
    __extension__ using Int128 = __int128;
    __extension__ using UInt128 = unsigned __int128;

    Int128 fixed() const noexcept {
        return static_cast<Int128>((static_cast<UInt128>(hi_) << 64) | lo_);
    }
    void add_fixed(Int128 t) noexcept {
        const UInt128 v = static_cast<UInt128>(fixed()) + static_cast<UInt128>(t);  // wraps
        lo_ = static_cast<std::uint64_t>(v);
        hi_ = static_cast<std::uint64_t>(v >> 64);
    }

    std::uint64_t lo_ = 0;       // low 64 bits of the two's-complement fixed-point total
    std::uint64_t hi_ = 0;       // high 64 bits
    std::uint64_t invalid_ = 0;  // terms out of range or not finite
};

/// ExactSum::add for a run of terms, cheaper per term: a term below 2^15 in magnitude (one
/// 64-bit conversion, ExactSum's own first case) is added into a 64-bit integer, which goes into
/// the ExactSum only when the next addition would overflow; a term below 2^47 (ExactSum's second
/// case: its integer part x * 2^16 and the fraction's 32 bits converted apart) adds the two parts
/// into two more 64-bit integers the same way; larger or invalid terms go to the ExactSum at
/// once. The same rounding of each term and only integer additions, so sum() is bitwise the
/// ExactSum of the same terms (tested). A local value for one loop; not thread-safe.
class ExactAccumulator {
  public:
    void add(double x) noexcept {
        const double m = std::fabs(x);
        if (m < 32768.0) [[likely]] {
            const std::int64_t t = ExactSum::fixed_of_small(x);
            if (__builtin_add_overflow(small_, t, &small_)) [[unlikely]]
                spill(small_, t, 0);
        } else if (m < ExactSum::kMaxTerm) {
            // ExactSum::add's second case: (hi * 2^32 + lo) units of 2^-48.
            const double a = x * 0x1p16;
            const auto hi = static_cast<std::int64_t>(a);
            const auto lo = static_cast<std::int64_t>((a - static_cast<double>(hi)) * 0x1p32);
            if (__builtin_add_overflow(high_, hi, &high_)) [[unlikely]]
                spill(high_, hi, 32);
            if (__builtin_add_overflow(low_, lo, &low_)) [[unlikely]]
                spill(low_, lo, 0);
        } else {
            add_wide(x);
        }
    }
    /// The sum of the terms added.
    ExactSum sum() const noexcept {
        ExactSum s = wide_;
        s.add_fixed(small_);
        s.add_fixed(static_cast<ExactSum::Int128>(high_) * (ExactSum::Int128{1} << 32));
        s.add_fixed(low_);
        return s;
    }

  private:
    // Out of line, so that a loop of add() keeps only its integers in registers.
    [[gnu::noinline, gnu::cold]] void add_wide(double x) noexcept { wide_.add(x); }
    /// part holds its old total plus t wrapped to 64 bits (a total in units of 2^shift fixed-point
    /// units): the old total goes to wide_, part restarts at t.
    [[gnu::noinline, gnu::cold]] void spill(std::int64_t& part, std::int64_t t,
                                            int shift) noexcept {
        const auto old = static_cast<std::int64_t>(static_cast<std::uint64_t>(part) -
                                                   static_cast<std::uint64_t>(t));
        wide_.add_fixed(static_cast<ExactSum::Int128>(old) * (ExactSum::Int128{1} << shift));
        part = t;
    }

    std::int64_t small_ = 0;  // fixed-point sum of the small terms since the last spill
    std::int64_t high_ = 0;   // the medium terms' integer parts (units of 2^-16) since theirs
    std::int64_t low_ = 0;    // and their fractions' 32 bits (units of 2^-48)
    ExactSum wide_;           // the rest
};

}  // namespace rotor::core
