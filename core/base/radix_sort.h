// Least-significant-digit radix sort of 32-bit keys: a few linear passes (11 bits a pass, only
// as many passes as the largest key needs) instead of std::sort's n log n comparisons. For the
// thousands of coordinates of a Lasso round, sorted so the round reads its columns in address
// order (docs/lasso.md, "Rounds in address order").
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rotor {

/// Sorts keys ascending; scratch is resized to keys.size() and its contents are left undefined.
inline void radix_sort(std::span<std::uint32_t> keys, std::vector<std::uint32_t>& scratch) {
    constexpr int kBits = 11;
    constexpr std::size_t kBuckets = std::size_t{1} << kBits;
    if (keys.size() < 2) return;
    std::uint32_t largest = 0;
    for (const std::uint32_t k : keys) largest = std::max(largest, k);
    scratch.resize(keys.size());
    std::uint32_t* from = keys.data();
    std::uint32_t* to = scratch.data();
    int shift = 0;
    for (; shift < 32 && (largest >> shift) != 0; shift += kBits) {
        std::array<std::size_t, kBuckets> count{};
        for (std::size_t i = 0; i < keys.size(); ++i) ++count[(from[i] >> shift) & (kBuckets - 1)];
        std::size_t at = 0;
        for (std::size_t& c : count) {
            const std::size_t n = c;
            c = at;
            at += n;
        }
        for (std::size_t i = 0; i < keys.size(); ++i)
            to[count[(from[i] >> shift) & (kBuckets - 1)]++] = from[i];
        std::swap(from, to);
    }
    if (from != keys.data()) std::copy(from, from + keys.size(), keys.data());
}

}  // namespace rotor
