// The topics of every document's tokens in document-major order, for samplers that draw "the
// topic of a uniformly chosen token of d" in O(1) (the document proposal of MhSampler).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/base/types.h"
#include "core/lda/token_block.h"

namespace rotor::lda {

/// For each document d a contiguous array of the topics of its tokens, and for each token of
/// each block its slot in its document's array. Built from a G x G grid of word-major blocks
/// (block (row, col) at row * G + col) in which every document's tokens lie in one block row,
/// as the trainer's grids are. The array of d holds exactly the multiset {topic of t : t a token
/// of d}; slots follow the blocks' order, so the layout is a function of the blocks alone.
///
/// A sampler that changes a token's topic writes it to the token's slot too (MhSampler does);
/// a sampler that does not (SparseLdaSampler) leaves the index stale until sync_topics().
///
/// Memory: 4 bytes per token (topics) + 4 bytes per token (slots) + 8 bytes per document.
/// Thread-safety: a document's array and a block's slots follow the ownership of the doc rows
/// and of the block: different block rows may be used from different threads at once.
class DocTokenIndex {
  public:
    /// A loop over [begin, end) that may run body on slices in parallel (as core/lda/inference.h's
    /// RangeLoop).
    using RowLoop = std::function<void(std::int64_t begin, std::int64_t end,
                                       const std::function<void(std::int64_t, std::int64_t)>&)>;

    DocTokenIndex() = default;
    /// Builds the layout and copies the topics. `blocks` has side * side entries, block b at
    /// row b / side, col b % side; docs < num_docs. `loop`, when given, runs the block rows in
    /// parallel. Asserts a document met in two block rows.
    void build(std::span<const TokenBlock> blocks, std::uint32_t side, std::uint32_t num_docs,
               const RowLoop& loop = {});
    /// Copies the blocks' current topics into the arrays (the layout of the last build(), which
    /// must have been made from these blocks).
    void sync_topics(std::span<const TokenBlock> blocks, const RowLoop& loop = {});
    /// Copies the topics of one block of the last build()'s grid (after another sampler changed
    /// them). Same thread-safety as sampling the block.
    void sync_block(const TokenBlock& block);
    bool built() const { return side_ != 0; }

    /// The topics of d's tokens (length doc_length(d)).
    TopicId* doc_topics(DocId d) { return topics_.data() + offsets_[d]; }
    const TopicId* doc_topics(DocId d) const { return topics_.data() + offsets_[d]; }
    std::uint32_t doc_length(DocId d) const {
        return static_cast<std::uint32_t>(offsets_[d + 1] - offsets_[d]);
    }
    /// Per token of block (row, col): its slot in its document's array.
    std::span<const std::uint32_t> slots(std::uint32_t row, std::uint32_t col) const {
        return slots_[static_cast<std::size_t>(row) * side_ + col];
    }
    std::size_t memory_bytes() const;

  private:
    void for_rows(const RowLoop& loop, const std::function<void(std::uint32_t)>& row_body) const;

    std::uint32_t side_ = 0;
    std::vector<std::uint64_t> offsets_;             // size D + 1
    std::vector<TopicId> topics_;                    // by document
    std::vector<std::vector<std::uint32_t>> slots_;  // per block, per token
};

}  // namespace rotor::lda
