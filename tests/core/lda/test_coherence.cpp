// UMass coherence: a hand-computed value, agreement with a naive set-based count on a random
// corpus, bit-identical agreement with the per-pair list intersection it replaced (also at
// K = 20,000 lists sharing frequent words), ranking order, planted topics beating random word
// lists, and input errors.
#include "core/lda/coherence.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
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

// The definition as computed before pairs were shared: every pair's sorted document lists
// intersected anew, terms summed in list order.
double umass_by_intersection(const core::Corpus& corpus, const std::vector<WordId>& list) {
    std::vector<std::vector<DocId>> docs_of(list.size());
    for (DocId d = 0; d < corpus.num_docs(); ++d)
        for (const WordId w : corpus.doc(d))
            for (std::size_t i = 0; i < list.size(); ++i)
                if (list[i] == w && (docs_of[i].empty() || docs_of[i].back() != d))
                    docs_of[i].push_back(d);
    double c = 0;
    for (std::size_t m = 1; m < list.size(); ++m) {
        for (std::size_t l = 0; l < m; ++l) {
            std::vector<DocId> both;
            std::set_intersection(docs_of[m].begin(), docs_of[m].end(), docs_of[l].begin(),
                                  docs_of[l].end(), std::back_inserter(both));
            c += std::log((static_cast<double>(both.size()) + 1.0) /
                          static_cast<double>(docs_of[l].size()));
        }
    }
    return c;
}

// A random corpus of D docs over W words, skewed so that a few words are in most documents.
core::Corpus skewed_corpus(Rng& rng, std::uint32_t num_docs, std::uint32_t num_words) {
    std::vector<std::vector<WordId>> docs(num_docs);
    for (auto& d : docs) {
        const auto len = 1 + rng.below(30);
        for (std::uint64_t i = 0; i < len; ++i) {
            const double u = rng.uniform();
            d.push_back(static_cast<WordId>(static_cast<double>(num_words) * u * u * u));
        }
    }
    return core::Corpus::from_docs(docs, num_words);
}

// Lists of distinct words that occur in the corpus, drawn with the corpus' skew.
std::vector<std::vector<WordId>> random_lists(Rng& rng, const core::Corpus& corpus,
                                              std::size_t count, std::size_t len) {
    const auto freq = corpus.word_frequencies();
    std::vector<std::vector<WordId>> top(count);
    for (auto& list : top) {
        while (list.size() < len) {
            const WordId w = corpus.doc(static_cast<DocId>(rng.below(corpus.num_docs())))[0];
            if (freq[w] > 0 && std::find(list.begin(), list.end(), w) == list.end())
                list.push_back(w);
        }
    }
    return top;
}

TEST(UMass, SharedPairsGiveTheNumbersOfPerPairIntersection) {
    Rng rng(5);
    const core::Corpus corpus = skewed_corpus(rng, 400, 60);
    // Many lists over few words: most pairs recur, in both orders.
    std::vector<std::vector<WordId>> top = random_lists(rng, corpus, 300, 8);
    top.push_back({});
    top.push_back({top[0][0]});
    top.push_back({top[0][1], top[0][0]});
    const Coherence c = umass_coherence(corpus, top);
    ASSERT_EQ(c.per_topic.size(), top.size());
    double sum = 0;
    for (std::size_t t = 0; t < top.size(); ++t) {
        const double expected = umass_by_intersection(corpus, top[t]);
        EXPECT_EQ(c.per_topic[t], expected) << "topic " << t;
        sum += expected;
    }
    EXPECT_EQ(c.mean, sum / static_cast<double>(top.size()));
}

TEST(UMass, TwentyThousandListsOnASmallCorpus) {
    // K = 20,000 lists of 10 words from 3,000 documents: 900,000 pair terms, most of them
    // among a few hundred frequent words. Counting each distinct pair once keeps this fast.
    Rng rng(11);
    const core::Corpus corpus = skewed_corpus(rng, 3000, 5000);
    const std::vector<std::vector<WordId>> top = random_lists(rng, corpus, 20000, 10);
    const Coherence c = umass_coherence(corpus, top);
    ASSERT_EQ(c.per_topic.size(), top.size());
    for (std::size_t t = 0; t < top.size(); t += 997)
        EXPECT_EQ(c.per_topic[t], umass_by_intersection(corpus, top[t])) << "topic " << t;
}

TEST(UMass, MemoryBoundCoversTheLists) {
    EXPECT_EQ(umass_coherence_bytes(100, 10, 5, 3, 1), 0u);
    const std::uint64_t small = umass_coherence_bytes(1000, 100, 50, 10, 10);
    EXPECT_GE(small, 10u * 45 * 12 + 4 * 1000);
    EXPECT_GT(umass_coherence_bytes(1000, 100, 50, 20, 10), small);
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
