#include "core/corpus/corpus.h"

#include <gtest/gtest.h>

#include <vector>

namespace rotor::core {
namespace {

std::vector<WordId> as_vec(std::span<const WordId> s) { return {s.begin(), s.end()}; }

TEST(Corpus, EmptyCorpus) {
    const Corpus c;
    EXPECT_EQ(c.num_docs(), 0u);
    EXPECT_EQ(c.num_words(), 0u);
    EXPECT_EQ(c.num_tokens(), 0u);
    ASSERT_EQ(c.doc_offsets().size(), 1u);
    EXPECT_EQ(c.doc_offsets()[0], 0u);
}

TEST(CorpusBuilder, BuildsDocMajorCsrWithLabels) {
    const Corpus c = CorpusBuilder(5).doc({0, 1, 1}).doc({}).doc({4}).build();
    EXPECT_EQ(c.num_docs(), 3u);
    EXPECT_EQ(c.num_words(), 5u);
    EXPECT_EQ(c.num_tokens(), 4u);
    EXPECT_EQ(std::vector<TokenIndex>(c.doc_offsets().begin(), c.doc_offsets().end()),
              (std::vector<TokenIndex>{0, 3, 3, 4}));
    EXPECT_EQ(as_vec(c.doc(0)), (std::vector<WordId>{0, 1, 1}));
    EXPECT_TRUE(c.doc(1).empty());
    EXPECT_EQ(as_vec(c.doc(2)), (std::vector<WordId>{4}));
    EXPECT_EQ(std::vector<std::uint64_t>(c.doc_labels().begin(), c.doc_labels().end()),
              (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(CorpusBuilder, InfersTheVocabularySizeAndTakesCountsAndLabels) {
    CorpusBuilder b;
    b.begin_doc(17).add(2, 3).add(0);
    b.begin_doc(40).add(6);
    const Corpus c = b.build();
    EXPECT_EQ(c.num_words(), 7u);
    EXPECT_EQ(as_vec(c.doc(0)), (std::vector<WordId>{2, 2, 2, 0}));
    EXPECT_EQ(c.doc_labels()[1], 40u);
    EXPECT_EQ(b.num_docs(), 0u);  // the builder is reusable
}

TEST(Corpus, FromDocsAndWordFrequencies) {
    const Corpus c = Corpus::from_docs({{0, 2, 2}, {2}, {}}, 4);
    EXPECT_EQ(c.word_frequencies(), (std::vector<TotalCount>{1, 0, 3, 0}));
}

TEST(Corpus, WordMajorViewInvertsTheDocMajorArrays) {
    const Corpus c = Corpus::from_docs({{3, 1, 3}, {0}, {1, 1, 3}}, 5);
    const WordMajorView v = c.word_major();
    ASSERT_EQ(v.offsets.size(), 6u);
    EXPECT_EQ(v.offsets.back(), c.num_tokens());
    EXPECT_EQ(std::vector<DocId>(v.docs_of(3).begin(), v.docs_of(3).end()),
              (std::vector<DocId>{0, 0, 2}));
    EXPECT_EQ(std::vector<DocId>(v.docs_of(1).begin(), v.docs_of(1).end()),
              (std::vector<DocId>{0, 2, 2}));
    EXPECT_TRUE(v.docs_of(2).empty());
    EXPECT_TRUE(v.docs_of(4).empty());
    // Every token appears once, and its position points back to the same word and doc.
    std::vector<int> seen(c.num_tokens(), 0);
    for (WordId w = 0; w < c.num_words(); ++w) {
        for (std::size_t k = 0; k < v.docs_of(w).size(); ++k) {
            const TokenIndex pos = v.positions_of(w)[k];
            ++seen[pos];
            EXPECT_EQ(c.word_ids()[pos], w);
            const DocId d = v.docs_of(w)[k];
            EXPECT_GE(pos, c.doc_offsets()[d]);
            EXPECT_LT(pos, c.doc_offsets()[d + 1]);
        }
    }
    EXPECT_EQ(seen, std::vector<int>(c.num_tokens(), 1));
}

TEST(Corpus, CopiesShareStorageAndCompareEqual) {
    const Corpus a = Corpus::from_docs({{1, 2}, {0}}, 3);
    const Corpus b = a;
    EXPECT_EQ(a.word_ids().data(), b.word_ids().data());
    EXPECT_EQ(a, b);
    EXPECT_FALSE(a == Corpus::from_docs({{1, 2}, {1}}, 3));
    EXPECT_FALSE(a == Corpus::from_docs({{1, 2}, {0}}, 4));
}

TEST(CorpusDeath, WordIdBeyondTheVocabularyIsABug) {
    EXPECT_DEATH(CorpusBuilder(2).doc({0, 2}), "num_words");
}

}  // namespace
}  // namespace rotor::core
