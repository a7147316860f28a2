#include "core/corpus/corpus_arrays.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/base/error.h"

namespace rotor::core {
namespace {

using I = std::vector<std::int64_t>;
using V = std::vector<double>;

/// The message of the InputError that `f` throws ("" when it throws none).
template <class F>
std::string input_error(F&& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

TEST(CorpusFromCounts, ExpandsCountsInStoredOrder) {
    // Row 0: word 2 twice, word 0 once; row 1 empty; row 2: word 1 three times (a zero count
    // stored explicitly adds nothing).
    const Corpus c = corpus_from_counts(I{0, 2, 2, 4}, I{2, 0, 1, 2}, V{2, 1, 3, 0}, 3, "X");
    ASSERT_EQ(c.num_docs(), 3U);
    EXPECT_EQ(c.num_words(), 3U);
    EXPECT_EQ(c.num_tokens(), 6U);
    EXPECT_EQ(std::vector<WordId>(c.doc(0).begin(), c.doc(0).end()),
              (std::vector<WordId>{2, 2, 0}));
    EXPECT_TRUE(c.doc(1).empty());
    EXPECT_EQ(std::vector<WordId>(c.doc(2).begin(), c.doc(2).end()),
              (std::vector<WordId>{1, 1, 1}));
    EXPECT_EQ(std::vector<std::uint64_t>(c.doc_labels().begin(), c.doc_labels().end()),
              (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(CorpusFromCounts, TheSameCorpusAsTheBuilder) {
    const Corpus a = corpus_from_counts(I{0, 2, 3}, I{0, 4, 1}, V{1, 2, 1}, 5, "X");
    const Corpus b = CorpusBuilder(5).doc({0, 4, 4}).doc({1}).build();
    EXPECT_TRUE(a == b);
}

TEST(CorpusFromCounts, NoRowsIsAnEmptyCorpus) {
    const Corpus c = corpus_from_counts(I{0}, I{}, V{}, 4, "X");
    EXPECT_EQ(c.num_docs(), 0U);
    EXPECT_EQ(c.num_words(), 4U);
}

TEST(CorpusFromCounts, BadCountsNameTheArrayRowAndColumn) {
    EXPECT_EQ(input_error([] {
                  corpus_from_counts(I{0, 1, 3}, I{0, 1, 2}, V{1, -1, 2}, 3, "X");
              }),
              "X: row 1, column 1: count -1 is not a non-negative integer");
    EXPECT_NE(input_error([] {
                  corpus_from_counts(I{0, 1}, I{0}, V{std::nan("")}, 3, "X");
              }).find("X: row 0, column 0: value NaN is not finite"),
              std::string::npos);
    EXPECT_NE(
        input_error([] {
            corpus_from_counts(I{0, 1}, I{0}, V{std::numeric_limits<double>::infinity()}, 3, "X");
        }).find("value inf is not finite"),
        std::string::npos);
    EXPECT_EQ(input_error([] {
                  corpus_from_counts(I{0, 0, 1}, I{0}, V{0.5}, 3, "X");
              }),
              "X: row 1, column 0: count 0.5 is not a non-negative integer");
}

TEST(CorpusFromCounts, BadShapesAreRefused) {
    EXPECT_EQ(input_error([] {
                  corpus_from_counts(I{0, 1}, I{3}, V{1}, 3, "X");
              }),
              "X: row 0: column 3 is outside [0, 3)");
    EXPECT_EQ(input_error([] {
                  corpus_from_counts(I{0, 1}, I{-1}, V{1}, 3, "X");
              }),
              "X: row 0: column -1 is outside [0, 3)");
    EXPECT_EQ(input_error([] {
                  corpus_from_counts(I{0, 2}, I{0}, V{1, 2}, 3, "X");
              }),
              "X: 1 column indices but 2 values");
    EXPECT_EQ(input_error([] {
                  corpus_from_counts(I{0, 2}, I{0}, V{1}, 3, "X");
              }),
              "X: indptr ends at 2 but there are 1 entries");
    EXPECT_EQ(input_error([] {
                  corpus_from_counts(I{1, 1}, I{0}, V{1}, 3, "X");
              }),
              "X: indptr[0] is 1, not 0");
    EXPECT_EQ(input_error([] {
                  corpus_from_counts(I{0, 2, 1, 2}, I{0, 1}, V{1, 1}, 3, "X");
              }),
              "X: row 1: indptr falls from 2 to 1");
    EXPECT_NE(input_error([] { corpus_from_counts(I{}, I{}, V{}, 3, "X"); }), "");
}

TEST(CorpusFromCounts, LimitsAreCheckedBeforeAllocating) {
    ReadLimits limits;
    limits.max_tokens = 10;
    EXPECT_NE(input_error([&] {
                  corpus_from_counts(I{0, 1}, I{0}, V{1e15}, 3, "X", limits);
              }).find("1000000000000000 tokens"),
              std::string::npos);
    limits.max_words = 2;
    EXPECT_NE(input_error([&] { corpus_from_counts(I{0}, I{}, V{}, 3, "X", limits); }), "");
}

TEST(CorpusFromTokens, KeepsTheTokenOrder) {
    const Corpus c = corpus_from_tokens(I{0, 3, 4}, I{2, 0, 2, 1}, 3, "docs");
    EXPECT_TRUE(c == CorpusBuilder(3).doc({2, 0, 2}).doc({1}).build());
    EXPECT_EQ(input_error([] {
                  corpus_from_tokens(I{0, 1, 2}, I{0, 7}, 3, "docs");
              }),
              "docs: row 1: word id 7 is outside [0, 3)");
    EXPECT_EQ(input_error([] {
                  corpus_from_tokens(I{0, 3}, I{0, 1}, 3, "docs");
              }),
              "docs: offsets ends at 3 but there are 2 entries");
}

}  // namespace
}  // namespace rotor::core
