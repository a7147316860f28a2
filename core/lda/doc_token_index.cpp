#include "core/lda/doc_token_index.h"

#include "core/base/error.h"

namespace rotor::lda {

void DocTokenIndex::for_rows(const RowLoop& loop,
                             const std::function<void(std::uint32_t)>& row_body) const {
    const auto body = [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t r = lo; r < hi; ++r) row_body(static_cast<std::uint32_t>(r));
    };
    if (loop) {
        loop(0, side_, body);
    } else {
        body(0, side_);
    }
}

void DocTokenIndex::build(std::span<const TokenBlock> blocks, std::uint32_t side,
                          std::uint32_t num_docs, const RowLoop& loop) {
    ROTOR_ASSERT(side > 0 && blocks.size() == static_cast<std::size_t>(side) * side,
                 "the index needs a side x side grid");
    side_ = side;
    std::vector<std::uint32_t> row_of(num_docs, ~std::uint32_t{0});
    offsets_.assign(static_cast<std::size_t>(num_docs) + 1, 0);
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        const auto row = static_cast<std::uint32_t>(b / side);
        ROTOR_ASSERT(blocks[b].row == row && blocks[b].col == b % side, "block out of place");
        for (DocId d : blocks[b].docs) {
            ROTOR_ASSERT(d < num_docs, "doc id out of range");
            ROTOR_ASSERT(row_of[d] == row || row_of[d] == ~std::uint32_t{0},
                         "a document's tokens span two block rows");
            row_of[d] = row;
            ++offsets_[d + 1];
        }
    }
    for (std::uint32_t d = 0; d < num_docs; ++d) offsets_[d + 1] += offsets_[d];
    topics_.assign(offsets_[num_docs], 0);
    slots_.resize(blocks.size());
    std::vector<std::uint32_t> cursor(num_docs, 0);
    // Docs of block row r occur only in that row: rows are independent.
    for_rows(loop, [&](std::uint32_t r) {
        for (std::uint32_t c = 0; c < side; ++c) {
            const std::size_t b = static_cast<std::size_t>(r) * side + c;
            const TokenBlock& blk = blocks[b];
            std::vector<std::uint32_t>& slots = slots_[b];
            slots.resize(blk.docs.size());
            for (std::size_t t = 0; t < blk.docs.size(); ++t) {
                const DocId d = blk.docs[t];
                const std::uint32_t slot = cursor[d]++;
                slots[t] = slot;
                topics_[offsets_[d] + slot] = blk.topics[t];
            }
        }
    });
}

void DocTokenIndex::sync_topics(std::span<const TokenBlock> blocks, const RowLoop& loop) {
    ROTOR_ASSERT(blocks.size() == slots_.size(), "sync_topics needs the blocks of build()");
    for_rows(loop, [&](std::uint32_t r) {
        for (std::uint32_t c = 0; c < side_; ++c) {
            const std::size_t b = static_cast<std::size_t>(r) * side_ + c;
            ROTOR_ASSERT(blocks[b].row == r && blocks[b].col == c, "block out of place");
            sync_block(blocks[b]);
        }
    });
}

void DocTokenIndex::sync_block(const TokenBlock& block) {
    const std::vector<std::uint32_t>& slots =
        slots_[static_cast<std::size_t>(block.row) * side_ + block.col];
    ROTOR_ASSERT(slots.size() == block.docs.size(), "block changed since build()");
    for (std::size_t t = 0; t < block.docs.size(); ++t)
        topics_[offsets_[block.docs[t]] + slots[t]] = block.topics[t];
}

std::size_t DocTokenIndex::memory_bytes() const {
    std::size_t bytes = offsets_.capacity() * sizeof(std::uint64_t) +
                        topics_.capacity() * sizeof(TopicId) +
                        slots_.capacity() * sizeof(std::vector<std::uint32_t>);
    for (const auto& s : slots_) bytes += s.capacity() * sizeof(std::uint32_t);
    return bytes;
}

}  // namespace rotor::lda
