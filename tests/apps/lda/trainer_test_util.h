// Shared helpers of the trainer tests: synthetic corpora and exact recounts of a trainer's state.
#pragma once

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "apps/lda/trainer.h"
#include "core/corpus/corpus.h"
#include "core/lda/synthetic_corpus.h"

namespace rotor::lda::testing {

inline core::Corpus to_corpus(const SyntheticCorpus& s, WordId vocab) {
    std::vector<std::uint64_t> labels(s.num_docs());
    for (std::uint32_t d = 0; d < s.num_docs(); ++d) labels[d] = d + 1;
    return core::Corpus(s.doc_offsets, s.word_ids, std::move(labels), vocab);
}

inline core::Corpus small_corpus(std::uint64_t seed = 3, std::uint32_t docs = 300,
                                 std::uint32_t vocab = 400) {
    SyntheticSpec spec;
    spec.num_docs = docs;
    spec.vocab_size = vocab;
    spec.num_topics = 8;
    spec.mean_doc_length = 60;
    spec.seed = seed;
    return to_corpus(make_synthetic_corpus(spec), vocab);
}

/// Checks that every table agrees with a recount from the blocks' assignments and with the
/// corpus: doc rows sum to doc lengths, word rows to word frequencies, totals to N.
inline void expect_consistent(const Trainer& t, const core::Corpus& corpus) {
    const std::uint32_t k_count = t.word_topic().num_topics();
    const DocId d_count = corpus.num_docs();
    const WordId w_count = corpus.num_words();
    std::vector<std::uint64_t> dk(static_cast<std::size_t>(d_count) * k_count, 0);
    std::vector<std::uint64_t> wk(static_cast<std::size_t>(w_count) * k_count, 0);
    std::vector<TotalCount> nk(k_count, 0);
    std::uint64_t tokens = 0;
    for (const TokenBlock& b : t.blocks()) {
        for (std::size_t j = 0; j < b.num_words(); ++j) {
            for (auto i = b.word_offsets[j]; i < b.word_offsets[j + 1]; ++i) {
                ASSERT_LT(b.topics[i], k_count);
                ++dk[static_cast<std::size_t>(b.docs[i]) * k_count + b.topics[i]];
                ++wk[static_cast<std::size_t>(b.words[j]) * k_count + b.topics[i]];
                ++nk[b.topics[i]];
                ++tokens;
            }
        }
    }
    ASSERT_EQ(tokens, corpus.num_tokens());
    EXPECT_EQ(t.topic_totals(), nk);
    for (DocId d = 0; d < d_count; ++d) {
        std::uint64_t sum = 0;
        for (TopicId k = 0; k < k_count; ++k) {
            ASSERT_EQ(t.doc_topic().get(d, k), dk[static_cast<std::size_t>(d) * k_count + k])
                << "doc " << d << " topic " << k;
            sum += t.doc_topic().get(d, k);
        }
        ASSERT_EQ(sum, corpus.doc_length(d));
    }
    const auto freq = corpus.word_frequencies();
    for (WordId w = 0; w < w_count; ++w) {
        std::uint64_t sum = 0;
        for (TopicId k = 0; k < k_count; ++k) {
            ASSERT_EQ(t.word_topic().get(w, k), wk[static_cast<std::size_t>(w) * k_count + k])
                << "word " << w << " topic " << k;
            sum += t.word_topic().get(w, k);
        }
        ASSERT_EQ(sum, static_cast<std::uint64_t>(freq[w]));
    }
}

}  // namespace rotor::lda::testing
