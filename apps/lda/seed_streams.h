// Internal to the LDA trainer's sources: the seed streams. Every random choice derives from
// (seed, stream, ...), never from a thread id: block b of iteration t samples with
// Rng::from({seed, sample stream, t, [rank,] b}), so the draws do not depend on the worker that
// runs the block. One process keeps the streams of rotor's single-node trainer, so that its
// models do not change; a rank of P > 1 has its own (the rank is folded in).
#pragma once

#include <cstdint>

namespace rotor::lda::detail {

// One process (P = 1).
inline constexpr std::uint64_t kLocalSampleStream = 0x53414d50;  // "SAMP": block b, iteration t
inline constexpr std::uint64_t kLocalPickStream = 0x5049434b;    // "PICK": which free block next
inline constexpr std::uint64_t kLocalInitStream = 0x494e4954;    // "INIT": initial topics
inline constexpr std::uint64_t kLocalRowStream = 0x524f5753;     // "ROWS": doc groups of the grid

// A rank of P > 1.
inline constexpr std::uint64_t kRingSampleStream = 0x44534d50;  // "DSMP": block b of rank p
inline constexpr std::uint64_t kRingPickStream = 0x4450434b;    // "DPCK": which free block next
inline constexpr std::uint64_t kRingInitStream = 0x44494e54;    // "DINT": initial topics of p
inline constexpr std::uint64_t kRingRowStream = 0x44524f57;     // "DROW": doc groups of rank p
inline constexpr std::uint64_t kRankStream = 0x4452414e;        // "DRAN": docs across ranks

}  // namespace rotor::lda::detail
