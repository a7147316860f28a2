#include "core/lda/topic_init.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "core/base/error.h"
#include "core/lda/doc_topic_table.h"
#include "core/lda/synthetic_corpus.h"
#include "core/lda/word_topic_table.h"

namespace rotor::lda {
namespace {

/// Blocks of a synthetic corpus on an L x L grid (docs and words dealt round-robin).
std::vector<TokenBlock> grid(const SyntheticCorpus& c, std::uint32_t vocab, std::uint32_t L) {
    std::vector<std::uint32_t> rows(c.num_docs()), cols(vocab);
    for (std::uint32_t d = 0; d < c.num_docs(); ++d) rows[d] = (d * 7) % L;
    for (std::uint32_t w = 0; w < vocab; ++w) cols[w] = (w * 5 + 1) % L;
    return build_blocks(c.doc_offsets, c.word_ids, rows, cols, L);
}

SyntheticCorpus corpus() {
    SyntheticSpec spec;
    spec.num_docs = 80;
    spec.vocab_size = 150;
    spec.mean_doc_length = 40;
    return make_synthetic_corpus(spec);
}

/// Each document's set of topics over all blocks.
std::vector<std::set<TopicId>> doc_sets(const std::vector<TokenBlock>& blocks, std::size_t docs) {
    std::vector<std::set<TopicId>> sets(docs);
    for (const TokenBlock& b : blocks)
        for (std::size_t t = 0; t < b.docs.size(); ++t) sets[b.docs[t]].insert(b.topics[t]);
    return sets;
}

TEST(InitTopicsSparse, DocRowsHoldAtMostCTopicsAndCountsAddUp) {
    const SyntheticCorpus c = corpus();
    for (std::uint32_t cap : {1u, 3u}) {
        auto blocks = grid(c, 150, 3);
        init_topics_sparse(blocks, c.num_docs(), 50, cap, 9);
        const auto sets = doc_sets(blocks, c.num_docs());
        std::size_t wide = 0;
        for (std::uint32_t d = 0; d < c.num_docs(); ++d) {
            const std::uint64_t len = c.doc_offsets[d + 1] - c.doc_offsets[d];
            EXPECT_LE(sets[d].size(), std::min<std::uint64_t>(cap, len)) << "doc " << d;
            for (TopicId k : sets[d]) EXPECT_LT(k, 50u);
            if (sets[d].size() == cap) ++wide;
        }
        EXPECT_GT(wide, c.num_docs() / 2);  // long docs use all c topics
        TotalCount sum = 0;
        for (TotalCount n : count_topic_totals(blocks, 50)) sum += n;
        EXPECT_EQ(sum, static_cast<TotalCount>(c.num_tokens()));
    }
}

TEST(InitTopicsSparse, DeterministicForASeedAndDifferentAcrossSeeds) {
    const SyntheticCorpus c = corpus();
    auto a = grid(c, 150, 2);
    auto b = a;
    init_topics_sparse(a, c.num_docs(), 20, 4, 42);
    init_topics_sparse(b, c.num_docs(), 20, 4, 42);
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].topics, b[i].topics);
    init_topics_sparse(b, c.num_docs(), 20, 4, 43);
    EXPECT_NE(a[0].topics, b[0].topics);
}

// A document's topic set comes from the document alone: another grid draws its tokens among
// the same c topics, so the union over both grids still has at most c of them.
TEST(InitTopicsSparse, DocTopicSetsDoNotDependOnTheGrid) {
    const SyntheticCorpus c = corpus();
    auto one = grid(c, 150, 1);
    auto three = grid(c, 150, 3);
    init_topics_sparse(one, c.num_docs(), 1000, 2, 5);
    init_topics_sparse(three, c.num_docs(), 1000, 2, 5);
    const auto a = doc_sets(one, c.num_docs());
    const auto b = doc_sets(three, c.num_docs());
    for (std::uint32_t d = 0; d < c.num_docs(); ++d) {
        std::set<TopicId> both = a[d];
        both.insert(b[d].begin(), b[d].end());
        EXPECT_LE(both.size(), 2u) << "doc " << d;
    }
}

TEST(InitTopicsSparse, MoreTopicsPerDocThanKIsClampedToK) {
    const SyntheticCorpus c = corpus();
    auto blocks = grid(c, 150, 2);
    init_topics_sparse(blocks, c.num_docs(), 3, 10, 1);
    for (const auto& s : doc_sets(blocks, c.num_docs())) EXPECT_LE(s.size(), 3u);
    const auto totals = count_topic_totals(blocks, 3);
    for (TotalCount n : totals) EXPECT_GT(n, 0);
}

