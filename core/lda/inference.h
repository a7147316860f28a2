// Using a trained model on new documents: the fixed topic-word distribution φ, the mapping of a
// new corpus's words onto the model's vocabulary, and Gibbs fold-in of one document's θ with φ
// held fixed (Griffiths & Steyvers 2004, sec. 2.2 "fold-in"; Mallet's TopicInferencer).
//
// Everything here is single-threaded: the apps layer runs the per-document kernel
// (FoldInSampler::infer, core/lda/fold_in_sampler.h) in parallel over documents, one sampler per
// thread, and the results do not depend on the number of threads because each document's generator
// is seeded from (seed, document label) alone.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/base/range_loop.h"
#include "core/base/rng.h"
#include "core/base/types.h"
#include "core/corpus/corpus.h"
#include "core/corpus/vocabulary.h"
#include "core/lda/model.h"

namespace rotor::lda {

class WordTopicTable;

/// A fixed topic-word distribution in "smoothing + sparse" form:
///   φ_kw = s_k + r_kw,   s_k = β / (c_k + Vβ),   r_kw = c_wk / (c_k + Vβ),
/// where c_wk ≥ 0 are (possibly fractional) weights, c_k = Σ_w c_wk the topic totals and β ≥ 0.
/// With trained counts this is φ_kw = (n_wk+β)/(n_k+Vβ); with β = 0 it is plain per-topic
/// normalisation of a weight matrix. Rows are CSR over words (a word with no row has only the
/// smoothing). Memory: 12 bytes per nonzero + 8 per word + 8 per topic.
/// Immutable after construction: const methods are safe to share between threads.
class TopicWordDistribution {
  public:
    TopicWordDistribution() = default;
    /// Starts an empty distribution over `num_words` words (V of the formula, also the number
    /// of rows) and K = totals.size() topics. Preconditions (ROTOR_ASSERT): β ≥ 0, every
    /// total ≥ 0, and c_k + Vβ > 0 for every k.
    TopicWordDistribution(WordId num_words, std::span<const double> totals, double beta);

    /// Sets row w to the nonzero weights `row` (topic, c_wk), topics distinct and < K, weights
    /// > 0. Rows must be appended in increasing w (skipped words get empty rows).
    void append_row(WordId w, std::span<const std::pair<TopicId, double>> row);

    std::uint32_t num_topics() const noexcept { return static_cast<std::uint32_t>(smooth_.size()); }
    WordId num_words() const noexcept { return num_words_; }
    /// s_k, size K.
    std::span<const double> smoothing() const noexcept { return smooth_; }
    /// Topics and r_kw of word w's nonzero weights (empty for a word without a row).
    std::span<const TopicId> row_topics(WordId w) const;
    std::span<const double> row_values(WordId w) const;
    /// φ_kw. O(nonzeros of w).
    double phi(WordId w, TopicId k) const;

