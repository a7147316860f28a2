// Random number generation: xoshiro256** (Blackman & Vigna, 2018), seeded by SplitMix64.
//
// Seeds are derived from a tuple (seed, stream...) and never from a thread id, so that a run's
// randomness depends only on the user's seed and on which piece of work is being done; that is
// what makes --deterministic possible (docs/architecture.md, "Randomness: seed streams").
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>

namespace rotor {

/// SplitMix64 step: a good 64-bit mixer, used to expand seeds.
inline std::uint64_t splitmix64(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/// A small, fast generator. Not thread-safe: one per thread or per block. Copyable; its whole
/// state is `state()`, so it can be checkpointed.
class Rng {
  public:
    using State = std::array<std::uint64_t, 4>;

    explicit Rng(std::uint64_t seed = 0) noexcept { reseed({seed}); }
    /// Seeds from a tuple, e.g. Rng::from({seed, iteration, block}).
    static Rng from(std::initializer_list<std::uint64_t> key) noexcept {
        Rng r;
        r.reseed(key);
        return r;
    }
    /// Rng::from() with the tuple in a span (e.g. a caller's words plus a worker index); the
    /// same words give the same generator as Rng::from().
    static Rng from_words(std::span<const std::uint64_t> key) noexcept {
        Rng r;
        r.reseed_words(key);
        return r;
    }
    void reseed(std::initializer_list<std::uint64_t> key) noexcept {
        reseed_words(std::span<const std::uint64_t>(key.begin(), key.size()));
    }
    void reseed_words(std::span<const std::uint64_t> key) noexcept {
        std::uint64_t x = 0x2545F4914F6CDD1DULL;
        for (std::uint64_t k : key) {
            x ^= k;
            x = splitmix64(x);
        }
        for (auto& w : s_) w = splitmix64(x);
    }

    std::uint64_t next() noexcept {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }
    /// Uniform double in [0, 1), 53 random bits.
    double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    /// Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias < n / 2^64).
    std::uint64_t below(std::uint64_t n) noexcept {
        __extension__ using U128 = unsigned __int128;
        return static_cast<std::uint64_t>((static_cast<U128>(next()) * n) >> 64);
    }

    const State& state() const noexcept { return s_; }
    void set_state(const State& s) noexcept { s_ = s; }

    // UniformRandomBitGenerator, so std::shuffle and <random> distributions accept it.
    using result_type = std::uint64_t;
    static constexpr result_type min() { return 0; }
    static constexpr result_type max() { return ~result_type{0}; }
    result_type operator()() noexcept { return next(); }

  private:
    static std::uint64_t rotl(std::uint64_t x, int k) noexcept {
        return (x << k) | (x >> (64 - k));
    }
    State s_{};
};

}  // namespace rotor
