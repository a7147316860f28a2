#include "core/lda/token_block.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "core/base/error.h"
#include "core/lda/synthetic_corpus.h"

namespace rotor::lda {
namespace {

TEST(BuildBlocks, EveryTokenLandsInItsBlockWordMajor) {
    SyntheticSpec spec;
    spec.num_docs = 120;
    spec.vocab_size = 200;
    spec.mean_doc_length = 30;
    const SyntheticCorpus c = make_synthetic_corpus(spec);
    constexpr std::uint32_t L = 3;
    std::vector<std::uint32_t> row_of_doc(c.num_docs()), col_of_word(spec.vocab_size);
    for (std::uint32_t d = 0; d < c.num_docs(); ++d) row_of_doc[d] = (d * 7) % L;
    for (std::uint32_t w = 0; w < spec.vocab_size; ++w) col_of_word[w] = (w * 5 + 1) % L;

    const auto blocks = build_blocks(c.doc_offsets, c.word_ids, row_of_doc, col_of_word, L);
    ASSERT_EQ(blocks.size(), L * L);

    // Multiset of (doc, word) pairs, from the corpus and from the blocks.
    std::map<std::pair<DocId, WordId>, int> expect, got;
    for (DocId d = 0; d < c.num_docs(); ++d) {
        for (auto i = c.doc_offsets[d]; i < c.doc_offsets[d + 1]; ++i) ++expect[{d, c.word_ids[i]}];
    }
    TokenIndex total = 0;
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        const TokenBlock& blk = blocks[b];
        EXPECT_EQ(blk.row * L + blk.col, b);
        ASSERT_EQ(blk.word_offsets.size(), blk.words.size() + 1);
        EXPECT_EQ(blk.topics.size(), blk.docs.size());
        EXPECT_EQ(blk.word_offsets.back(), blk.num_tokens());
        total += blk.num_tokens();
        for (std::size_t j = 0; j < blk.words.size(); ++j) {
            if (j > 0) {
                EXPECT_LT(blk.words[j - 1], blk.words[j]);
            }
            EXPECT_EQ(col_of_word[blk.words[j]], blk.col);
            EXPECT_LT(blk.word_offsets[j], blk.word_offsets[j + 1]);  // no empty word
            for (auto t = blk.word_offsets[j]; t < blk.word_offsets[j + 1]; ++t) {
                EXPECT_EQ(row_of_doc[blk.docs[t]], blk.row);
                if (t > blk.word_offsets[j]) {
                    EXPECT_LE(blk.docs[t - 1], blk.docs[t]);
                }
                ++got[{blk.docs[t], blk.words[j]}];
            }
        }
    }
    EXPECT_EQ(total, c.num_tokens());
    EXPECT_EQ(got, expect);
}

TEST(BuildBlocks, TopicsTravelWithTheirTokens) {
    SyntheticSpec spec;
    spec.num_docs = 80;
    spec.vocab_size = 60;  // small: many repeated (doc, word) pairs
    spec.mean_doc_length = 40;
    const SyntheticCorpus c = make_synthetic_corpus(spec);
    constexpr std::uint32_t L = 4;
    std::vector<std::uint32_t> row_of_doc(c.num_docs()), col_of_word(spec.vocab_size);
    for (std::uint32_t d = 0; d < c.num_docs(); ++d) row_of_doc[d] = (d * 3) % L;
    for (std::uint32_t w = 0; w < spec.vocab_size; ++w) col_of_word[w] = (w * 7 + 2) % L;
    std::vector<TopicId> topics(c.word_ids.size());
    for (std::size_t i = 0; i < topics.size(); ++i) topics[i] = static_cast<TopicId>(i * 31 % 97);

    const auto blocks = build_blocks(c.doc_offsets, c.word_ids, row_of_doc, col_of_word, L, topics);
    // Per (doc, word), the topics of its tokens, in order, from the corpus and from the blocks.
    std::map<std::pair<DocId, WordId>, std::vector<TopicId>> expect, got;
    for (DocId d = 0; d < c.num_docs(); ++d)
        for (auto i = c.doc_offsets[d]; i < c.doc_offsets[d + 1]; ++i)
            expect[{d, c.word_ids[i]}].push_back(topics[i]);
    for (const TokenBlock& blk : blocks) {
        ASSERT_EQ(blk.topics.size(), blk.docs.size());
        for (std::size_t j = 0; j < blk.words.size(); ++j)
            for (auto t = blk.word_offsets[j]; t < blk.word_offsets[j + 1]; ++t)
                got[{blk.docs[t], blk.words[j]}].push_back(blk.topics[t]);
    }
    EXPECT_EQ(got, expect);  // the same topics, even in the same order (a stable sort)
}

TEST(BuildBlocks, RejectsBadPartitions) {
    const std::vector<std::uint64_t> offsets = {0, 2};
    const std::vector<WordId> words = {0, 3};
    const std::vector<std::uint32_t> rows = {0};
    const std::vector<std::uint32_t> cols = {0, 0, 0};
    EXPECT_THROW(build_blocks(offsets, words, rows, cols, 0), ConfigError);
    EXPECT_THROW(build_blocks(offsets, words, rows, cols, 1), InputError);  // word 3 >= W
    const std::vector<std::uint32_t> cols4 = {0, 0, 0, 2};
    EXPECT_THROW(build_blocks(offsets, words, rows, cols4, 2), InputError);  // column 2 >= L
    const std::vector<std::uint32_t> cols4ok = {0, 0, 0, 1};
    EXPECT_EQ(build_blocks(offsets, words, rows, cols4ok, 2).size(), 4u);
}

TEST(InitTopics, DeterministicPerBlockAndInRange) {
    SyntheticSpec spec;
    spec.num_docs = 50;
    spec.vocab_size = 100;
    const SyntheticCorpus c = make_synthetic_corpus(spec);
    std::vector<std::uint32_t> rows(c.num_docs(), 0), cols(spec.vocab_size);
    for (std::uint32_t w = 0; w < spec.vocab_size; ++w) cols[w] = w % 2;
    auto a = build_blocks(c.doc_offsets, c.word_ids, rows, cols, 2);
    auto b = a;
    init_topics(a, 7, 42);
    init_topics(b, 7, 42);
    std::vector<TopicId> first_topics_a = a[0].topics;
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].topics, b[i].topics);
    init_topics(b, 7, 43);
    EXPECT_NE(a[0].topics, b[0].topics);
    const auto totals = count_topic_totals(a, 7);
    TotalCount sum = 0;
    for (TotalCount n : totals) {
        EXPECT_GT(n, 0);
        sum += n;
    }
    EXPECT_EQ(sum, static_cast<TotalCount>(c.num_tokens()));
}

}  // namespace
}  // namespace rotor::lda
