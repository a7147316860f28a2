// The sequential block proximal gradient of L1-regularised logistic regression over parts of
// the examples (docs/logreg.md, "Algorithm"): the reference that the delayed, distributed
// trainer with τ = 0 reproduces bit for bit. Iteration t picks block block_at(t); every part
// pushes g_b and u_b (objective.h) into exact sums; the total gives w_b's proximal step; every
// part updates its margins. Because pushes are exact sums and margins see the same operations in
// the same order, 1 part and P parts give bitwise the same w.
// Single-threaded; borrows the parts.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/logreg/objective.h"

namespace rotor::logreg {

/// Options of BlockProx. A plain struct.
struct BlockProxOptions {
    double lambda = 1;         ///< λ > 0 (liblinear's C = 1/λ)
    std::uint32_t blocks = 1;  ///< B >= 1: features split by split_blocks(keys, B, seed, groups)
    std::uint64_t seed = 1;    ///< block assignment and block order
    double eta = 1;            ///< step scale η in (0, 1] (1 with Curvature::kBound descends)
    Curvature curvature = Curvature::kBound;
    double max_step = 0;  ///< > 0: each step's change of a weight clamped to ±max_step (prox_step)
    /// Feature groups (--block-file; shared, immutable): blocks 0..G-1, the hash blocks after.
    std::shared_ptr<const BlockGroups> groups;
};

/// The block of iteration t: pass t / B visits the blocks in a permutation drawn from
/// Rng::from({seed, pass}). The same on every rank.
std::uint32_t block_at(std::uint64_t t, std::uint32_t blocks, std::uint64_t seed);

/// block_at() for a run of iterations: draws each pass's permutation once (block_at draws it on
/// every call, O(B)). The same blocks as block_at. A value type; not thread-safe.
class BlockOrder {
  public:
    BlockOrder(std::uint32_t blocks, std::uint64_t seed);
    /// block_at(t, blocks, seed).
    std::uint32_t at(std::uint64_t t);

  private:
    std::uint32_t blocks_;
    std::uint64_t seed_;
    std::uint64_t pass_ = ~std::uint64_t{0};
    std::vector<std::uint32_t> order_;
};

/// Objective and optimality of the current w. A plain struct.
struct ProxEvaluation {
    double objective = 0;      ///< Σ log-loss + λ‖w‖₁ (intercept unpenalised)
    double loss = 0;           ///< Σ log-loss
    double kkt_violation = 0;  ///< kkt_violation() of the full gradient
    std::uint64_t nonzeros = 0;
};

/// The solver over `parts` (borrowed; their margins must match w = 0 at construction).
class BlockProx {
  public:
    BlockProx(std::span<Shard> parts, const BlockProxOptions& options);

    /// Runs iteration t: the block block_at(t), pushed, pulled, applied.
    void step(std::uint64_t t);
    /// The objective and KKT violation (one push of every key on every part).
    ProxEvaluation evaluate();

    /// Every key of the parts, increasing, and w aligned with them.
    std::span<const std::uint64_t> keys() const noexcept { return keys_; }
    std::span<const double> weights() const noexcept { return w_; }
    /// The keys of block b, increasing.
    std::span<const std::uint64_t> block(std::uint32_t b) const { return blocks_.at(b); }

  private:
    std::span<Shard> parts_;
    BlockProxOptions options_;
    std::vector<std::uint64_t> keys_;
    std::vector<double> w_;
    std::vector<std::vector<std::uint64_t>> blocks_;
    std::vector<std::vector<std::size_t>> block_index_;  ///< block key t's index in keys_
    std::vector<std::vector<ColumnSlices>> slices_;      ///< [block][part]: the block's columns
    BlockOrder order_;
    BlockScratch scratch_;                 ///< of evaluate()
    std::vector<BlockScratch> scratches_;  ///< one per part (it caches the part's slopes)
    std::vector<core::ExactSum> g_, u_, pg_, pu_;
    std::vector<double> deltas_;
};

}  // namespace rotor::logreg
