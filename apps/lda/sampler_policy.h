// Which kernel samples each block of an LDA run (--sampler sparse|mh|auto): for auto, the
// Metropolis-Hastings kernel while the model is dense and SparseLDA once it is cheaper, decided
// from measured costs (docs/sampler.md, "The Metropolis-Hastings sampler").
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "core/lda/sampler.h"

namespace rotor::lda {

/// The kernel of one block, and whether a SparseLDA block must copy its topics into the
/// doc-token index afterwards (while MhSampler may still run).
struct BlockChoice {
    bool mh = false;
    bool sync_index = false;
};

/// sparse and mh: every block with that kernel. auto, in a dynamic run: MhSampler first; from the
/// second iteration on, the first block started in each iteration is a probe sampled with
/// SparseLDA, and once a probe's wall seconds per token are at most those of the MhSampler blocks
/// of the previous iteration, every later block is SparseLDA's (the switch is made once: the run
/// ends with the exact Gibbs kernel). auto, deterministic (--deterministic, whose model must not
/// depend on timing): each iteration runs SparseLDA when the token-weighted mean number of topics
/// in a doc row is at most kDeterministicSwitch times its value under uniformly random topics,
/// else mh: a function of the state alone, so the same at any thread count and after a resume
/// (no hysteresis to checkpoint; in practice the statistic only falls).
/// Thread-safe: start_block/end_block may be called from every worker at once.
class SamplerPolicy {
  public:
    /// The deterministic switch point: mean doc-row length / its value after random
    /// initialisation. Not calibrated: a guess that docs/sampler.md says is still to be measured.
    static constexpr double kDeterministicSwitch = 0.5;

    SamplerPolicy(SamplerKind kind, bool deterministic)
        : kind_(kind), deterministic_(deterministic) {}
    SamplerKind kind() const { return kind_; }
    /// Whether MhSampler may still run (the doc-token index must be kept current).
    bool index_in_use() const;
    /// Deterministic runs, between iterations: `mean_doc_topics` is the token-weighted mean
    /// doc-row length now, `initial` its value under uniformly random topics.
    void plan_iteration(double mean_doc_topics, double initial);
    /// Every block of iterations 1..iter is SparseLDA's whatever the kind (--init sequential:
    /// only SparseLDA draws unassigned tokens); a block copies its topics into the doc-token
    /// index when MhSampler may run later. Call before the first block starts.
    void sparse_through(std::uint32_t iter) { sparse_through_ = iter; }
    /// A block of iteration `iter` (1-based, the run's numbering) starts.
    BlockChoice start_block(std::uint32_t iter);
    /// That block ended having sampled `tokens` in `seconds` (wall).
    void end_block(std::uint32_t iter, bool mh, std::uint64_t tokens, double seconds);
    /// The kernels that ran in iteration `iter`: "mh", "sparse" or "mh+sparse"; forgets the
    /// iteration's tallies.
    std::string take_label(std::uint32_t iter);
    /// Whether auto has switched to SparseLDA (for good, except in deterministic runs).
    bool switched() const;

  private:
    struct Tally {
        std::uint64_t mh_tokens = 0;
        double mh_seconds = 0;
        std::uint64_t sparse_tokens = 0;
    };
    const SamplerKind kind_;
    const bool deterministic_;
    mutable std::mutex mutex_;
    bool switched_ = false;
    std::uint32_t probed_ = 0;  // the last iteration that had its probe
    std::uint32_t sparse_through_ = 0;
    std::map<std::uint32_t, Tally> tally_;
};

}  // namespace rotor::lda
