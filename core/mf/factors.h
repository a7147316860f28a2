// A dense factor matrix of matrix factorization: W (users x K) or H stored as items x K, one
// K-vector per user or item, so that A ≈ W Hᵀ (docs/mf.md).
//
// Storage is float, arithmetic is double. float halves the memory and the bytes an H slice
// carries around the ring, and is what LIBMF stores; every kernel reads the floats into double
// (a product of two floats is exact in double) and accumulates in double, or exactly
// (core::ExactSum) where a sum is split over parts, so that 1 and P parts give bitwise the same
// factors. A coordinate update computes its new value in double and stores it rounded once to
// float.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rotor::mf {

/// Largest K accepted (rows of K floats; K * rows stays far from 2^64 bytes).
inline constexpr std::uint32_t kMaxRank = 1U << 20;

/// rows x K floats, row-major: row i is the K-vector of user or item i. A value type; not
/// thread-safe, but distinct rows may be written by distinct threads.
class Factors {
  public:
    Factors() = default;
    /// rows x k zeros. Throws ConfigError("--rank") when k is 0 or above kMaxRank.
    Factors(std::uint32_t rows, std::uint32_t k);

    std::uint32_t rows() const { return rows_; }
    std::uint32_t k() const { return k_; }

    std::span<float> row(std::uint32_t i) {
        return {data_.data() + static_cast<std::size_t>(i) * k_, k_};
    }
    std::span<const float> row(std::uint32_t i) const {
        return {data_.data() + static_cast<std::size_t>(i) * k_, k_};
    }
    float& at(std::uint32_t i, std::uint32_t k) {
        return data_[static_cast<std::size_t>(i) * k_ + k];
    }
    float at(std::uint32_t i, std::uint32_t k) const {
        return data_[static_cast<std::size_t>(i) * k_ + k];
    }
    /// All rows x K values, row-major (for messages and model files).
    std::span<float> values() { return data_; }
    std::span<const float> values() const { return data_; }

    /// Copies factor k of every row into out (size rows()): CCD works one factor at a time on a
    /// contiguous vector instead of striding through the rows.
    void get_column(std::uint32_t k, std::span<float> out) const;
    /// Writes factor k of every row from v (size rows()).
    void set_column(std::uint32_t k, std::span<const float> v);

    /// Fills every value uniformly between lo and hi, row i from Rng::from({seed, stream, id(i)})
    /// drawn in the order k = 0..K-1, where id(i) = global_ids[i], or i when global_ids is empty.
    /// So a row's initial values depend on its global id only, not on how the rows are split over
    /// ranks or threads. LIBMF starts from [0, 1/sqrt(K)); CCD++ from W random and H = 0.
    void init_uniform(std::uint64_t seed, std::uint64_t stream, float lo, float hi,
                      std::span<const std::uint32_t> global_ids = {});

    std::size_t memory_bytes() const { return data_.capacity() * sizeof(float); }
    bool operator==(const Factors& o) const = default;

  private:
    std::uint32_t rows_ = 0;
    std::uint32_t k_ = 0;
    std::vector<float> data_;
};

/// Σ_k a_k b_k in double, over 4 interleaved partial sums added in a fixed order: the same
/// result wherever it runs, and 4 independent chains the compiler can schedule (a single
/// chain would wait on each addition's latency). a and b have the same size.
inline double dot(std::span<const float> a, std::span<const float> b) {
    double s[4] = {0, 0, 0, 0};
    const std::size_t n = a.size();
    std::size_t k = 0;
    for (; k + 4 <= n; k += 4) {
        for (std::size_t l = 0; l < 4; ++l) {
            s[l] += static_cast<double>(a[k + l]) * static_cast<double>(b[k + l]);
        }
    }
    for (; k < n; ++k) s[0] += static_cast<double>(a[k]) * static_cast<double>(b[k]);
    return (s[0] + s[1]) + (s[2] + s[3]);
}

}  // namespace rotor::mf
