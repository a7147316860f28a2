#include "core/lda/token_block.h"

#include <algorithm>
#include <string>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::lda {

std::size_t TokenBlock::memory_bytes() const {
    return words.capacity() * sizeof(WordId) + word_offsets.capacity() * sizeof(TokenIndex) +
           docs.capacity() * sizeof(DocId) + topics.capacity() * sizeof(TopicId);
}

namespace {

/// The checks build_blocks documents: L >= 1 and every group index < L throw, mismatched spans
/// assert. Word ids are checked while they are counted (sort_by_word).
void check_partition(std::span<const std::uint64_t> doc_offsets, std::size_t num_tokens,
                     std::span<const std::uint32_t> row_of_doc,
                     std::span<const std::uint32_t> col_of_word, std::uint32_t L,
                     std::span<const TopicId> topics) {
    if (L == 0) throw ConfigError("--blocks", "must be at least 1");
    ROTOR_ASSERT(topics.empty() || topics.size() == num_tokens,
                 "topics must be empty or one per token");
    ROTOR_ASSERT(!doc_offsets.empty(), "doc_offsets must have D+1 entries");
    const std::size_t num_docs = doc_offsets.size() - 1;
    const std::size_t num_words = col_of_word.size();
    ROTOR_ASSERT(row_of_doc.size() == num_docs, "row_of_doc must have D entries");
    ROTOR_ASSERT(doc_offsets[0] == 0 && doc_offsets[num_docs] == num_tokens,
                 "doc_offsets must span word_ids");
    for (std::size_t d = 0; d < num_docs; ++d) {
        ROTOR_ASSERT(doc_offsets[d] <= doc_offsets[d + 1], "doc_offsets must be non-decreasing");
        if (row_of_doc[d] >= L) {
            throw InputError("block partition", "doc " + std::to_string(d) + " is in row " +
                                                    std::to_string(row_of_doc[d]) + " >= L");
        }
    }
    for (std::size_t w = 0; w < num_words; ++w) {
        if (col_of_word[w] >= L) {
            throw InputError("block partition", "word " + std::to_string(w) + " is in column " +
                                                    std::to_string(col_of_word[w]) + " >= L");
        }
    }
}

/// The whole corpus word-major (CSR): the tokens of word w are positions
/// [word_start[w], word_start[w + 1]) of docs (and of topics, when topics were given).
struct WordMajor {
    std::vector<TokenIndex> word_start;  ///< size W + 1
    std::vector<DocId> docs;             ///< per token: its doc
    std::vector<TopicId> topics;         ///< per token: its topic; empty when none were given
};

/// Word-major CSR of the whole corpus by a stable counting sort: each word's docs come out in
/// increasing doc order, which keeps a (word, doc) pair's tokens adjacent in every block.
/// Throws InputError when a word id is >= num_words.
WordMajor sort_by_word(std::span<const std::uint64_t> doc_offsets, std::span<const WordId> word_ids,
                       std::size_t num_words, std::span<const TopicId> topics) {
    const std::size_t num_docs = doc_offsets.size() - 1;
    WordMajor out;
    std::vector<TokenIndex>& word_start = out.word_start;
    word_start.assign(num_words + 1, 0);
    for (std::size_t i = 0; i < word_ids.size(); ++i) {
        const WordId w = word_ids[i];
        if (w >= num_words) {
            throw InputError("corpus", "token " + std::to_string(i) + " has word id " +
                                           std::to_string(w) +
                                           " >= W = " + std::to_string(num_words));
        }
        ++word_start[w + 1];
    }
    for (std::size_t w = 0; w < num_words; ++w) word_start[w + 1] += word_start[w];
    std::vector<DocId>& docs_by_word = out.docs;
    std::vector<TopicId>& topics_by_word = out.topics;  // the payload rides along, if given
    docs_by_word.resize(word_ids.size());
    topics_by_word.resize(topics.size());
    std::vector<TokenIndex> cursor(word_start.begin(), word_start.end() - 1);
    for (std::size_t d = 0; d < num_docs; ++d) {
        for (std::uint64_t i = doc_offsets[d]; i < doc_offsets[d + 1]; ++i) {
            const TokenIndex at = cursor[word_ids[i]]++;
            docs_by_word[at] = static_cast<DocId>(d);
            if (!topics.empty()) topics_by_word[at] = topics[i];
        }
    }
    return out;
}

/// The L*L blocks with their row and column set and every vector allocated once to its final
/// size (a sizing pass over `wm`). Without topics, each block's topics are already there (0).
std::vector<TokenBlock> allocate_blocks(const WordMajor& wm,
                                        std::span<const std::uint32_t> row_of_doc,
                                        std::span<const std::uint32_t> col_of_word, std::uint32_t L,
                                        bool with_topics) {
    const std::size_t num_words = col_of_word.size();
    const std::vector<TokenIndex>& word_start = wm.word_start;
    const std::vector<DocId>& docs_by_word = wm.docs;
    const std::size_t num_blocks = static_cast<std::size_t>(L) * L;
    std::vector<TokenBlock> blocks(num_blocks);
    std::vector<TokenIndex> tokens_in(num_blocks, 0);
    std::vector<std::size_t> words_in(num_blocks, 0);
    std::vector<std::uint32_t> seen_in_row(L, 0);
    for (std::size_t w = 0; w < num_words; ++w) {
        const std::size_t col = col_of_word[w];
        std::fill(seen_in_row.begin(), seen_in_row.end(), 0);
        for (TokenIndex i = word_start[w]; i < word_start[w + 1]; ++i) {
            const std::uint32_t row = row_of_doc[docs_by_word[i]];
            ++tokens_in[row * L + col];
            if (seen_in_row[row] == 0) {
                seen_in_row[row] = 1;
                ++words_in[row * L + col];
            }
        }
    }
    for (std::size_t b = 0; b < num_blocks; ++b) {
        TokenBlock& blk = blocks[b];
        blk.row = static_cast<std::uint32_t>(b / L);
        blk.col = static_cast<std::uint32_t>(b % L);
        blk.words.reserve(words_in[b]);
        blk.word_offsets.reserve(words_in[b] + 1);
        blk.docs.reserve(tokens_in[b]);
        if (!with_topics) {
            blk.topics.assign(tokens_in[b], 0);
        } else {
            blk.topics.reserve(tokens_in[b]);
        }
    }
    return blocks;
}

/// Appends every token of `wm` to its block. Words are visited in increasing id, so each
/// block's words are increasing.
void fill_blocks(std::vector<TokenBlock>& blocks, const WordMajor& wm,
                 std::span<const std::uint32_t> row_of_doc,
                 std::span<const std::uint32_t> col_of_word, std::uint32_t L, bool with_topics) {
    const std::size_t num_words = col_of_word.size();
    const std::vector<TokenIndex>& word_start = wm.word_start;
    const std::vector<DocId>& docs_by_word = wm.docs;
    const std::vector<TopicId>& topics_by_word = wm.topics;
    for (std::size_t w = 0; w < num_words; ++w) {
        const std::size_t col = col_of_word[w];
        for (TokenIndex i = word_start[w]; i < word_start[w + 1]; ++i) {
            const DocId d = docs_by_word[i];
            TokenBlock& blk = blocks[row_of_doc[d] * L + col];
            if (blk.words.empty() || blk.words.back() != w) {
                if (!blk.words.empty()) blk.word_offsets.push_back(blk.docs.size());
                blk.words.push_back(static_cast<WordId>(w));
            }
            blk.docs.push_back(d);
            if (with_topics) blk.topics.push_back(topics_by_word[i]);
        }
    }
    for (TokenBlock& blk : blocks) {
        if (!blk.words.empty()) blk.word_offsets.push_back(blk.docs.size());
    }
}

}  // namespace

