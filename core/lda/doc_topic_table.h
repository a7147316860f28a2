// Doc-topic counts n_dk: one sparse row per document.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/base/error.h"
#include "core/base/prefetch.h"
#include "core/base/types.h"
#include "core/lda/aligned_buffer.h"
#include "core/lda/token_block.h"

namespace rotor::lda {

/// One nonzero cell of a sparse row.
struct TopicCount {
    TopicId topic;
    Count count;
};

namespace detail {

// Sparse rows sorted by decreasing count. `e` points at the entries, `n` at the row's size.
// Increment/decrement keep the order with at most one swap: an entry moves to the edge of the
// run of entries that shared its old count.

/// Increments the entry at position i.
inline void sorted_row_increment_at(TopicCount* e, std::uint32_t i) {
    const Count c = ++e[i].count;
    std::uint32_t j = i;
    while (j > 0 && e[j - 1].count < c) --j;
    if (j != i) std::swap(e[i], e[j]);
}

/// Decrements the entry at position i (count > 0), dropping it at zero. Returns j, where the
/// entry went: the entry that was at j is now at i (j == i: nothing else moved).
inline std::uint32_t sorted_row_decrement_at(TopicCount* e, std::uint32_t& n, std::uint32_t i) {
    const Count c = --e[i].count;
    std::uint32_t j = i;
    while (j + 1 < n && e[j + 1].count > c) ++j;
    if (j != i) std::swap(e[i], e[j]);
    if (c == 0) --n;  // then j == n - 1: every later entry had a count > 0
    return j;
}

/// Appends topic k, known to be absent from the row, with count 1 (its place: the last).
inline void sorted_row_append(TopicCount* e, std::uint32_t& n, std::uint32_t cap, TopicId k) {
    ROTOR_ASSERT(n < cap, "doc-topic row over capacity (more topics than tokens?)");
    (void)cap;
    e[n++] = TopicCount{k, 1};
}

inline void sorted_row_increment(TopicCount* e, std::uint32_t& n, std::uint32_t cap, TopicId k) {
    for (std::uint32_t i = 0; i < n; ++i) {
        if (e[i].topic == k) {
            sorted_row_increment_at(e, i);
            return;
        }
    }
    ROTOR_ASSERT(n < cap, "doc-topic row over capacity (more topics than tokens?)");
    (void)cap;
    e[n++] = TopicCount{k, 1};
}

inline void sorted_row_decrement(TopicCount* e, std::uint32_t& n, TopicId k) {
    for (std::uint32_t i = 0; i < n; ++i) {
        if (e[i].topic == k) {
            sorted_row_decrement_at(e, n, i);
            return;
        }
    }
    ROTOR_ASSERT(false, "decrement of a zero doc-topic cell");
}

}  // namespace detail

/// n_dk for D documents and K topics. Row d holds its nonzero (topic, count) pairs sorted by
/// DECREASING count, with capacity min(K, length of d); all rows are carved from one
/// cache-line-aligned pool (no per-row allocation, no realloc). Each row starts on its own
/// cache line, with its mutable size in that line, so two threads on two rows never share a line.
///
/// Memory: D * 8 bytes of offsets + sum_d 8 * (1 + min(K, len_d)) rounded up to 64 bytes.
/// Thread-safety: operations on DIFFERENT rows from different threads are safe; the same row
/// must not be used by two threads at once unless all of them only read.
class DocTopicTable {
  public:
    DocTopicTable() = default;
    /// Empty rows; row d gets capacity min(K, doc_lengths[d]).
    DocTopicTable(std::uint32_t num_topics, std::span<const std::uint64_t> doc_lengths);
    /// Bulk build from token assignments: lengths and counts from the blocks' (doc, topic)
    /// pairs (lengths count unassigned tokens too). Docs are global ids < num_docs.
    static DocTopicTable from_blocks(std::uint32_t num_topics, std::uint32_t num_docs,
                                     std::span<const TokenBlock> blocks);

    /// Adds one token per (docs[i], topics[i]) pair (bulk increment); unassigned tokens
    /// (kUnassignedTopic) are skipped.
    void add_tokens(std::span<const DocId> docs, std::span<const TopicId> topics);
    /// Removes every count, keeping the capacities.
    void clear();

    std::uint32_t num_docs() const { return static_cast<std::uint32_t>(offsets_.size()); }
    std::uint32_t num_topics() const { return num_topics_; }
    /// Row d's nonzeros, sorted by decreasing count. Invalidated by a change to row d.
    std::span<const TopicCount> row(DocId d) const {
        const TopicCount* h = header(d);
        return {h + 1, h->topic};
    }
    std::uint32_t capacity(DocId d) const { return header(d)->count; }
    /// n_dk; O(nonzeros of row d).
    Count get(DocId d, TopicId k) const;
    /// n_d = sum_k n_dk.
    TotalCount row_total(DocId d) const;
    /// ++n_dk; O(nonzeros). Asserts the row stays within capacity.
    void increment(DocId d, TopicId k) {
        TopicCount* h = header(d);
        detail::sorted_row_increment(h + 1, h->topic, h->count, k);
    }
    /// --n_dk; asserts n_dk > 0.
    void decrement(DocId d, TopicId k) {
        TopicCount* h = header(d);
        detail::sorted_row_decrement(h + 1, h->topic, k);
    }
    /// Bytes held (pool and offsets).
    std::size_t memory_bytes() const;

    /// Kernel hook: the row's header cell {size, capacity}, followed by its entries. For the
    /// sampler's inner loop and for prefetching; same thread-safety as the row itself.
    TopicCount* header(DocId d) { return pool_.data() + offsets_[d]; }
    const TopicCount* header(DocId d) const { return pool_.data() + offsets_[d]; }
    /// Kernel hook: prefetches the cache lines of row d's entries past its header's line, at
    /// most N of them. Reads the header's size, so prefetch the header some time before. N
    /// prefetches whatever the size (a short row's last line again): no branch on the row.
    /// `Unrolled`: the N prefetches as straight-line code (SparseLDA: 3% shorter sweeps at K =
    /// 100 and 1,000; MH: slower, so it keeps the loop; docs/sampler.md).
    template <std::uint32_t N, bool Unrolled = false>
    void prefetch_entries(DocId d) const {
        const TopicCount* h = header(d);
        // Line l starts at entry l * kLineCells - 1, and lines <= size / kLineCells: inside the
        // row's capacity.
        const std::uint32_t lines = h->topic / kLineCells;
        if constexpr (Unrolled) {
#pragma GCC unroll 16
            for (std::uint32_t l = 1; l <= N; ++l)
                prefetch_line(h + std::min(l, lines) * kLineCells);
        } else {
            for (std::uint32_t l = 1; l <= N; ++l)
                prefetch_line(h + std::min(l, lines) * kLineCells);
        }
    }

  private:
    static constexpr std::uint32_t kLineBytes = 64;
    static constexpr std::uint32_t kLineCells = kLineBytes / sizeof(TopicCount);
    std::uint32_t num_topics_ = 0;
    std::vector<std::uint64_t> offsets_;  // index in pool_ of each row's header cell
    detail::AlignedBuffer<TopicCount> pool_;
};

}  // namespace rotor::lda
