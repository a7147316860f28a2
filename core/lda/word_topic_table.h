// Word-topic counts n_wk: a hybrid of dense rows (frequent words) and sparse rows (rare words).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/error.h"
#include "core/base/types.h"
#include "core/lda/aligned_buffer.h"
#include "core/lda/doc_topic_table.h"
#include "core/lda/token_block.h"

namespace rotor::lda {

/// n_wk for W words and K topics (the whole vocabulary, or, in the distributed trainer, the words
/// of one slice renumbered 0..W-1, with their global frequencies). A word of frequency f (its
/// number of tokens) gets a DENSE row of K uint32 counts when 2 * min(K, f) >= K, i.e. when a
/// sparse row of (topic, count) pairs of capacity min(K, f) would take as much memory as the dense
/// row; otherwise a SPARSE row (unordered pairs, capacity min(K, f)). The switch follows from f
/// alone: nothing to tune. Rows come from two cache-line-aligned pools, each row on its own cache
/// lines.
///
/// Memory: sum over dense words of 4K bytes, over sparse words of 8 * (1 + min(K, f)) bytes,
/// each rounded up to 64; plus 16 bytes of row metadata per word.
/// Thread-safety: operations on DIFFERENT rows from different threads are safe; one row must not
/// be used by two threads at once unless all of them only read.
class WordTopicTable {
  public:
    WordTopicTable() = default;
    /// Empty rows; word w's kind and capacity follow from word_freqs[w].
    WordTopicTable(std::uint32_t num_topics, std::span<const std::uint64_t> word_freqs);
    /// The bytes memory_bytes() reports for WordTopicTable(num_topics, word_freqs), computed
    /// without allocating (memory plans).
    static std::uint64_t bytes_for(std::uint32_t num_topics,
                                   std::span<const std::uint64_t> word_freqs);
    /// Bulk build from token assignments: frequencies and counts from the blocks.
    static WordTopicTable from_blocks(std::uint32_t num_topics, std::uint32_t num_words,
                                      std::span<const TokenBlock> blocks);

    /// Adds one token of word `word` per topic in `topics` (bulk increment; unassigned tokens,
    /// kUnassignedTopic, are skipped), leaving the row
    /// exactly as increment() one topic at a time would (a sparse row's new topics appended in
    /// order of first appearance). O(|topics| + nonzeros): a sparse row finds its cells through
    /// `slot_of`, the caller's scratch of K entries, all kNoSlot between calls (an empty vector
    /// is sized on first use; pass the same one to every call, single-threaded).
    void add_tokens(WordId word, std::span<const TopicId> topics,
                    std::vector<std::uint32_t>& slot_of);
    /// The same with scratch of its own (allocated only for a sparse row given many topics).
    void add_tokens(WordId word, std::span<const TopicId> topics);
    /// An unused entry of add_tokens' `slot_of`.
    static constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;
    /// Removes every count, keeping kinds and capacities.
    void clear();

    std::uint32_t num_words() const { return static_cast<std::uint32_t>(rows_.size()); }
    std::uint32_t num_topics() const { return num_topics_; }
    bool is_dense(WordId w) const { return rows_[w].dense != 0; }
    /// Largest number of nonzeros row w can hold: min(K, f_w) (K for a dense row).
    std::uint32_t capacity(WordId w) const { return rows_[w].capacity; }

    /// n_wk. O(1) for a dense row, O(nonzeros) for a sparse one.
    Count get(WordId w, TopicId k) const;
    void increment(WordId w, TopicId k);
    /// Asserts n_wk > 0.
    void decrement(WordId w, TopicId k);
    /// Calls f(TopicId, Count) for every nonzero cell of row w (dense rows in topic order,
    /// sparse rows in no particular order).
    template <class F>
    void for_each_nonzero(WordId w, F&& f) const {
        const RowInfo& r = rows_[w];
        if (r.dense != 0) {
            const Count* row = dense_pool_.data() + r.offset;
            for (TopicId k = 0; k < num_topics_; ++k) {
                if (row[k] != 0) f(k, row[k]);
            }
        } else {
            for (const TopicCount& e : sparse_row(w)) f(e.topic, e.count);
        }
    }
    /// Number of nonzero cells in row w (O(K) for a dense row).
    std::uint32_t nonzeros(WordId w) const;

    /// Serialises rows `words` for shipping to another rank: per word, its nonzero count m then
    /// m (topic, count) pairs, appended to `out` (not cleared). Kind-independent format.
    void pack_rows(std::span<const WordId> words, std::vector<std::uint32_t>& out) const;
    /// Replaces rows `words` by the contents of a buffer written by pack_rows for the same word
    /// list; returns the number of uint32 consumed. Throws InputError on a malformed buffer
    /// (truncated, topic >= K, more nonzeros than the row's capacity, zero counts).
    std::size_t unpack_rows(std::span<const WordId> words, std::span<const std::uint32_t> in);

    /// Bytes held (both pools and the row metadata).
    std::size_t memory_bytes() const;

    // Kernel hooks for the sampler's inner loop; same thread-safety as the row itself.
    /// The K counts of a dense row (requires is_dense(w)).
    Count* dense_row(WordId w) { return dense_pool_.data() + rows_[w].offset; }
    const Count* dense_row(WordId w) const { return dense_pool_.data() + rows_[w].offset; }
    /// The nonzeros of a sparse row (requires !is_dense(w)).
    std::span<const TopicCount> sparse_row(WordId w) const {
        const TopicCount* h = sparse_pool_.data() + rows_[w].offset;
        return {h + 1, h->topic};
    }
    /// Opens row w for a sampler: a dense row in place, a sparse row unpacked into `scratch`
    /// (K counts, all zero on entry). Appends the row's nonzero topics to `nz` and sets their
    /// flags in `in_nz` (K flags, all zero on entry). Returns the row's K counts; a sparse row
    /// is written back with store_sparse_row(w, nz, scratch) and its scratch cleared after.
    Count* open_row(WordId w, Count* scratch, std::vector<TopicId>& nz, std::uint8_t* in_nz) {
        if (is_dense(w)) {
            Count* const row = dense_row(w);
            for (TopicId k = 0; k < num_topics_; ++k) {
                if (row[k] != 0) {
                    nz.push_back(k);
                    in_nz[k] = 1;
                }
            }
            return row;
        }
        for (const TopicCount& e : sparse_row(w)) {
            scratch[e.topic] = e.count;
            nz.push_back(e.topic);
            in_nz[e.topic] = 1;
        }
        return scratch;
    }
    /// Overwrites sparse row w with the cells of `dense` (size K) at `topics` that are nonzero;
    /// `topics` must contain every nonzero topic of `dense`, each once. Asserts the capacity.
    void store_sparse_row(WordId w, std::span<const TopicId> topics, const Count* dense);

  private:
    struct RowInfo {
        std::uint64_t offset;    // into dense_pool_ (dense) or sparse_pool_ header cell (sparse)
        std::uint32_t capacity;  // min(K, f)
        std::uint32_t dense;     // 1 for a dense row
    };
    TopicCount* sparse_header(WordId w) { return sparse_pool_.data() + rows_[w].offset; }

    std::uint32_t num_topics_ = 0;
    std::vector<RowInfo> rows_;
    detail::AlignedBuffer<Count> dense_pool_;
    detail::AlignedBuffer<TopicCount> sparse_pool_;  // per row: header {size, 0}, then pairs
};

}  // namespace rotor::lda
