#include "core/lda/doc_topic_table.h"

#include <algorithm>

namespace rotor::lda {

namespace {
constexpr std::uint64_t kCellsPerLine = detail::kCacheLineBytes / sizeof(TopicCount);
}  // namespace

DocTopicTable::DocTopicTable(std::uint32_t num_topics, std::span<const std::uint64_t> doc_lengths)
    : num_topics_(num_topics), offsets_(doc_lengths.size()) {
    ROTOR_ASSERT(num_topics > 0, "K must be positive");
    std::uint64_t cells = 0;
    for (std::size_t d = 0; d < doc_lengths.size(); ++d) {
        offsets_[d] = cells;
        const std::uint64_t cap = std::min<std::uint64_t>(num_topics, doc_lengths[d]);
        cells += (1 + cap + kCellsPerLine - 1) / kCellsPerLine * kCellsPerLine;
    }
    pool_ = detail::AlignedBuffer<TopicCount>(cells);
    for (std::size_t d = 0; d < doc_lengths.size(); ++d) {
        pool_[offsets_[d]] =
            TopicCount{0, static_cast<Count>(std::min<std::uint64_t>(num_topics, doc_lengths[d]))};
    }
}

DocTopicTable DocTopicTable::from_blocks(std::uint32_t num_topics, std::uint32_t num_docs,
                                         std::span<const TokenBlock> blocks) {
    std::vector<std::uint64_t> lengths(num_docs, 0);
    for (const TokenBlock& blk : blocks) {
        for (DocId d : blk.docs) {
            ROTOR_ASSERT(d < num_docs, "doc id out of range");
            ++lengths[d];
        }
    }
    DocTopicTable table(num_topics, lengths);
    for (const TokenBlock& blk : blocks) table.add_tokens(blk.docs, blk.topics);
    return table;
}

void DocTopicTable::add_tokens(std::span<const DocId> docs, std::span<const TopicId> topics) {
    ROTOR_ASSERT(docs.size() == topics.size(), "docs and topics differ in size");
    for (std::size_t i = 0; i < docs.size(); ++i) {
        if (topics[i] == kUnassignedTopic) continue;
        ROTOR_ASSERT(docs[i] < num_docs() && topics[i] < num_topics_, "token out of range");
        increment(docs[i], topics[i]);
    }
}

void DocTopicTable::clear() {
    for (std::size_t d = 0; d < offsets_.size(); ++d) {
        TopicCount* h = header(static_cast<DocId>(d));
        std::fill(h + 1, h + 1 + h->topic, TopicCount{0, 0});
        h->topic = 0;
    }
}

Count DocTopicTable::get(DocId d, TopicId k) const {
    for (const TopicCount& e : row(d)) {
        if (e.topic == k) return e.count;
    }
    return 0;
}

TotalCount DocTopicTable::row_total(DocId d) const {
    TotalCount n = 0;
    for (const TopicCount& e : row(d)) n += e.count;
    return n;
}

std::size_t DocTopicTable::memory_bytes() const {
    return pool_.size() * sizeof(TopicCount) + offsets_.capacity() * sizeof(std::uint64_t);
}

}  // namespace rotor::lda
