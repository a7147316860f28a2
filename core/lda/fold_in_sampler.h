// Sparse Gibbs fold-in with the topic-word distribution φ fixed (docs/evaluation.md, "Fold-in").
//
// With φ fixed the conditional of one token of word w in document d is
//
//   p(z = k) ∝ (n_dk + α_k) φ_kw,   φ_kw = s_k + r_kw   (TopicWordDistribution),
//
// which splits into a part that depends only on the word and a part that is sparse in the
// document:
//
//   smoothing bucket  Σ_k α_k φ_kw = Σ_k α_k s_k          (one alias table for all words)
//                                  + Σ_{k ∈ row w} α_k r_kw  (one alias table per word)
//   document bucket   Σ_{k: n_dk > 0} n_dk φ_kw           (walked, O(K_d))
//
// Both smoothing parts are O(1) to sample. For the document bucket φ_kw must be looked up for
// each topic of the document: words with many nonzero topics ("dense" words, 16·nnz_w > K) get a
// dense float row of φ_kw over all K topics, so the bucket costs O(K_d) (K_d = topics present in
// the document); words with few nonzeros keep their sparse row and split the document bucket
// into Σ_{k ∈ row w} n_dk r_kw (O(nnz_w) < K/16) and Σ_k n_dk s_k (kept up to date as counts
// change, walked only when drawn). Either way a draw costs O(K_d + K/16) at worst instead of the
// dense sampler's O(K).
//
// FoldInTables holds everything that depends only on (φ, α, word): built once for the words of an
// input (never for the whole vocabulary unless asked), shared read-only by all threads. Its
// memory is about 28 bytes per nonzero of those words' rows plus 4·K bytes per dense word; since
// a dense word has more than K/16 nonzeros, dense rows cost at most 64 bytes per nonzero, so
// memory stays proportional to the rows used, at any K.
//
// FoldInSampler holds one document's state (O(K + length)); one per thread.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/rng.h"
#include "core/base/types.h"
#include "core/lda/inference.h"

namespace rotor::lda {

/// The per-word tables of sparse fold-in over a fixed φ and α. Immutable after construction;
/// keeps a reference to `phi`, which must outlive it.
class FoldInTables {
  public:
    /// Which words get dense φ rows. kAuto: those with 16·nnz_w > K (the rule above; the choice
    /// depends only on the word, so results never depend on which other words are present).
    /// kAllDense / kAllSparse force one path (tests, measurements).
    enum class Layout { kAuto, kAllDense, kAllSparse };

    /// Tables for `words` (each < phi.num_words(); any order, repeats allowed) over φ and α
    /// (size K, each > 0). The per-word work runs over `loop`. O(Σ nnz_w + K · dense words).
    FoldInTables(const TopicWordDistribution& phi, std::span<const double> alpha,
                 std::span<const WordId> words, const RangeLoop& loop = serial_loop,
                 Layout layout = Layout::kAuto);
    /// Tables for every word of φ (small models and tests).
    FoldInTables(const TopicWordDistribution& phi, std::span<const double> alpha,
                 Layout layout = Layout::kAuto);

    const TopicWordDistribution& phi() const noexcept { return phi_; }
    std::span<const double> alpha() const noexcept { return alpha_; }
    double alpha_sum() const noexcept { return alpha_sum_; }
    std::uint32_t num_topics() const noexcept { return k_count_; }
    /// Whether `w` has tables (was among the words given to the constructor).
    bool has_word(WordId w) const noexcept { return w < slot_of_.size() && slot_of_[w] != kNoSlot; }
    /// Words with tables, and how many of them have dense rows.
    std::size_t num_words() const noexcept { return slots_.size(); }
    std::size_t num_dense_words() const noexcept { return dense_.size() / k_count_; }
    /// Bytes held by the tables (not counting φ).
    std::size_t memory_bytes() const noexcept;

  private:
    friend class FoldInSampler;
    static constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;

    struct Slot {
        std::uint64_t begin = 0;        // first entry in topics_/values_/alias_*
        std::uint32_t nnz = 0;          // entries of the word's row
        std::uint32_t dense = kNoSlot;  // index of its dense row, or kNoSlot
        double word_mass = 0;           // Σ_{k ∈ row} α_k r_kw
    };

    void build(std::span<const WordId> words, const RangeLoop& loop, Layout layout);

    const TopicWordDistribution& phi_;
    std::vector<double> alpha_;
    double alpha_sum_ = 0;
    std::uint32_t k_count_ = 0;
    std::vector<double> smooth_;  // s_k
    // Global part of the smoothing bucket: α_k s_k over all K topics.
    double global_mass_ = 0;
    std::vector<double> global_prob_;
    std::vector<TopicId> global_alias_;
    // Per word: slot index (kNoSlot: no tables), slots, rows sorted by topic, alias tables over
    // each row's α_k r_kw (alias_next_ is an index into the row), dense rows of φ_kw.
    std::vector<std::uint32_t> slot_of_;
    std::vector<Slot> slots_;
    std::vector<TopicId> topics_;
    std::vector<double> values_;  // r_kw
    std::vector<double> alias_prob_;
    std::vector<std::uint32_t> alias_next_;
    std::vector<float> dense_;  // K per dense word: φ_kw = s_k + r_kw
};

/// The fold-in kernel for one document at a time, with its scratch buffers (O(K + doc length)).
/// Not thread-safe: one sampler per thread; several samplers may share one FoldInTables, which
/// must outlive them.
class FoldInSampler {
  public:
    explicit FoldInSampler(const FoldInTables& tables);

    /// Estimates θ of the document `words` (each with tables) into `theta` (size K): topics are
    /// initialised by sampling each token in turn from p(k) ∝ (n_dk+α_k)·φ_kw, then
    /// `iterations` sweeps resample every token from that conditional with the token removed;
    /// after each sweep past burn-in, (n_dk+α_k)/(n_d+Σα) is accumulated, and θ is the average.
    /// An empty document gets θ = α/Σα. O(iterations · length · (K_d + K/16)) plus O(K).
    void infer(std::span<const WordId> words, const FoldInOptions& options, Rng& rng,
               std::span<double> theta);

    /// Test hooks: set the document's topic counts n_dk (size K), then draw one topic for a
    /// token of word `w` from p(k) ∝ (n_dk+α_k)·φ_kw without changing the counts.
    void set_counts(std::span<const Count> counts);
    TopicId draw_word(WordId w, Rng& rng);

  private:
    void clear_counts();
    void increment(TopicId k);
    void decrement(TopicId k);
    TopicId draw(std::uint32_t slot, Rng& rng);

    const FoldInTables& t_;
    std::vector<Count> n_dk_;           // dense counts
    std::vector<TopicId> nz_;           // topics with n_dk > 0, in no particular order
    std::vector<std::uint32_t> pos_;    // position of k in nz_ (valid when n_dk > 0)
    std::vector<double> cnt_;           // cnt_[j] = n_dk of k = nz_[j], as a double
    double doc_smooth_ = 0;             // Σ_k n_dk s_k
    std::vector<double> cum_;           // one bucket's weights, size ≥ K
    std::vector<std::uint32_t> slots_;  // per token
    std::vector<TopicId> z_;
    std::vector<double> acc_;  // Σ over averaged sweeps of n_dk
};

}  // namespace rotor::lda
