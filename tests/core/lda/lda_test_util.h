// Builders and brute-force recounts shared by the core/lda tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <thread>
#include <tuple>
#include <vector>

#include "core/base/rng.h"
#include "core/base/types.h"
#include "core/lda/doc_topic_table.h"
#include "core/lda/inference.h"
#include "core/lda/token_block.h"
#include "core/lda/word_topic_table.h"

namespace rotor::lda::testing {

/// A RangeLoop on `threads` real std::threads, each taking one contiguous slice.
inline RangeLoop thread_loop(int threads) {
    return [threads](std::int64_t begin, std::int64_t end,
                     const std::function<void(std::int64_t, std::int64_t)>& body) {
        std::vector<std::thread> pool;
        const std::int64_t n = end - begin;
        for (int t = 0; t < threads; ++t) {
            const std::int64_t lo = begin + n * t / threads;
            const std::int64_t hi = begin + n * (t + 1) / threads;
            if (lo < hi) pool.emplace_back([&body, lo, hi] { body(lo, hi); });
        }
        for (auto& th : pool) th.join();
    };
}

/// One token: (word, doc, topic).
struct Tok {
    WordId word;
    DocId doc;
    TopicId topic;
};

/// A word-major block holding `toks` (sorted by word, then doc, as build_blocks does).
inline TokenBlock make_block(std::vector<Tok> toks) {
    std::stable_sort(toks.begin(), toks.end(), [](const Tok& a, const Tok& b) {
        return std::tie(a.word, a.doc) < std::tie(b.word, b.doc);
    });
    TokenBlock b;
    for (const Tok& t : toks) {
        if (b.words.empty() || b.words.back() != t.word) {
            if (!b.words.empty()) b.word_offsets.push_back(b.docs.size());
            b.words.push_back(t.word);
        }
        b.docs.push_back(t.doc);
        b.topics.push_back(t.topic);
    }
    if (!b.words.empty()) b.word_offsets.push_back(b.docs.size());
    return b;
}

/// The background of the joint tests of two tokens of (word 0, doc 0) over 20 words and 8 docs:
/// `fixed`, then 3K tokens of words 1-19 in docs 1-7 with uniform topics drawn from Rng(seed), so
/// that doc 0 stays short and word 0 rare (where one token goes changes the next one's
/// conditional a lot).
inline std::vector<Tok> short_doc_background(std::uint32_t K, std::vector<Tok> fixed,
                                             std::uint64_t seed) {
    Rng r(seed);
    for (std::uint32_t i = 0; i < 3 * K; ++i)
        fixed.push_back({static_cast<WordId>(1 + r.below(19)), static_cast<DocId>(1 + r.below(7)),
                         static_cast<TopicId>(r.below(K))});
    return fixed;
}

/// Dense recount n[row][k] from the blocks, by doc (by_doc) or by word.
inline std::vector<std::vector<std::int64_t>> recount(const std::vector<TokenBlock>& blocks,
                                                      std::uint32_t rows, std::uint32_t K,
                                                      bool by_doc) {
    std::vector<std::vector<std::int64_t>> n(rows, std::vector<std::int64_t>(K, 0));
    for (const TokenBlock& b : blocks) {
        for (std::size_t j = 0; j < b.words.size(); ++j) {
            for (TokenIndex t = b.word_offsets[j]; t < b.word_offsets[j + 1]; ++t) {
                ++n[by_doc ? b.docs[t] : b.words[j]][b.topics[t]];
            }
        }
    }
    return n;
}

/// Dense copy of a doc row / word row.
inline std::vector<Count> dense_doc_row(const DocTopicTable& t, DocId d) {
    std::vector<Count> row(t.num_topics(), 0);
    for (const TopicCount& e : t.row(d)) row[e.topic] = e.count;
    return row;
}
inline std::vector<Count> dense_word_row(const WordTopicTable& t, WordId w) {
    std::vector<Count> row(t.num_topics(), 0);
    t.for_each_nonzero(w, [&](TopicId k, Count c) { row[k] = c; });
    return row;
}

}  // namespace rotor::lda::testing