std::vector<TokenBlock> build_blocks(std::span<const std::uint64_t> doc_offsets,
                                     std::span<const WordId> word_ids,
                                     std::span<const std::uint32_t> row_of_doc,
                                     std::span<const std::uint32_t> col_of_word, std::uint32_t L,
                                     std::span<const TopicId> topics) {
    check_partition(doc_offsets, word_ids.size(), row_of_doc, col_of_word, L, topics);
    const WordMajor wm = sort_by_word(doc_offsets, word_ids, col_of_word.size(), topics);
    const bool with_topics = !topics.empty();
    std::vector<TokenBlock> blocks = allocate_blocks(wm, row_of_doc, col_of_word, L, with_topics);
    fill_blocks(blocks, wm, row_of_doc, col_of_word, L, with_topics);
    return blocks;
}

void init_topics(std::span<TokenBlock> blocks, std::uint32_t num_topics, std::uint64_t seed) {
    ROTOR_ASSERT(num_topics > 0, "K must be positive");
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        Rng rng = Rng::from({seed, static_cast<std::uint64_t>(b)});
        for (TopicId& z : blocks[b].topics) z = static_cast<TopicId>(rng.below(num_topics));
    }
}

std::vector<TotalCount> count_topic_totals(std::span<const TokenBlock> blocks,
                                           std::uint32_t num_topics) {
    std::vector<TotalCount> totals(num_topics, 0);
    for (const TokenBlock& blk : blocks) {
        for (TopicId z : blk.topics) {
            if (z == kUnassignedTopic) continue;
            ROTOR_ASSERT(z < num_topics, "topic out of range");
            ++totals[z];
        }
    }
    return totals;
}

}  // namespace rotor::lda
