#include "core/lda/word_topic_table.h"

#include <algorithm>
#include <string>

namespace rotor::lda {

namespace {
constexpr std::uint64_t kCountsPerLine = detail::kCacheLineBytes / sizeof(Count);
constexpr std::uint64_t kCellsPerLine = detail::kCacheLineBytes / sizeof(TopicCount);
// add_tokens: up to this many tokens, increment() one at a time (no scratch touched).
constexpr std::size_t kScanTokens = 16;

std::uint64_t round_up(std::uint64_t n, std::uint64_t m) { return (n + m - 1) / m * m; }

[[noreturn]] void bad_buffer(const std::string& what) {
    throw InputError("word-topic buffer", what);
}
}  // namespace

WordTopicTable::WordTopicTable(std::uint32_t num_topics, std::span<const std::uint64_t> word_freqs)
    : num_topics_(num_topics), rows_(word_freqs.size()) {
    ROTOR_ASSERT(num_topics > 0, "K must be positive");
    std::uint64_t dense_cells = 0;
    std::uint64_t sparse_cells = 0;
    for (std::size_t w = 0; w < word_freqs.size(); ++w) {
        const std::uint64_t cap = std::min<std::uint64_t>(num_topics, word_freqs[w]);
        RowInfo& r = rows_[w];
        r.capacity = static_cast<std::uint32_t>(cap);
        // A pair costs two counts: sparse stops saving memory at 2 * cap >= K.
        if (2 * cap >= num_topics && cap > 0) {
            r.dense = 1;
            r.capacity = num_topics;
            r.offset = dense_cells;
            dense_cells += round_up(num_topics, kCountsPerLine);
        } else {
            r.dense = 0;
            r.offset = sparse_cells;
            sparse_cells += round_up(1 + cap, kCellsPerLine);
        }
    }
    dense_pool_ = detail::AlignedBuffer<Count>(dense_cells);
    sparse_pool_ = detail::AlignedBuffer<TopicCount>(sparse_cells);
}

std::uint64_t WordTopicTable::bytes_for(std::uint32_t num_topics,
                                        std::span<const std::uint64_t> word_freqs) {
    std::uint64_t dense_cells = 0;
    std::uint64_t sparse_cells = 0;
    for (std::uint64_t f : word_freqs) {
        const std::uint64_t cap = std::min<std::uint64_t>(num_topics, f);
        if (2 * cap >= num_topics && cap > 0) {
            dense_cells += round_up(num_topics, kCountsPerLine);
        } else {
            sparse_cells += round_up(1 + cap, kCellsPerLine);
        }
    }
    return dense_cells * sizeof(Count) + sparse_cells * sizeof(TopicCount) +
           word_freqs.size() * sizeof(RowInfo);
}

WordTopicTable WordTopicTable::from_blocks(std::uint32_t num_topics, std::uint32_t num_words,
                                           std::span<const TokenBlock> blocks) {
    std::vector<std::uint64_t> freqs(num_words, 0);
    for (const TokenBlock& blk : blocks) {
        for (std::size_t j = 0; j < blk.words.size(); ++j) {
            ROTOR_ASSERT(blk.words[j] < num_words, "word id out of range");
            freqs[blk.words[j]] += blk.word_offsets[j + 1] - blk.word_offsets[j];
        }
    }
    WordTopicTable table(num_topics, freqs);
    std::vector<std::uint32_t> slot_of;
    for (const TokenBlock& blk : blocks) {
        for (std::size_t j = 0; j < blk.words.size(); ++j) {
            table.add_tokens(
                blk.words[j],
                std::span<const TopicId>(blk.topics)
                    .subspan(blk.word_offsets[j], blk.word_offsets[j + 1] - blk.word_offsets[j]),
                slot_of);
        }
    }
    return table;
}

void WordTopicTable::add_tokens(WordId word, std::span<const TopicId> topics,
                                std::vector<std::uint32_t>& slot_of) {
    // Few tokens (or a dense row): increment() one at a time is as cheap.
    if (is_dense(word) || topics.size() <= kScanTokens) {
        for (TopicId k : topics) {
            if (k == kUnassignedTopic) continue;
            ROTOR_ASSERT(k < num_topics_, "topic out of range");
            increment(word, k);
        }
        return;
    }
    // increment() scans the row for each token, O(|topics| · nonzeros): at big K a frequent
    // sparse word's row holds up to min(K, f) topics after a random start. The row's cells by
    // topic instead, in the order increment() would leave them.
    if (slot_of.size() != num_topics_) slot_of.assign(num_topics_, kNoSlot);
    TopicCount* h = sparse_header(word);
    TopicCount* e = h + 1;
    for (std::uint32_t i = 0; i < h->topic; ++i) slot_of[e[i].topic] = i;
    for (TopicId k : topics) {
        if (k == kUnassignedTopic) continue;
        ROTOR_ASSERT(k < num_topics_, "topic out of range");
        std::uint32_t& slot = slot_of[k];
        if (slot == kNoSlot) {
            ROTOR_ASSERT(h->topic < rows_[word].capacity, "word-topic row over capacity");
            slot = h->topic;
            e[h->topic++] = TopicCount{k, 1};
        } else {
            ++e[slot].count;
        }
    }
    for (std::uint32_t i = 0; i < h->topic; ++i) slot_of[e[i].topic] = kNoSlot;
}

void WordTopicTable::add_tokens(WordId word, std::span<const TopicId> topics) {
    std::vector<std::uint32_t> slot_of;
    add_tokens(word, topics, slot_of);
}

void WordTopicTable::clear() {
    dense_pool_.zero();
    sparse_pool_.zero();
}

Count WordTopicTable::get(WordId w, TopicId k) const {
    if (is_dense(w)) return dense_row(w)[k];
    for (const TopicCount& e : sparse_row(w)) {
        if (e.topic == k) return e.count;
    }
    return 0;
}

void WordTopicTable::increment(WordId w, TopicId k) {
    if (is_dense(w)) {
        ++dense_row(w)[k];
        return;
    }
    TopicCount* h = sparse_header(w);
    TopicCount* e = h + 1;
    for (std::uint32_t i = 0; i < h->topic; ++i) {
        if (e[i].topic == k) {
            ++e[i].count;
            return;
        }
    }
    ROTOR_ASSERT(h->topic < rows_[w].capacity, "word-topic row over capacity");
    e[h->topic++] = TopicCount{k, 1};
}

void WordTopicTable::decrement(WordId w, TopicId k) {
    if (is_dense(w)) {
        Count& c = dense_row(w)[k];
        ROTOR_ASSERT(c > 0, "decrement of a zero word-topic cell");
        --c;
        return;
    }
    TopicCount* h = sparse_header(w);
    TopicCount* e = h + 1;
    for (std::uint32_t i = 0; i < h->topic; ++i) {
        if (e[i].topic == k) {
            if (--e[i].count == 0) e[i] = e[--h->topic];
            return;
        }
    }
    ROTOR_ASSERT(false, "decrement of a zero word-topic cell");
}

std::uint32_t WordTopicTable::nonzeros(WordId w) const {
    if (!is_dense(w)) return static_cast<std::uint32_t>(sparse_row(w).size());
    const Count* row = dense_row(w);
    return static_cast<std::uint32_t>(
        std::count_if(row, row + num_topics_, [](Count c) { return c != 0; }));
}

void WordTopicTable::store_sparse_row(WordId w, std::span<const TopicId> topics,
                                      const Count* dense) {
    TopicCount* h = sparse_header(w);
    TopicCount* e = h + 1;
    std::uint32_t n = 0;
    const std::uint32_t cap = rows_[w].capacity;
    for (TopicId k : topics) {
        if (dense[k] != 0) {
            ROTOR_ASSERT(n < cap, "word-topic row over capacity");
            e[n++] = TopicCount{k, dense[k]};
        }
    }
    h->topic = n;
}

void WordTopicTable::pack_rows(std::span<const WordId> words,
                               std::vector<std::uint32_t>& out) const {
    for (WordId w : words) {
        ROTOR_ASSERT(w < num_words(), "word id out of range");
        const std::size_t size_at = out.size();
        out.push_back(0);
        std::uint32_t m = 0;
        for_each_nonzero(w, [&](TopicId k, Count c) {
            out.push_back(k);
            out.push_back(c);
            ++m;
        });
        out[size_at] = m;
    }
}

std::size_t WordTopicTable::unpack_rows(std::span<const WordId> words,
                                        std::span<const std::uint32_t> in) {
    std::size_t pos = 0;
    for (WordId w : words) {
        ROTOR_ASSERT(w < num_words(), "word id out of range");
        if (pos >= in.size()) bad_buffer("truncated before word " + std::to_string(w));
        const std::uint32_t m = in[pos++];
        if (m > rows_[w].capacity) {
            bad_buffer("word " + std::to_string(w) + " has " + std::to_string(m) +
                       " nonzeros, capacity " + std::to_string(rows_[w].capacity));
        }
        if (in.size() - pos < 2 * static_cast<std::size_t>(m)) {
            bad_buffer("truncated inside word " + std::to_string(w));
        }
        // Validate before touching the row, so a bad buffer leaves the table unchanged for w.
        for (std::uint32_t i = 0; i < m; ++i) {
            if (in[pos + 2 * i] >= num_topics_) {
                bad_buffer("word " + std::to_string(w) + " has topic " +
                           std::to_string(in[pos + 2 * i]) + " >= K");
            }
            if (in[pos + 2 * i + 1] == 0)
                bad_buffer("word " + std::to_string(w) + " has a zero count");
        }
        if (is_dense(w)) {
            Count* row = dense_row(w);
            std::fill(row, row + num_topics_, 0);
            for (std::uint32_t i = 0; i < m; ++i) row[in[pos + 2 * i]] += in[pos + 2 * i + 1];
        } else {
            TopicCount* h = sparse_header(w);
            h->topic = 0;
            for (std::uint32_t i = 0; i < m; ++i) {
                const TopicId k = in[pos + 2 * i];
                const Count c = in[pos + 2 * i + 1];
                TopicCount* e = h + 1;
                std::uint32_t j = 0;
                while (j < h->topic && e[j].topic != k) ++j;
                if (j == h->topic)
                    e[h->topic++] = TopicCount{k, c};
                else
                    e[j].count += c;
            }
        }
        pos += 2 * static_cast<std::size_t>(m);
    }
    return pos;
}

std::size_t WordTopicTable::memory_bytes() const {
    return dense_pool_.size() * sizeof(Count) + sparse_pool_.size() * sizeof(TopicCount) +
           rows_.capacity() * sizeof(RowInfo);
}

}  // namespace rotor::lda
