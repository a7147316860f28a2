// Log-likelihood of an LDA state, exactly as docs/architecture.md ("Metrics keys") defines it:
//   loglik_word = K[lnΓ(Vβ) − V lnΓ(β)] + Σ_k[Σ_w lnΓ(n_wk+β) − lnΓ(n_k+Vβ)]
//   loglik      = loglik_word + D[lnΓ(Σα) − Σ_k lnΓ(α_k)] + Σ_d[Σ_k lnΓ(n_dk+α_k) − lnΓ(n_d+Σα)]
// (Σα = Kα for a symmetric prior). Zero cells cost nothing: lnΓ(0+β) and lnΓ(0+α_k) are folded
// into the constants, so a partial sum runs over the nonzero cells only.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/types.h"
#include "core/lda/doc_topic_table.h"
#include "core/lda/lda_params.h"
#include "core/lda/word_topic_table.h"

namespace rotor::lda {

/// lnΓ(n + offset) − lnΓ(offset) for integers n: a lookup table below `size`, std::lgamma above.
/// Immutable after construction: safe to share between threads.
class LgammaTable {
  public:
    LgammaTable() = default;
    LgammaTable(double offset, std::size_t size);
    double operator()(std::uint64_t n) const;
    double offset() const { return offset_; }

  private:
    double offset_ = 1;
    double base_ = 0;  // lnΓ(offset)
    std::vector<double> table_;
};

/// The two metrics of one evaluation.
struct LogLikelihood {
    double loglik_word = 0;  ///< log p(w | z)
    double loglik = 0;       ///< log p(w, z)
};

/// Evaluates the log-likelihood in parts so the trainer can sum ranges of words and docs in
/// parallel and combine() the sums. Immutable after construction: safe to share between threads;
/// each part only reads its table range (it must not be written meanwhile).
class Likelihood {
  public:
    /// vocab_size is V of the formula (the global vocabulary size). Validates params. D needs
    /// no argument: its constant is folded into doc_part, doc by doc.
    Likelihood(const LdaParams& params, std::uint32_t vocab_size);

    /// Σ over nonzero cells of words [word_begin, word_end): lnΓ(n_wk+β) − lnΓ(β).
    double word_part(const WordTopicTable& table, WordId word_begin, WordId word_end) const;
    /// Σ over docs [doc_begin, doc_end) of Σ_{k: n_dk>0}[lnΓ(n_dk+α_k) − lnΓ(α_k)]
    ///   + lnΓ(Σα) − lnΓ(n_d+Σα).
    double doc_part(const DocTopicTable& table, DocId doc_begin, DocId doc_end) const;
    /// K lnΓ(Vβ) − Σ_k lnΓ(n_k+Vβ), from the (reconciled) topic totals.
    double topic_part(std::span<const TotalCount> topic_totals) const;
    /// Both metrics from the summed word parts, summed doc parts and the topic totals.
    LogLikelihood combine(double word_part_sum, double doc_part_sum,
                          std::span<const TotalCount> topic_totals) const;
    /// Everything in one call, single-threaded.
    LogLikelihood evaluate(const WordTopicTable& word_topic, const DocTopicTable& doc_topic,
                           std::span<const TotalCount> topic_totals) const;

  private:
    std::uint32_t num_topics_;
    double vbeta_;
    double alpha_sum_;
    bool symmetric_;
    std::vector<double> alpha_;     // α_k
    std::vector<double> lg_alpha_;  // lnΓ(α_k)
    LgammaTable beta_table_;        // lnΓ(n+β) − lnΓ(β)
    LgammaTable alpha_table_;       // lnΓ(n+α) − lnΓ(α), symmetric α only
    LgammaTable alpha_sum_table_;   // lnΓ(n+Σα) − lnΓ(Σα)
};

}  // namespace rotor::lda
