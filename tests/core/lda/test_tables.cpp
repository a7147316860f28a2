#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/lda/doc_topic_table.h"
#include "core/lda/word_topic_table.h"
#include "tests/core/lda/lda_test_util.h"

namespace rotor::lda {
namespace {

using testing::dense_doc_row;
using testing::dense_word_row;

TEST(DocTopicTable, RandomOpsMatchDenseReferenceAndStaySorted) {
    constexpr std::uint32_t K = 37;
    const std::vector<std::uint64_t> lengths = {0, 1, 5, 36, 37, 200};
    DocTopicTable table(K, lengths);
    ASSERT_EQ(table.num_docs(), lengths.size());
    for (DocId d = 0; d < lengths.size(); ++d) {
        EXPECT_EQ(table.capacity(d), std::min<std::uint64_t>(K, lengths[d]));
        // Each row's header starts its own cache line.
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(table.header(d)) % 64, 0u);
    }
    std::vector<std::vector<Count>> ref(lengths.size(), std::vector<Count>(K, 0));
    std::vector<std::uint64_t> held(lengths.size(), 0);
    Rng rng(7);
    for (int step = 0; step < 20000; ++step) {
        const auto d = static_cast<DocId>(rng.below(lengths.size()));
        const auto k = static_cast<TopicId>(rng.below(K));
        if (held[d] < lengths[d] && rng.below(2) == 0) {
            table.increment(d, k);
            ++ref[d][k];
            ++held[d];
        } else if (ref[d][k] > 0) {
            table.decrement(d, k);
            --ref[d][k];
            --held[d];
        }
        if (step % 97 == 0) {
            for (DocId dd = 0; dd < lengths.size(); ++dd) {
                EXPECT_EQ(dense_doc_row(table, dd), ref[dd]);
                const auto row = table.row(dd);
                for (std::size_t i = 0; i + 1 < row.size(); ++i) {
                    EXPECT_GE(row[i].count, row[i + 1].count);
                }
                for (const TopicCount& e : row) EXPECT_GT(e.count, 0u);
                EXPECT_EQ(table.row_total(dd), static_cast<TotalCount>(held[dd]));
            }
        }
    }
    EXPECT_EQ(table.get(5, 3), ref[5][3]);
    table.clear();
    for (DocId d = 0; d < lengths.size(); ++d) EXPECT_TRUE(table.row(d).empty());
    EXPECT_GT(table.memory_bytes(), 0u);
}

TEST(DocTopicTable, FromBlocksCountsEveryToken) {
    using testing::Tok;
    std::vector<TokenBlock> blocks = {testing::make_block({{0, 0, 1}, {0, 0, 1}, {2, 1, 3}}),
                                      testing::make_block({{1, 0, 2}, {1, 2, 1}})};
    const DocTopicTable t = DocTopicTable::from_blocks(4, 3, blocks);
    EXPECT_EQ(dense_doc_row(t, 0), (std::vector<Count>{0, 2, 1, 0}));
    EXPECT_EQ(dense_doc_row(t, 1), (std::vector<Count>{0, 0, 0, 1}));
    EXPECT_EQ(dense_doc_row(t, 2), (std::vector<Count>{0, 1, 0, 0}));
    EXPECT_EQ(t.capacity(0), 3u);
    EXPECT_EQ(t.row(0)[0].topic, 1u);  // the larger count first
}

TEST(WordTopicTable, DenseOnlyWhereSparseStopsSavingMemory) {
    constexpr std::uint32_t K = 10;
    const std::vector<std::uint64_t> freqs = {0, 1, 4, 5, 9, 10, 1000};
    const WordTopicTable t(K, freqs);
    EXPECT_FALSE(t.is_dense(0));
    EXPECT_FALSE(t.is_dense(1));
    EXPECT_FALSE(t.is_dense(2));  // 2 * 4 < 10
    EXPECT_TRUE(t.is_dense(3));   // 2 * 5 >= 10
    EXPECT_TRUE(t.is_dense(4));
    EXPECT_TRUE(t.is_dense(6));
    EXPECT_EQ(t.capacity(2), 4u);
    EXPECT_EQ(t.capacity(6), K);
}

TEST(WordTopicTable, BytesForIsWhatTheTableHolds) {
    for (std::uint32_t k : {1u, 10u, 16u, 100u, 1000u}) {
        const std::vector<std::uint64_t> freqs = {0, 1, 4, 5, 9, 10, 17, 300, 1000, 5000};
        EXPECT_EQ(WordTopicTable::bytes_for(k, freqs), WordTopicTable(k, freqs).memory_bytes())
            << "K = " << k;
    }
    EXPECT_EQ(WordTopicTable::bytes_for(8, {}), WordTopicTable(8, {}).memory_bytes());
}

TEST(WordTopicTable, RandomOpsMatchDenseReferenceForBothKinds) {
    constexpr std::uint32_t K = 50;
    const std::vector<std::uint64_t> freqs = {3, 20, 24, 25, 60, 5000};
    WordTopicTable table(K, freqs);
    std::vector<std::vector<Count>> ref(freqs.size(), std::vector<Count>(K, 0));
    std::vector<std::uint64_t> held(freqs.size(), 0);
    Rng rng(11);
    for (int step = 0; step < 20000; ++step) {
        const auto w = static_cast<WordId>(rng.below(freqs.size()));
        const auto k = static_cast<TopicId>(rng.below(K));
        if (held[w] < freqs[w] && rng.below(2) == 0) {
            table.increment(w, k);
            ++ref[w][k];
            ++held[w];
        } else if (ref[w][k] > 0) {
            table.decrement(w, k);
            --ref[w][k];
            --held[w];
        }
    }
    for (WordId w = 0; w < freqs.size(); ++w) {
        EXPECT_EQ(dense_word_row(table, w), ref[w]) << "word " << w;
        std::uint32_t nz = 0;
        for (Count c : ref[w]) nz += c != 0;
        EXPECT_EQ(table.nonzeros(w), nz);
        for (TopicId k = 0; k < K; ++k) EXPECT_EQ(table.get(w, k), ref[w][k]);
    }
}

TEST(WordTopicTable, PackUnpackRoundTripsBetweenTables) {
    constexpr std::uint32_t K = 16;
    const std::vector<std::uint64_t> freqs = {2, 7, 8, 40, 0};
    WordTopicTable a(K, freqs);
    Rng rng(3);
    for (WordId w = 0; w < freqs.size(); ++w) {
        for (std::uint64_t i = 0; i < freqs[w]; ++i)
            a.increment(w, static_cast<TopicId>(rng.below(K)));
    }
    const std::vector<WordId> words = {3, 0, 4, 1};
    std::vector<std::uint32_t> buf = {99};  // pack_rows appends
    a.pack_rows(words, buf);
    WordTopicTable b(K, freqs);
    b.increment(3, 5);  // stale content must be replaced, not added to
    const std::size_t used = b.unpack_rows(words, std::span<const std::uint32_t>(buf).subspan(1));
    EXPECT_EQ(used, buf.size() - 1);
    for (WordId w : words) EXPECT_EQ(dense_word_row(b, w), dense_word_row(a, w)) << w;
    EXPECT_EQ(b.nonzeros(2), 0u);  // not in the list: untouched
}

TEST(WordTopicTable, UnpackRejectsMalformedBuffers) {
    constexpr std::uint32_t K = 8;
    const std::vector<std::uint64_t> freqs = {2, 100};
    WordTopicTable t(K, freqs);
    const std::vector<WordId> words = {0};
    auto message_of = [&](std::vector<std::uint32_t> buf) -> std::string {
        try {
            t.unpack_rows(words, buf);
        } catch (const InputError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_NE(message_of({}).find("truncated"), std::string::npos);
    EXPECT_NE(message_of({1, 3}).find("truncated"), std::string::npos);
    EXPECT_NE(message_of({3, 0, 1, 1, 1, 2, 1}).find("capacity"), std::string::npos);
    EXPECT_NE(message_of({1, 8, 1}).find(">= K"), std::string::npos);
    EXPECT_NE(message_of({1, 2, 0}).find("zero count"), std::string::npos);
    EXPECT_EQ(message_of({1, 2, 2}), "");
    EXPECT_EQ(t.get(0, 2), 2u);
}

// The sparse rows' storage order (the order the sampler walks them) as well as their counts.
std::vector<std::pair<TopicId, Count>> stored_row(const WordTopicTable& t, WordId w) {
    std::vector<std::pair<TopicId, Count>> out;
    t.for_each_nonzero(w, [&](TopicId k, Count n) { out.emplace_back(k, n); });
    return out;
}

TEST(WordTopicTable, AddTokensLeavesRowsAsIncrementsWould) {
    // Big K, sparse rows of many topics, added in several calls (a word's tokens come from
    // several blocks): the bulk path must store the cells in increment()'s order.
    constexpr std::uint32_t K = 5000;
    const std::vector<std::uint64_t> freqs = {1200, 40, 2000, 9};
    WordTopicTable bulk(K, freqs);
    WordTopicTable one(K, freqs);
    std::vector<std::uint32_t> slot_of;
    Rng rng(3);
    for (int call = 0; call < 4; ++call) {
        for (WordId w = 0; w < freqs.size(); ++w) {
            std::vector<TopicId> topics(freqs[w] / 4);
            for (TopicId& k : topics) k = static_cast<TopicId>(rng.below(K / (1 + 4 * w)));
            if (w == 2) {
                bulk.add_tokens(w, topics);  // its own scratch
            } else {
                bulk.add_tokens(w, topics, slot_of);
            }
            for (const TopicId k : topics) one.increment(w, k);
        }
        ASSERT_EQ(slot_of.size(), K);
        for (const std::uint32_t s : slot_of) ASSERT_EQ(s, WordTopicTable::kNoSlot);
    }
    for (WordId w = 0; w < freqs.size(); ++w) {
        EXPECT_FALSE(bulk.is_dense(w)) << "word " << w;
        EXPECT_GT(bulk.nonzeros(w), w == 3 ? 1u : 30u) << "word " << w;
        EXPECT_EQ(stored_row(bulk, w), stored_row(one, w)) << "word " << w;
    }
}

TEST(WordTopicTable, FromBlocksAndMemory) {
    std::vector<TokenBlock> blocks = {testing::make_block({{0, 0, 1}, {0, 1, 1}, {2, 1, 3}}),
                                      testing::make_block({{1, 0, 2}, {0, 2, 0}})};
    const WordTopicTable t = WordTopicTable::from_blocks(4, 3, blocks);
    EXPECT_EQ(dense_word_row(t, 0), (std::vector<Count>{1, 2, 0, 0}));
    EXPECT_EQ(dense_word_row(t, 1), (std::vector<Count>{0, 0, 1, 0}));
    EXPECT_EQ(dense_word_row(t, 2), (std::vector<Count>{0, 0, 0, 1}));
    EXPECT_TRUE(t.is_dense(0));  // f = 3, 2 * 3 >= 4
    EXPECT_GE(t.memory_bytes(), 64u);
}

}  // namespace
}  // namespace rotor::lda