TEST(InitTopics, RandomThroughTheOptionsIsUniformInit) {
    const SyntheticCorpus c = corpus();
    auto a = grid(c, 150, 2);
    auto b = a;
    init_topics(a, 7, 42);
    init_topics(b, c.num_docs(), 7, InitOptions{}, 42);
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].topics, b[i].topics);
}

// Sequential: every token unassigned, so the tables built from the blocks are empty (and the
// doc rows still get their capacity from the docs' lengths).
TEST(InitTopics, SequentialLeavesEveryTokenUnassigned) {
    const SyntheticCorpus c = corpus();
    auto blocks = grid(c, 150, 2);
    init_topics(blocks, c.num_docs(), 7, InitOptions{InitMethod::kSequential, 4}, 42);
    std::uint64_t tokens = 0;
    for (const TokenBlock& b : blocks) {
        for (TopicId z : b.topics) EXPECT_EQ(z, kUnassignedTopic);
        tokens += b.num_tokens();
    }
    EXPECT_EQ(tokens, c.num_tokens());
    EXPECT_EQ(count_topic_totals(blocks, 7), std::vector<TotalCount>(7, 0));
    const DocTopicTable dt = DocTopicTable::from_blocks(7, c.num_docs(), blocks);
    const WordTopicTable wt = WordTopicTable::from_blocks(7, 150, blocks);
    for (DocId d = 0; d < c.num_docs(); ++d) {
        EXPECT_EQ(dt.row_total(d), 0u);
        EXPECT_EQ(dt.capacity(d),
                  std::min<std::uint64_t>(7, c.doc_offsets[d + 1] - c.doc_offsets[d]));
    }
    for (WordId w = 0; w < 150; ++w)
        for (TopicId k = 0; k < 7; ++k) EXPECT_EQ(wt.get(w, k), 0u);
}

TEST(InitTopics, OptionsAreParsedAndChecked) {
    EXPECT_EQ(parse_init_method("random"), InitMethod::kRandom);
    EXPECT_EQ(parse_init_method("sparse"), InitMethod::kSparse);
    EXPECT_EQ(parse_init_method("sequential"), InitMethod::kSequential);
    for (InitMethod m : {InitMethod::kRandom, InitMethod::kSparse, InitMethod::kSequential})
        EXPECT_EQ(parse_init_method(init_method_name(m)), m);
    EXPECT_THROW(parse_init_method("dense"), ConfigError);
    EXPECT_THROW((InitOptions{InitMethod::kSparse, 0}.validate()), ConfigError);
    for (double prior : {-1.0, std::nan(""), HUGE_VAL}) {
        InitOptions o{InitMethod::kSequential, 4};
        o.word_prior = prior;
        EXPECT_THROW(o.validate(), ConfigError) << prior;
    }
    EXPECT_NO_THROW((InitOptions{InitMethod::kSequential, 4}.validate()));  // 0: automatic
    // The automatic prior: the mean document length, within [1, 30].
    EXPECT_DOUBLE_EQ(auto_word_prior(7.9), 7.9);
    EXPECT_DOUBLE_EQ(auto_word_prior(227), 30);
    EXPECT_DOUBLE_EQ(auto_word_prior(0.5), 1);
    // The first sweep's β: the word prior spread over K, never below β; other starts keep β.
    InitOptions seq{InitMethod::kSequential, 4};
    seq.word_prior = 30;
    EXPECT_DOUBLE_EQ(first_sweep_beta(seq, 0.01, 100), 0.3);
    EXPECT_DOUBLE_EQ(first_sweep_beta(seq, 0.01, 10000), 0.01);
    seq.word_prior = 5;
    EXPECT_DOUBLE_EQ(first_sweep_beta(seq, 0.01, 1000), 0.01 > 0.005 ? 0.01 : 0.005);
    EXPECT_DOUBLE_EQ(first_sweep_beta(InitOptions{}, 0.01, 100), 0.01);
    const SyntheticCorpus c = corpus();
    auto blocks = grid(c, 150, 1);
    EXPECT_THROW(init_topics_sparse(blocks, c.num_docs(), 5, 0, 1), ConfigError);
}

}  // namespace
}  // namespace rotor::lda
