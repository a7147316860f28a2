// A worker of the delayed block proximal gradient (apps/logreg/trainer.h; docs/logreg.md,
// "The delayed trainer"): its part of the examples, its blocks (its keys split by block_of) and
// its copy of w over its keys. For iteration t it computes the values to push (the limbs of the
// exact sums g_b and u_b, core/logreg/objective.h) and takes the pulled w_b into w and the
// margins. Borrows the part; not thread-safe (one worker per part).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/logreg/block_prox.h"

namespace rotor::logreg {

/// Values pushed per key: g's ExactSum limbs, then u's.
inline constexpr std::size_t kPushWidth = 2 * ExactSum::kLimbs;

/// A worker's state: its part, its blocks and its copy of w over its keys.
class Worker {
  public:
    /// `part` is borrowed; its margins must match w = 0.
    Worker(Shard& part, const BlockProxOptions& options);

    /// The block of iteration t; sets `values` to kPushWidth values per key of the block.
    std::uint32_t push_values(std::uint64_t t, std::vector<double>& values);
    /// Takes block b's pulled weights (one per key of block(b)): changes w and the margins.
    void apply(std::uint32_t b, std::span<const double> pulled);
    /// The keys of block b, increasing.
    std::span<const std::uint64_t> block(std::uint32_t b) const { return blocks_[b]; }
    /// w over the part's keys (aligned with part.keys()).
    const std::vector<double>& weights() const { return w_; }

  private:
    Shard& part_;
    BlockProxOptions options_;
    std::vector<double> w_;
    std::vector<std::vector<std::uint64_t>> blocks_;
    std::vector<std::vector<std::size_t>> index_;  ///< block key t's index in part.keys()
    BlockScratch scratch_;
};

}  // namespace rotor::logreg
