// Held-out evaluation by document completion (docs/evaluation.md; Wallach et al. 2009, sec. 4.3):
// for each held-out document, the tokens at EVEN positions (0, 2, 4, ... of its token sequence)
// fit θ_d by (sparse) Gibbs fold-in with φ fixed, and each token at an ODD position is scored by
// log Σ_k θ_dk φ_kw. The result is the log-likelihood per scored token and the perplexity
// exp(−loglik per token).
//
// The per-document kernel is single-threaded; HeldoutEvaluator::evaluate spreads documents over
// a caller-supplied RangeLoop (apps pass sched::Runtime::parallel_for) and sums per-document
// results in document order, so the result is the same at any thread count.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/rng.h"
#include "core/base/types.h"
#include "core/corpus/corpus.h"
#include "core/lda/fold_in_sampler.h"
#include "core/lda/inference.h"
#include "core/lda/lda_params.h"
#include "core/lda/model.h"

namespace rotor::lda {

class WordTopicTable;

/// Totals of one held-out evaluation.
struct HeldoutResult {
    std::uint64_t docs = 0;           ///< documents with at least one scored token
    std::uint64_t fit_tokens = 0;     ///< even-position tokens that fitted θ
    std::uint64_t scored_tokens = 0;  ///< odd-position tokens scored
    double loglik = 0;                ///< Σ over scored tokens of ln Σ_k θ_dk φ_kw (nats)

    /// loglik / scored_tokens (0 when nothing was scored).
    double loglik_per_token() const;
    /// exp(−loglik_per_token()).
    double perplexity() const;
};

/// Document completion of one document at a time, with its scratch (O(K + length)).
/// Not thread-safe: one per thread; several may share `tables` (φ, α and the sparse fold-in
/// tables of the document's words), which must outlive it.
class DocumentCompleter {
  public:
    explicit DocumentCompleter(const FoldInTables& tables);

    /// Fits θ on the even positions of `doc` (words with tables) and adds the odd positions'
    /// log-probabilities to `out` (and the token counts; docs += 1 if any token was scored).
    void complete(std::span<const WordId> doc, const FoldInOptions& options, Rng& rng,
                  HeldoutResult& out);

  private:
    const TopicWordDistribution& phi_;
    FoldInSampler sampler_;
    std::vector<WordId> fit_;
    std::vector<double> theta_;
};

/// Held-out evaluation of a fixed held-out corpus against changing models: built once (e.g. by
/// the trainer before its first iteration), evaluate() may be called every evaluation.
/// Immutable after construction: evaluate() is const and may run concurrently with itself.
class HeldoutEvaluator {
  public:
    /// `heldout` must already be expressed in the training vocabulary (see map_to_model());
    /// its documents' generators are Rng::from({options.seed, label}). Validates `options`
    /// (ConfigError).
    HeldoutEvaluator(core::Corpus heldout, FoldInOptions options);

    const core::Corpus& corpus() const noexcept { return corpus_; }
    const FoldInOptions& options() const noexcept { return options_; }
    /// The distinct words of the held-out corpus, ascending: the only φ rows evaluate() reads.
    std::span<const WordId> words() const noexcept { return words_; }

    /// Evaluates against a fixed φ (K topics, V ≥ corpus().num_words()) and α (size K): builds
    /// the sparse fold-in tables of words() (over `loop`), then folds documents in over `loop`.
    /// Throws ConfigError("--heldout", ...) when the corpus has more words than φ.
    HeldoutResult evaluate(const TopicWordDistribution& phi, std::span<const double> alpha,
                           const RangeLoop& loop = serial_loop) const;
    /// The per-document results of documents [begin, end) (one entry each, in order), against
    /// φ and α as evaluate(); φ needs only the rows of those documents' words. Summing every
    /// document's entry in document order (sum()) gives exactly what evaluate() returns, however
    /// the documents are split (each document's generator depends on its label only): the
    /// distributed trainer splits them over its ranks.
    std::vector<HeldoutResult> evaluate_docs(const TopicWordDistribution& phi,
                                             std::span<const double> alpha, DocId begin, DocId end,
                                             const RangeLoop& loop = serial_loop) const;
    /// The totals of per-document results, added in order.
    static HeldoutResult sum(std::span<const HeldoutResult> per_doc);
    /// Evaluates a trainer's state: φ_kw = (n_wk+β)/(n_k+Vβ) from `word_topic` (V =
    /// word_topic.num_words()) and `topic_totals`, α from params.topic_alphas(). Reads only the
    /// rows of words(); the table must not be written meanwhile. O(Σ rows read + fold-in).
    HeldoutResult evaluate(const WordTopicTable& word_topic,
                           std::span<const TotalCount> topic_totals, const LdaParams& params,
                           const RangeLoop& loop = serial_loop) const;
    /// Evaluates a saved model (its β and per-topic α).
    HeldoutResult evaluate(const LdaModel& model, const RangeLoop& loop = serial_loop) const;

  private:
    core::Corpus corpus_;
    FoldInOptions options_;
    std::vector<WordId> words_;
};

}  // namespace rotor::lda
