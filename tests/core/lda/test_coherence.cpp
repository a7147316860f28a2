// UMass coherence: a hand-computed value, agreement with a naive set-based count on a random
// corpus, ranking order, planted topics beating random word lists, and input errors.
#include "core/lda/coherence.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/lda/synthetic_corpus.h"

namespace rotor::lda {
namespace {

// docs {0,1}, {0,0}, {0}, {1,2}, {2}: D(0)=3, D(1)=2, D(2)=2, D(0,1)=1, D(0,2)=0, D(1,2)=1.
core::Corpus hand_corpus() {
    return core::Corpus::from_docs({{0, 1}, {0, 0}, {0}, {1, 2}, {2}}, 4);
}

TEST(UMass, HandComputedValue) {
    const Coherence c = umass_coherence(hand_corpus(), {{0, 1, 2}});
    ASSERT_EQ(c.per_topic.size(), 1u);
    // (v2=1 | v1=0): ln(2/3); (v3=2 | v1=0): ln(1/3); (v3=2 | v2=1): ln(2/2).
    const double expected = std::log(2.0 / 3.0) + std::log(1.0 / 3.0) + 0.0;
    EXPECT_NEAR(c.per_topic[0], expected, 1e-12);
    EXPECT_NEAR(c.mean, expected, 1e-12);
}

TEST(UMass, DenominatorIsTheHigherRankedWord) {
    const Coherence c = umass_coherence(hand_corpus(), {{0, 1}, {1, 0}});
    EXPECT_NEAR(c.per_topic[0], std::log(2.0 / 3.0), 1e-12);
    EXPECT_NEAR(c.per_topic[1], std::log(2.0 / 2.0), 1e-12);
    EXPECT_NEAR(c.mean, (std::log(2.0 / 3.0) + 0.0) / 2, 1e-12);
}

TEST(UMass, AgreesWithNaiveSetCounting) {
    Rng rng(17);
    std::vector<std::vector<WordId>> docs(200);
    for (auto& d : docs) {
        const auto len = 1 + rng.below(15);
        for (std::uint64_t i = 0; i < len; ++i)
            d.push_back(static_cast<WordId>(rng.below(25) * rng.below(2) + rng.below(5)));
    }
    const core::Corpus corpus = core::Corpus::from_docs(docs, 30);
    std::vector<std::set<WordId>> sets;
    for (const auto& d : docs) sets.emplace_back(d.begin(), d.end());
    auto df = [&](WordId a) {
        return static_cast<double>(
            std::count_if(sets.begin(), sets.end(), [&](const auto& s) { return s.count(a) > 0; }));
    };
    auto co = [&](WordId a, WordId b) {
        return static_cast<double>(std::count_if(sets.begin(), sets.end(), [&](const auto& s) {
            return s.count(a) > 0 && s.count(b) > 0;
        }));
    };
    const std::vector<std::vector<WordId>> top = {{0, 1, 2, 3, 4}, {4, 10, 2, 20}, {7, 3}};
    const Coherence c = umass_coherence(corpus, top);
    double mean = 0;
    for (std::size_t t = 0; t < top.size(); ++t) {
        double expected = 0;
        for (std::size_t m = 1; m < top[t].size(); ++m)
            for (std::size_t l = 0; l < m; ++l)
                expected += std::log((co(top[t][m], top[t][l]) + 1) / df(top[t][l]));
        EXPECT_NEAR(c.per_topic[t], expected, 1e-9) << "topic " << t;
        mean += expected / 3;
    }
    EXPECT_NEAR(c.mean, mean, 1e-9);
}

TEST(UMass, PlantedTopicsAreMoreCoherentThanRandomWordLists) {
    SyntheticSpec spec;
    spec.num_docs = 500;
    spec.vocab_size = 400;
    spec.num_topics = 8;
    spec.mean_doc_length = 40;
    spec.doc_alpha = 0.1;
    spec.seed = 2;
    const SyntheticCorpus s = make_synthetic_corpus(spec);
    std::vector<std::vector<WordId>> docs;
    for (std::uint32_t d = 0; d < s.num_docs(); ++d)
        docs.emplace_back(s.word_ids.begin() + static_cast<std::ptrdiff_t>(s.doc_offsets[d]),
                          s.word_ids.begin() + static_cast<std::ptrdiff_t>(s.doc_offsets[d + 1]));
    const core::Corpus corpus = core::Corpus::from_docs(docs, 400);
    const auto freq = corpus.word_frequencies();

    // Each planted topic's 10 most probable words vs. 10 frequent words taken across topics.
    std::vector<std::vector<WordId>> planted_top, mixed_top;
    for (const auto& row : s.topic_word) {
        std::vector<WordId> order(400);
        for (WordId w = 0; w < 400; ++w) order[w] = w;
        std::partial_sort(order.begin(), order.begin() + 10, order.end(),
                          [&](WordId a, WordId b) { return row[a] > row[b]; });
        order.resize(10);
        planted_top.push_back(order);
    }
    for (std::size_t t = 0; t < planted_top.size(); ++t) {
        std::vector<WordId> mixed;
        for (std::size_t i = 0; i < 10; ++i)
            mixed.push_back(planted_top[(t + i) % planted_top.size()][i]);
        mixed_top.push_back(mixed);
    }
    for (const auto& list : mixed_top)
        for (const WordId w : list) ASSERT_GT(freq[w], 0);
    const Coherence planted = umass_coherence(corpus, planted_top);
    const Coherence mixed = umass_coherence(corpus, mixed_top);
    EXPECT_GT(planted.mean, mixed.mean + 5.0);
    EXPECT_LE(planted.mean, 0.0 + 1e-9 + 45 * std::log(2.0));
}

TEST(UMass, BadListsAreInputErrors) {
    const core::Corpus c = hand_corpus();
    EXPECT_THROW(umass_coherence(c, {{0, 4}}), InputError);  // id >= W
    EXPECT_THROW(umass_coherence(c, {{0, 3}}), InputError);  // word 3 in no document
    EXPECT_THROW(umass_coherence(c, {{0, 1, 0}}), InputError);
    const Coherence empty = umass_coherence(c, {});
    EXPECT_TRUE(empty.per_topic.empty());
    EXPECT_EQ(empty.mean, 0.0);
}

}  // namespace
}  // namespace rotor::lda
