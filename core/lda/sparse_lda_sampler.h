// SparseLDA (Yao, Mimno & McCallum, KDD 2009) in its word-major form, for word-major blocks.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "core/lda/doc_bucket.h"
#include "core/lda/lda_params.h"
#include "core/lda/sampler.h"

namespace rotor::lda {

/// Word-major SparseLDA. The full conditional of a token of word w in doc d,
///   p(z = k) ∝ (n_wk + β)(n_dk + α_k) / (n_k + Vβ),
/// is split into three buckets:
///   s = Σ_k α_k β / (n_k + Vβ)          smoothing: global, kept up to date incrementally;
///   r = Σ_k α_k n_wk / (n_k + Vβ)       word: over the word row's nonzeros, computed once per
///                                        word and updated incrementally over its tokens;
///   q = Σ_k n_dk (n_wk + β)/(n_k + Vβ)  doc: over the doc row's nonzeros, O(K_d) per token.
/// The word row is unpacked into a dense scratch array (or used in place when it is dense) at
/// the start of each word and packed back at its end. A token is first removed from the word
/// row and the totals only; the doc row is touched only if the token changes topic. When
/// consecutive tokens share (word, doc) and topic, and the previous draw kept its topic, the state
/// seen by the next token is exactly the previous one, so its buckets are reused without
/// recomputation. An unassigned token (kUnassignedTopic, --init sequential) has nothing to
/// remove: it is drawn from the counts as they are and added, so a first sweep over unassigned
/// tokens draws each given the ones drawn before it.
///
/// Costs per token: O(K_d) + O(K_w) on a word-bucket hit + O(K/4096 + 128) on a smoothing hit
/// (a search over groups of 64 topics, and over groups of 64 groups when K > 4096).
/// Scratch: O(K) doubles, owned by the object: ONE SAMPLER PER THREAD. Not thread-safe.
class SparseLdaSampler final : public Sampler {
  public:
    /// `params` must be valid; vocab_size is V of Vβ (the GLOBAL vocabulary size, also when
    /// the word-topic table holds only a slice of it). Throws ConfigError if params are invalid.
    SparseLdaSampler(const LdaParams& params, std::uint32_t vocab_size);

    std::uint64_t sample_block(TokenBlock& block, DocTopicTable& doc_topic,
                               WordTopicTable& word_topic, std::span<TotalCount> topic_totals,
                               Rng& rng, const std::atomic<bool>* stop) override;

    /// The exact full conditional p(z = k | rest), normalised, from dense rows: doc_counts and
    /// word_counts (size K) and topic_totals must already EXCLUDE the token being resampled.
    /// For tests and for other samplers' reference.
    static std::vector<double> conditional(std::span<const Count> doc_counts,
                                           std::span<const Count> word_counts,
                                           std::span<const TotalCount> topic_totals,
                                           const LdaParams& params, std::uint32_t vocab_size);

    /// Bucket choices made since construction: doc, word, smoothing, and draws that reused the
    /// previous token's buckets. Diagnostics for benchmarks.
    struct Stats {
        std::uint64_t doc = 0;
        std::uint64_t word = 0;
        std::uint64_t smoothing = 0;
        std::uint64_t reused = 0;
    };
    const Stats& stats() const { return stats_; }

    /// Computes the doc bucket with `f` instead of the fastest version this CPU runs (every
    /// version gives the same bits, so the same samples): for tests and A/B benchmarks.
    void use_doc_masses(detail::DocMassesFn f) { doc_masses_ = f; }

  private:
    // A word-bucket draw through the group sums: u in [0, r); kNoTopic if rounding finds none.
    TopicId word_draw_grouped(double u, const Count* nw, const double* ainv, const double* rgroup,
                              const double* rsuper) const;

    std::uint32_t num_topics_;
    double beta_;
    double vbeta_;
    detail::DocMassesFn doc_masses_;  // the doc bucket's masses: AVX2 when the CPU has it
    std::vector<double> alpha_;       // α_k
    // Scratch, sized K.
    std::vector<double> inv_;           // 1 / (n_k + Vβ)
    std::vector<double> ainv_;          // α_k / (n_k + Vβ)
    std::vector<double> coef_;          // (n_wk + β) / (n_k + Vβ) for the current word
    std::vector<double> smooth_group_;  // smoothing mass per group of 64 topics
    std::vector<double> smooth_super_;  // smoothing mass per group of 64 groups
    // K > 4096 only: the current word's bucket mass per group and super-group, kept for words
    // with many nonzero topics; all zero between words.
    std::vector<double> word_group_;
    std::vector<double> word_super_;
    std::vector<Count> word_dense_;    // unpacked sparse word row; all zero between words
    std::vector<std::uint8_t> in_nz_;  // topic is in word_nz_; all zero between words
    std::vector<TopicId> word_nz_;     // topics with n_wk > 0 at some point of this word
    std::vector<double> doc_cum_;      // doc bucket: the mass of each entry of the doc row
    Stats stats_;
};

}  // namespace rotor::lda
