// An O(1)-per-proposal Metropolis-Hastings sampler for LDA (LightLDA's cycle of a document and a
// word proposal, Yuan et al., WWW 2015), in word-major form, whose stationary distribution is
// exactly the collapsed conditional (docs/sampler.md, "The Metropolis-Hastings sampler").
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "core/lda/alias_table.h"
#include "core/lda/doc_token_index.h"
#include "core/lda/lda_params.h"
#include "core/lda/sampler.h"

namespace rotor::lda {

/// Resamples each token i (word w, doc d, topic z) with `cycles` cycles of two Metropolis-
/// Hastings steps targeting p(k) ∝ (n_wk+β)(n_dk+α_k)/(n_k+Vβ), all counts without i:
///  - doc proposal q(k | s) ∝ n_dk + [k = s] + α_k (s the chain's current topic): the topic of a
///    uniformly drawn token of d (the DocTokenIndex; i's own slot reads s), or with probability
///    Σα / (n_d + Σα) a draw from α. The doc terms cancel: accept with
///    min(1, (n_wt+β)(n_s+Vβ) / ((n_ws+β)(n_t+Vβ))), O(1) from the unpacked word row.
///  - word proposal q(k) ∝ n_wk + β from the LIVE word row: the word's counts outside this block
///    (static while the word is sampled: an alias table built at the word's start), the current
///    topic of a uniformly drawn other token of w in the block, or a uniform topic (mass Kβ). The
///    word terms cancel: accept with min(1, (n_dt+α_t)(n_s+Vβ) / ((n_ds+α_s)(n_t+Vβ))), where
///    n_dt is read from the doc row (sorted by decreasing count: probable topics come first).
/// A token's proposals are all drawn before its chain runs (they do not depend on it), so one
/// pass over its doc row finds the counts of every topic the chain can visit.
/// Every proposal is a function of the other tokens' current topics only, and each ratio uses
/// its exact probability, so each step leaves the conditional invariant (no stale tables).
///
/// Requirements: `index` was built from the grid of the blocks sampled and is current (every
/// topic change made by another sampler synced); this sampler keeps it current. Costs per token:
/// O(cycles) draws plus one pass over the doc row (to the last proposed topic present; O(K_d)
/// when a word proposal is absent) and, when the topic changes, the doc row's update; per word and
/// block O(K_w + tokens) (O(K) for a dense row). Scratch O(K), owned: ONE SAMPLER PER THREAD.
class MhSampler final : public Sampler {
  public:
    static constexpr std::uint32_t kDefaultCycles = 2;
    static constexpr std::uint32_t kMaxCycles = 100;
    /// `params` valid, vocab_size is V of Vβ (global), cycles >= 1 (--mh-steps). `index` must
    /// outlive the sampler. Throws ConfigError for invalid params or cycles not in
    /// [1, kMaxCycles].
    MhSampler(const LdaParams& params, std::uint32_t vocab_size, DocTokenIndex& index,
              std::uint32_t cycles = kDefaultCycles);

    std::uint64_t sample_block(TokenBlock& block, DocTopicTable& doc_topic,
                               WordTopicTable& word_topic, std::span<TotalCount> topic_totals,
                               Rng& rng, const std::atomic<bool>* stop) override;

    /// Proposals and acceptances since construction, and the doc-row lookups of the word
    /// proposals with the entries they scanned. Diagnostics for benchmarks.
    struct Stats {
        std::uint64_t doc_proposals = 0;
        std::uint64_t doc_accepted = 0;
        std::uint64_t word_proposals = 0;
        std::uint64_t word_accepted = 0;
        std::uint64_t lookups = 0;
        std::uint64_t lookup_steps = 0;
    };
    const Stats& stats() const { return stats_; }

  private:
    /// Loads word w's row (dense in place, sparse unpacked into word_dense_) and its nonzeros
    /// into word_nz_; builds the alias table of the counts outside the block's tokens
    /// [tb, te). Returns the row.
    Count* load_word(const TokenBlock& block, std::size_t wi, WordTopicTable& word_topic);
    /// Packs the row back (sparse) and clears the scratch.
    void store_word(WordId w, Count* nw, WordTopicTable& word_topic);

    DocTokenIndex& index_;
    std::uint32_t num_topics_;
    std::uint32_t cycles_;
    double beta_;
    double vbeta_;
    bool symmetric_;
    double alpha_sym_;
    double alpha_sum_;
    std::vector<double> alpha_;
    AliasTable alpha_table_;  // over α_k (asymmetric α only)
    // Scratch, sized K.
    std::vector<double> inv_;          // 1 / (n_k + Vβ)
    std::vector<Count> word_dense_;    // unpacked sparse word row; all zero between words
    std::vector<std::uint8_t> in_nz_;  // topic is in word_nz_; all zero between words
    std::vector<TopicId> word_nz_;     // topics with n_wk > 0 at some point of this word
    std::vector<Count> local_;         // the block's tokens of the word per topic; zero between
    // The word's counts outside the block: topics, weights, alias table, total.
    std::vector<TopicId> out_topics_;
    std::vector<double> out_weights_;
    AliasTable out_table_;
    double out_total_ = 0;
    std::vector<double> predrawn_;  // doc-proposal uniforms of the next tokens, cycles_ each
    // One token's chain: its proposals, and the doc-row counts of the topics they name (mark_[k]
    // is k's index in marked_/row_count_, 0 when unmarked; all zero between tokens).
    std::vector<std::uint8_t> mark_;
    std::vector<TopicId> marked_;
    std::vector<Count> row_count_;
    std::vector<std::uint32_t> row_at_;  // and their positions in the row (kAbsent: not in it)
    std::vector<TopicId> doc_prop_;
    std::vector<TopicId> word_prop_;
    Stats stats_;
};

}  // namespace rotor::lda
