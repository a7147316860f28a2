// The seam between the trainer and a Gibbs sampling kernel: SparseLdaSampler (exact Gibbs) and
// MhSampler (Metropolis-Hastings, O(1) per proposal), chosen by --sampler.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/base/rng.h"
#include "core/base/types.h"
#include "core/lda/doc_topic_table.h"
#include "core/lda/token_block.h"
#include "core/lda/word_topic_table.h"

namespace rotor::lda {

/// The kernel a run samples with (--sampler): SparseLdaSampler, MhSampler, or auto (MhSampler
/// while the model is dense, then SparseLdaSampler; apps/lda decides from measured costs).
enum class SamplerKind { kSparse, kMh, kAuto };
/// "sparse", "mh" or "auto".
std::string_view sampler_name(SamplerKind kind);
/// The kind named by sampler_name; throws ConfigError("--sampler") for any other name.
SamplerKind parse_sampler(std::string_view name);

/// Resamples the topic of every token of one block (collapsed Gibbs sampling). An object holds
/// per-thread scratch: use ONE SAMPLER PER THREAD; a sampler is not thread-safe, but several
/// samplers may run at once on blocks that share no doc row and no word row.
class Sampler {
  public:
    virtual ~Sampler() = default;

    /// Samples the block's tokens word by word, updating block.topics, the doc rows and word
    /// rows of the block's docs and words, and `topic_totals` (size K, this thread's private
    /// copy of n_k). `stop`, when non-null, is polled between words: once it reads true the
    /// remaining tokens are left as they are. Returns the number of tokens sampled.
    /// SparseLdaSampler also draws unassigned tokens (kUnassignedTopic) and adds them;
    /// MhSampler requires every token of the block's docs assigned.
    virtual std::uint64_t sample_block(TokenBlock& block, DocTopicTable& doc_topic,
                                       WordTopicTable& word_topic,
                                       std::span<TotalCount> topic_totals, Rng& rng,
                                       const std::atomic<bool>* stop) = 0;
};

}  // namespace rotor::lda