  private:
    WordId num_words_ = 0;
    WordId rows_done_ = 0;           // rows appended so far (offsets_ covers [0, rows_done_])
    std::vector<double> smooth_;     // s_k
    std::vector<double> inv_denom_;  // 1 / (c_k + Vβ)
    std::vector<std::uint64_t> offsets_{0};
    std::vector<TopicId> topics_;
    std::vector<double> values_;  // r_kw
};

/// φ of a saved model: φ_kw = (n_wk+β)/(n_k+Vβ) with V = model.info.num_words. O(nnz).
TopicWordDistribution phi_from_model(const LdaModel& model);
/// φ of a trainer's live table for the given words only (sorted ascending, each < V; other rows
/// are left empty, i.e. smoothing only). V = table.num_words(). O(Σ nonzeros of `words`).
/// The table must not be written meanwhile.
TopicWordDistribution phi_from_table(const WordTopicTable& table,
                                     std::span<const TotalCount> topic_totals, double beta,
                                     std::span<const WordId> words);
/// The same from a SparseCounts word-topic matrix (V rows), e.g. LdaModel::word_topic.
TopicWordDistribution phi_from_counts(const SparseCounts& word_topic,
                                      std::span<const TotalCount> topic_totals, double beta,
                                      std::span<const WordId> words);

/// A topic-word weight file (`word<TAB>topic<TAB>weight` rows) read by read_phi_tsv().
struct PhiFile {
    TopicWordDistribution phi;  ///< over the words of `vocab`, in its order
    core::Vocabulary vocab;     ///< the file's words in order of first appearance, then `extra`'s
    WordId file_words = 0;      ///< words taken from the file: ids [0, file_words) of `vocab`
    /// Words of `extra` absent from the file, appended as ids [file_words, vocab.size()) with
    /// smoothing only (β > 0).
    WordId smoothing_only_words = 0;
};

/// Reads rows `word<TAB>topic<TAB>weight` (another tool's topic-word matrix; weights need not be
/// normalised; blank lines and lines starting with '#' are ignored; plain or gzip). K is the
/// largest topic plus one; φ_kw = (c_wk+β)/(c_k+Vβ), so β = 0 normalises each topic's weights.
/// The vocabulary, and V, depend on β:
///  - β = 0: the words with some positive weight (any other word has probability 0 under every
///    topic, so it is left out: the caller counts its tokens as unknown); `extra` is ignored.
///  - β > 0: every word the file names (one whose weights are all 0 has smoothing only), then
///    every word of `extra` (e.g. the held-out corpus's vocabulary) that the file does not name,
///    with smoothing only β/(c_k+Vβ). V counts them all, so a file that omits zero-count words
///    (as `rotor lda export` does) scored with the model's vocabulary as `extra` gives the
///    model's own φ.
/// Throws InputError `<path>:<line>:<col>: ...` on a line without exactly three tab-separated
/// fields, an empty word, a topic that is not an integer below kMaxTopics, a weight that is not
/// a finite number ≥ 0, a repeated (word, topic) pair, an empty file, or (β = 0) a topic whose
/// weights sum to 0.
PhiFile read_phi_tsv(const std::string& path, double beta, const core::Vocabulary* extra = nullptr);

/// Marks a corpus word that the model does not know.
inline constexpr WordId kUnknownWord = 0xFFFFFFFFu;

/// A corpus re-expressed in a model's word ids, with the tokens of unknown words removed (each
/// document keeps its label and the order of its remaining tokens).
struct MappedCorpus {
    core::Corpus corpus;               ///< W = the model's V
    std::uint64_t skipped_tokens = 0;  ///< tokens dropped because their word is unknown
    std::uint64_t unknown_words = 0;   ///< distinct corpus words with tokens that are unknown
    std::uint64_t input_tokens = 0;    ///< tokens before dropping
};

/// Maps `corpus` onto a model vocabulary BY WORD STRING: word w of the corpus (corpus_vocab's
/// word w) becomes the model's id of the same string. When neither side has a vocabulary
/// (both null / empty), ids are taken as they are and ids >= model_num_words are unknown.
/// Throws InputError naming `corpus_name` when exactly one side has a vocabulary, or when the
/// corpus vocabulary's size is not the corpus's W.
MappedCorpus map_to_model(const core::Corpus& corpus, const core::Vocabulary* corpus_vocab,
                          const core::Vocabulary* model_vocab, WordId model_num_words,
                          const std::string& corpus_name);

/// How fold-in samples one document. validate() throws ConfigError naming the flag.
struct FoldInOptions {
    /// Gibbs sweeps over the document's tokens, ≥ 1 (--iterations). 50 sweeps / 10 burn-in
    /// are within 0.0004 nats/token of 100/20 in held-out log-likelihood on the kernel corpus
    /// (docs/evaluation.md, "Iterations"); fewer averaged states lower held-out scores.
    std::uint32_t iterations = 50;
    /// The first sweeps whose states are not averaged, < iterations (--burn-in).
    std::uint32_t burn_in = 10;
    /// Seed of every document's generator: Rng::from({seed, label}) (--seed).
    std::uint64_t seed = 1;

    void validate() const;
};

// The fold-in kernel itself (FoldInTables, FoldInSampler) is in core/lda/fold_in_sampler.h.

/// How the kernels run in parallel (core/base/range_loop.h): apps pass
/// sched::Runtime::parallel_for.
using core::RangeLoop;
using core::serial_loop;

}  // namespace rotor::lda
