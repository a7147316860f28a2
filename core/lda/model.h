// A trained LDA model as plain data, and its directory format (docs/formats.md, "LDA model
// directory").
//
// The trainer turns its count tables into an LdaModel to save it; inference, evaluation, export
// and `rotor lda topics` load one. Nothing here is thread-aware: an LdaModel is a value.
//
// Model directory:
//   params.json      K, alpha (per topic), beta, V, D, N, iterations, seed, format version,
//                    whether there is a vocabulary
//   vocab.txt        V lines, line i+1 is word i (empty when the corpus had no vocabulary)
//   word_topic.bin   sparse word-topic counts (format in docs/formats.md), CRC-32 at the end
//   doc_topic.bin    sparse doc-topic counts and each doc's 1-based input id, CRC-32 at the end
//   topics.txt       top words per topic, for people
//   docs.txt         optional: D lines, the documents' names (a corpus built from a folder of
//                    text files), in doc_topic.bin's order
// The directory is built under a temporary name and renamed whole (core::AtomicDirectory): a
// model directory is whole or absent. An earlier model at the path is replaced; a non-empty
// directory that is not a model (no params.json) is refused.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/types.h"

namespace rotor::lda {

/// Rows of (topic, count) pairs in CSR form: row r is [offsets[r], offsets[r+1]). Within a row,
/// topics are distinct; order is unspecified unless stated.
struct SparseCounts {
    std::vector<std::uint64_t> offsets{0};  ///< size rows()+1
    std::vector<TopicId> topics;            ///< size nnz
    std::vector<Count> counts;              ///< size nnz, each > 0

    std::size_t rows() const { return offsets.size() - 1; }
    std::uint64_t nnz() const { return topics.size(); }
    /// Appends one row; pairs with a zero count are skipped.
    void add_row(const std::vector<std::pair<TopicId, Count>>& row);
};

/// The scalar parameters and provenance of a model (params.json).
struct ModelInfo {
    static constexpr int kFormatVersion = 1;
    std::uint32_t num_topics = 0;  ///< K
    std::vector<double> alpha;     ///< Dirichlet prior on θ, one per topic (size K)
    double beta = 0.01;            ///< symmetric Dirichlet prior on φ
    std::uint32_t num_words = 0;   ///< V
    std::uint32_t num_docs = 0;    ///< D
    std::uint64_t num_tokens = 0;  ///< N
    std::uint32_t iterations = 0;  ///< Gibbs sweeps done
    std::uint64_t seed = 0;        ///< the run's seed
    std::string corpus;            ///< path of the training corpus, for provenance
    /// How the first topics were drawn: --init's name, "random", "sparse" or "sequential" (empty: a
    /// model of rotor before params.json recorded it), and --init-doc-topics of a sparse start (0
    /// else).
    std::string init;
    std::uint32_t init_doc_topics = 0;
    /// --init-word-prior of a sequential start (0 else, and in models before it was recorded).
    double init_word_prior = 0;
    /// params.json's "vocabulary": whether vocab.txt holds the V words (true) or is empty
    /// (false: the corpus had none, words print as ids). Absent from models of rotor before it:
    /// then an empty vocab.txt is taken as none. save_model sets it from the model's vocab.
    std::optional<bool> vocabulary;
};

/// A whole model. word_topic has V rows, doc_topic has D rows; topic_totals has K entries and
/// equals the column sums of word_topic.
struct LdaModel {
    ModelInfo info;
    std::vector<std::string> vocab;         ///< size V (may be empty in tests: words print as ids)
    SparseCounts word_topic;                ///< V rows
    SparseCounts doc_topic;                 ///< D rows
    std::vector<std::uint64_t> doc_labels;  ///< 1-based input id of each doc, size D
    std::vector<std::string> doc_names;     ///< size D, or empty: docs are named by their label
    std::vector<TotalCount> topic_totals;   ///< n_k, size K

    /// φ_kw = (n_wk + β) / (n_k + Vβ).
    double phi(TopicId k, Count n_wk) const {
        return (n_wk + info.beta) /
               (static_cast<double>(topic_totals[k]) + info.num_words * info.beta);
    }
    /// Recomputes topic_totals from word_topic.
    void recompute_totals();
};

/// One topic's top words with their probabilities φ_kw, most probable first.
struct TopicSummary {
    TopicId topic = 0;
    double share = 0;  ///< n_k / N
    std::vector<std::pair<WordId, double>> words;
};
/// The `top` largest counts of each of K topics with their words, ties to the lower word id: a
/// bounded min-heap per topic, O(log top) per offer. top_words uses it, and so does the
/// distributed trainer to merge its ranks' tops without gathering the model.
class TopCounts {
  public:
    using Entry = std::pair<Count, WordId>;
    TopCounts(std::uint32_t num_topics, std::size_t top) : top_(top), heaps_(num_topics) {}
    void offer(TopicId k, Count count, WordId word);
    /// Per topic, its entries most frequent first (ties: lower word first). Ends the heaps.
    std::vector<std::vector<Entry>> take_sorted() &&;

  private:
    std::size_t top_;
    std::vector<std::vector<Entry>> heaps_;
};

/// The `top` most probable words of each topic. O(nnz + K·top·log top).
std::vector<TopicSummary> top_words(const LdaModel& model, std::size_t top);

/// Writes the model directory whole (see above). Throws SystemError on I/O failure, leaving no
/// directory and no temporary behind; ConfigError("--out") for a directory that is not a model.
void save_model(const LdaModel& model, const std::string& dir, std::size_t top = 20);
/// Reads a model directory written by save_model. Throws InputError (path, line where
/// meaningful) on anything missing, truncated or inconsistent.
LdaModel load_model(const std::string& dir);
/// Writes word_topic.tsv (`word<TAB>topic<TAB>count`) and doc_topic.tsv
/// (`doc<TAB>topic<TAB>count`, doc as its name, else its 1-based input id), nonzero counts only,
/// into out_dir, built whole as save_model builds a model (a directory without word_topic.tsv is
/// refused). With `normalize`, probabilities instead of counts: word_topic.tsv holds
/// φ_kw = (n_wk + β) / (n_k + Vβ) for the nonzero counts (each word not listed for topic k has
/// β / (n_k + Vβ)), doc_topic.tsv every topic's θ_dk = (n_dk + α_k) / (n_d + Σα), summing to 1.
void export_tsv(const LdaModel& model, const std::string& out_dir, bool normalize = false);

/// Document d's topic proportions θ_dk = (n_dk + α_k) / (n_d + Σα), size K.
std::vector<double> doc_theta(const LdaModel& model, std::size_t d);
/// Document d's name in tables: doc_names[d], else its label.
std::string doc_name(const LdaModel& model, std::size_t d);

/// The wide doc × topic table (docs/formats.md, "Doc-topic table"): a header line
/// `doc<TAB>topic_0<TAB>...<TAB>topic_{K-1}`, then one line per document, its name and its K
/// proportions. The header, with its newline:
std::string doc_topics_header(std::uint32_t num_topics);
/// Appends one row (name, then each θ with 6 significant digits) and its newline to `out`.
void append_doc_topics_row(std::string& out, std::string_view name, std::span<const double> theta);
/// Writes the table of the model's training documents (doc_theta) to `path`, atomically.
/// Throws SystemError.
void write_doc_topics(const LdaModel& model, const std::string& path);

}  // namespace rotor::lda
