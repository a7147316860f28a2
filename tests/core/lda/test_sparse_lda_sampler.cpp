#include "core/lda/sparse_lda_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "core/base/rng.h"
#include "core/lda/synthetic_corpus.h"
#include "tests/core/lda/chi2_test_util.h"
#include "tests/core/lda/lda_test_util.h"

namespace rotor::lda {
namespace {

using testing::Tok;

using testing::chi2;
using testing::chi2_threshold;

enum class Dominant { kSmoothing, kWord, kDoc };

struct Scenario {
    LdaParams params;
    std::uint32_t vocab = 0;
    std::uint32_t docs = 0;
    std::vector<Tok> background;
};

// Word 0 in doc 0 is the token under test (its own topic is added by the caller).
Scenario make_scenario(Dominant kind, std::uint32_t K) {
    Scenario s;
    s.params.num_topics = K;
    Rng rng(1000 + K);
    auto skewed_topic = [&] { return static_cast<TopicId>(rng.below(rng.below(K) + 1)); };
    switch (kind) {
        case Dominant::kSmoothing:
            // Large alpha and beta, tiny counts: alpha_k beta / (n_k + V beta) carries the mass.
            s.params.alpha = 5.0;
            s.params.beta = 2.0;
            s.vocab = 50;
            s.docs = 10;
            s.background.push_back({1, 0, 0});
            s.background.push_back({0, 1, 1 % K});
            for (std::uint32_t i = 0; i < 3 * K; ++i) {
                s.background.push_back({static_cast<WordId>(2 + rng.below(48)),
                                        static_cast<DocId>(2 + rng.below(8)), skewed_topic()});
            }
            break;
        case Dominant::kWord:
            // The word is frequent elsewhere, the doc nearly empty: alpha_k n_wk / (n_k + V beta).
            s.params.alpha = 1.0;
            s.params.beta = 0.01;
            s.vocab = 1000;
            s.docs = 51;
            s.background.push_back({5, 0, 1 % K});
            for (std::uint32_t i = 0; i < 20 * K; ++i) {
                s.background.push_back({0, static_cast<DocId>(1 + rng.below(50)), skewed_topic()});
            }
            break;
        case Dominant::kDoc:
            // A long doc, a small alpha: n_dk (n_wk + beta) / (n_k + V beta).
            s.params.alpha = 0.01;
            s.params.beta = 0.01;
            s.vocab = 1000;
            s.docs = 51;
            for (std::uint32_t i = 0; i < 4 * K; ++i) {
                s.background.push_back(
                    {static_cast<WordId>(1 + rng.below(999)), 0, skewed_topic()});
            }
            for (std::uint32_t i = 0; i < 10 * K; ++i) {
                s.background.push_back(
                    {0, static_cast<DocId>(1 + rng.below(50)), static_cast<TopicId>(rng.below(K))});
            }
            break;
    }
    return s;
}

// The draws fit `exact` (χ²), and the state exercised the bucket it was built for.
void expect_fit_in_bucket(const std::vector<std::uint64_t>& hist, const std::vector<double>& exact,
                          const SparseLdaSampler::Stats& st, Dominant kind, int draws) {
    const auto [stat, df] = chi2(hist, exact);
    EXPECT_LT(stat, chi2_threshold(df)) << "df " << df;
    EXPECT_GT(df, 0);
    const std::uint64_t dominant = kind == Dominant::kSmoothing ? st.smoothing
                                   : kind == Dominant::kWord    ? st.word
                                                                : st.doc;
    EXPECT_GT(dominant * 2, static_cast<std::uint64_t>(draws));
}

// Removes one (doc, word, topic) token from dense copies.
void run_single_token(Dominant kind, std::uint32_t K, int draws) {
    SCOPED_TRACE(std::to_string(static_cast<int>(kind)) + " K=" + std::to_string(K));
    const Scenario sc = make_scenario(kind, K);
    std::vector<TokenBlock> blocks = {testing::make_block(sc.background),
                                      testing::make_block({{0, 0, 0}})};
    DocTopicTable dt = DocTopicTable::from_blocks(K, sc.docs, blocks);
    WordTopicTable wt = WordTopicTable::from_blocks(K, sc.vocab, blocks);
    std::vector<TotalCount> totals = count_topic_totals(blocks, K);

    // The exact conditional of the token given all the others.
    std::vector<Count> nd = testing::dense_doc_row(dt, 0), nw = testing::dense_word_row(wt, 0);
    std::vector<TotalCount> nk = totals;
    --nd[0];
    --nw[0];
    --nk[0];
    const std::vector<double> exact =
        SparseLdaSampler::conditional(nd, nw, nk, sc.params, sc.vocab);

    SparseLdaSampler sampler(sc.params, sc.vocab);
    Rng rng = Rng::from({77, K, static_cast<std::uint64_t>(kind)});
    std::vector<std::uint64_t> hist(K, 0);
    for (int i = 0; i < draws; ++i) {
        ASSERT_EQ(sampler.sample_block(blocks[1], dt, wt, totals, rng, nullptr), 1u);
        ++hist[blocks[1].topics[0]];
    }
    expect_fit_in_bucket(hist, exact, sampler.stats(), kind, draws);
    // Nothing but the one token moved: the tables still hold the background exactly.
    EXPECT_EQ(totals, count_topic_totals(blocks, K));
}

class SingleTokenChi2 : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(SingleTokenChi2, SmoothingDominated) {
    run_single_token(Dominant::kSmoothing, GetParam(), 60000);
}
TEST_P(SingleTokenChi2, WordBucketDominated) {
    run_single_token(Dominant::kWord, GetParam(), 60000);
}
TEST_P(SingleTokenChi2, DocBucketDominated) { run_single_token(Dominant::kDoc, GetParam(), 60000); }

INSTANTIATE_TEST_SUITE_P(Topics, SingleTokenChi2, ::testing::Values(4u, 64u, 1024u));

// --init sequential: an unassigned token is in no count, so its draw must follow the conditional
// of the other tokens' counts as they are (nothing removed), and the drawn topic is added.
void run_unassigned_token(Dominant kind, std::uint32_t K, int draws) {
    SCOPED_TRACE(std::to_string(static_cast<int>(kind)) + " K=" + std::to_string(K));
    const Scenario sc = make_scenario(kind, K);
    std::vector<TokenBlock> blocks = {testing::make_block(sc.background),
                                      testing::make_block({{0, 0, kUnassignedTopic}})};
    DocTopicTable dt = DocTopicTable::from_blocks(K, sc.docs, blocks);
    WordTopicTable wt = WordTopicTable::from_blocks(K, sc.vocab, blocks);
    std::vector<TotalCount> totals = count_topic_totals(blocks, K);
    const std::vector<TotalCount> background_totals = totals;
    ASSERT_EQ(dt.capacity(0), std::min<TotalCount>(K, dt.row_total(0) + 1))
        << "the doc's length counts the unassigned token";
    const std::vector<double> exact = SparseLdaSampler::conditional(
        testing::dense_doc_row(dt, 0), testing::dense_word_row(wt, 0), totals, sc.params, sc.vocab);

    SparseLdaSampler sampler(sc.params, sc.vocab);
    Rng rng = Rng::from({78, K, static_cast<std::uint64_t>(kind)});
    std::vector<std::uint64_t> hist(K, 0);
    for (int i = 0; i < draws; ++i) {
        blocks[1].topics[0] = kUnassignedTopic;
        ASSERT_EQ(sampler.sample_block(blocks[1], dt, wt, totals, rng, nullptr), 1u);
        const TopicId k = blocks[1].topics[0];
        ASSERT_LT(k, K);
        ++hist[k];
        // The token was added everywhere: recounts agree, then take it out again.
        if (i < 50) {
            ASSERT_EQ(totals, count_topic_totals(blocks, K));
            ASSERT_EQ(dt.get(0, k), testing::recount(blocks, sc.docs, K, true)[0][k]);
            ASSERT_EQ(wt.get(0, k), testing::recount(blocks, sc.vocab, K, false)[0][k]);
        }
        dt.decrement(0, k);
        wt.decrement(0, k);
        --totals[k];
    }
    EXPECT_EQ(totals, background_totals);
    expect_fit_in_bucket(hist, exact, sampler.stats(), kind, draws);
}

class UnassignedTokenChi2 : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(UnassignedTokenChi2, SmoothingDominated) {
    run_unassigned_token(Dominant::kSmoothing, GetParam(), 40000);
}
TEST_P(UnassignedTokenChi2, WordBucketDominated) {
    run_unassigned_token(Dominant::kWord, GetParam(), 40000);
}
TEST_P(UnassignedTokenChi2, DocBucketDominated) {
    run_unassigned_token(Dominant::kDoc, GetParam(), 40000);
}

INSTANTIATE_TEST_SUITE_P(Topics, UnassignedTokenChi2, ::testing::Values(4u, 64u));

// Past 4096 topics the smoothing search walks super-groups of 64 groups first: 10,000 topics
// make two full super-groups and a partial one.
TEST(SparseLdaSampler, SmoothingDrawAcrossSuperGroupsFollowsTheConditional) {
    run_single_token(Dominant::kSmoothing, 10000, 100000);
}

// Past 4096 topics a word with many nonzero topics draws its word bucket through group sums
// (here ~10,000 nonzero topics).
TEST(SparseLdaSampler, GroupedWordBucketDrawFollowsTheConditional) {
    run_single_token(Dominant::kWord, 10000, 100000);
}

// Doc 0 short and word 0 rare (20 words, 8 docs, α = β = 0.1; testing::short_doc_background).
Scenario short_doc_scenario(std::uint32_t K, std::vector<Tok> fixed, std::uint64_t seed) {
    Scenario sc;
    sc.params.num_topics = K;
    sc.params.alpha = 0.1;
    sc.params.beta = 0.1;
    sc.vocab = 20;
    sc.docs = 8;
    sc.background = testing::short_doc_background(K, std::move(fixed), seed);
    return sc;
}

// Two tokens of the same (word, doc) start in the same topic t: after the first is resampled,
// the second sees either the very state of the first draw (the reuse path) or a changed one.
// The pair (z1, z2) must follow p(z1 | rest, z2 = t) * p(z2 | rest, z1).
TEST(SparseLdaSampler, RepeatedWordDocPairFollowsTheJointOfTwoGibbsSteps) {
    for (std::uint32_t K : {4u, 16u}) {
        SCOPED_TRACE(K);
        // The doc and word lean to t, so the first token often stays.
        const TopicId t = 0;
        const Scenario sc =
            short_doc_scenario(K, {{0, 1, t}, {0, 2, t}, {0, 3, 1}, {5, 0, t}, {6, 0, 1}}, 5);
        const std::vector<TokenBlock> start = {testing::make_block(sc.background),
                                               testing::make_block({{0, 0, t}, {0, 0, t}})};
        const DocTopicTable dt0 = DocTopicTable::from_blocks(K, sc.docs, start);
        const WordTopicTable wt0 = WordTopicTable::from_blocks(K, sc.vocab, start);
        const std::vector<TotalCount> totals0 = count_topic_totals(start, K);

        // Exact joint.
        std::vector<Count> nd = testing::dense_doc_row(dt0, 0),
                           nw = testing::dense_word_row(wt0, 0);
        std::vector<TotalCount> nk = totals0;
        nd[t] -= 2;
        nw[t] -= 2;
        nk[t] -= 2;
        std::vector<double> joint(K * K, 0.0);
        auto with = [](auto v, TopicId k) {
            ++v[k];
            return v;
        };
        const auto p1 = SparseLdaSampler::conditional(with(nd, t), with(nw, t), with(nk, t),
                                                      sc.params, sc.vocab);
        for (TopicId a = 0; a < K; ++a) {
            const auto p2 = SparseLdaSampler::conditional(with(nd, a), with(nw, a), with(nk, a),
                                                          sc.params, sc.vocab);
            for (TopicId b = 0; b < K; ++b) joint[a * K + b] = p1[a] * p2[b];
        }

        SparseLdaSampler sampler(sc.params, sc.vocab);
        Rng rng(99);
        std::vector<std::uint64_t> hist(K * K, 0);
        constexpr int kDraws = 40000;
        for (int i = 0; i < kDraws; ++i) {
            DocTopicTable dt = dt0;
            WordTopicTable wt = wt0;
            std::vector<TotalCount> totals = totals0;
            TokenBlock blk = start[1];
            ASSERT_EQ(sampler.sample_block(blk, dt, wt, totals, rng, nullptr), 2u);
            ++hist[blk.topics[0] * K + blk.topics[1]];
        }
        const auto [stat, df] = chi2(hist, joint);
        EXPECT_LT(stat, chi2_threshold(df)) << "df " << df;
        EXPECT_GT(sampler.stats().reused, 0u);
    }
}

TEST(SparseLdaSampler, UnassignedWordDocPairFollowsTheSequentialJoint) {
    // Two unassigned tokens of one (word, doc), then an assigned token of the same doc: the first
    // is drawn from the background, the second given the first, the third (a Gibbs step)
    // given both. The second token must not reuse the first's buckets.
    for (std::uint32_t K : {4u, 16u}) {
        SCOPED_TRACE(K);
        const TopicId t = 1;
        const Scenario sc =
            short_doc_scenario(K, {{0, 1, 0}, {0, 2, 0}, {0, 3, 1}, {5, 0, 0}, {6, 0, 1}}, 6);
        const std::vector<TokenBlock> start = {
            testing::make_block(sc.background),
            testing::make_block({{0, 0, kUnassignedTopic}, {0, 0, kUnassignedTopic}, {3, 0, t}})};
        const DocTopicTable dt0 = DocTopicTable::from_blocks(K, sc.docs, start);
        const WordTopicTable wt0 = WordTopicTable::from_blocks(K, sc.vocab, start);
        const std::vector<TotalCount> totals0 = count_topic_totals(start, K);
        ASSERT_EQ(dt0.row_total(0), 3u) << "two background tokens and the assigned one";

        // Exact joint of the three draws.
        const std::vector<Count> nd = testing::dense_doc_row(dt0, 0);
        const std::vector<Count> nw = testing::dense_word_row(wt0, 0);
        const std::vector<Count> nv = testing::dense_word_row(wt0, 3);
        auto with = [](auto v, TopicId k, int n = 1) {
            v[k] += n;
            return v;
        };
        std::vector<double> joint(K * K * K, 0.0);
        const auto p1 = SparseLdaSampler::conditional(nd, nw, totals0, sc.params, sc.vocab);
        for (TopicId a = 0; a < K; ++a) {
            const auto p2 = SparseLdaSampler::conditional(with(nd, a), with(nw, a),
                                                          with(totals0, a), sc.params, sc.vocab);
            for (TopicId b = 0; b < K; ++b) {
                // The third token leaves t first (its word row has it once).
                auto d3 = with(with(with(nd, a), b), t, -1);
                auto k3 = with(with(with(totals0, a), b), t, -1);
                const auto p3 =
                    SparseLdaSampler::conditional(d3, with(nv, t, -1), k3, sc.params, sc.vocab);
                for (TopicId c = 0; c < K; ++c) joint[(a * K + b) * K + c] = p1[a] * p2[b] * p3[c];
            }
        }

        SparseLdaSampler sampler(sc.params, sc.vocab);
        Rng rng(98);
        std::vector<std::uint64_t> hist(K * K * K, 0);
        const int draws = K == 4 ? 30000 : 60000;
        for (int i = 0; i < draws; ++i) {
            DocTopicTable dt = dt0;
            WordTopicTable wt = wt0;
            std::vector<TotalCount> totals = totals0;
            std::vector<TokenBlock> blocks = start;
            ASSERT_EQ(sampler.sample_block(blocks[1], dt, wt, totals, rng, nullptr), 3u);
            const auto& z = blocks[1].topics;
            ++hist[(z[0] * K + z[1]) * K + z[2]];
            if (i < 20) {
                ASSERT_EQ(totals, count_topic_totals(blocks, K));
                for (TopicId k = 0; k < K; ++k)
                    ASSERT_EQ(dt.get(0, k), testing::recount(blocks, sc.docs, K, true)[0][k]);
            }
        }
        const auto [stat, df] = chi2(hist, joint);
        EXPECT_LT(stat, chi2_threshold(df)) << "df " << df;
    }
}

TEST(SparseLdaSampler, StopFlagLeavesTokensAlone) {
    LdaParams p;
    p.num_topics = 8;
    std::vector<TokenBlock> blocks = {
        testing::make_block({{0, 0, 1}, {1, 0, 2}, {2, 1, 3}, {2, 1, 3}})};
    DocTopicTable dt = DocTopicTable::from_blocks(8, 2, blocks);
    WordTopicTable wt = WordTopicTable::from_blocks(8, 3, blocks);
    std::vector<TotalCount> totals = count_topic_totals(blocks, 8);
    SparseLdaSampler sampler(p, 3);
    Rng rng(1);
    const std::atomic<bool> stop{true};
    const auto before = blocks[0].topics;
    EXPECT_EQ(sampler.sample_block(blocks[0], dt, wt, totals, rng, &stop), 0u);
    EXPECT_EQ(blocks[0].topics, before);
    const std::atomic<bool> go{false};
    EXPECT_EQ(sampler.sample_block(blocks[0], dt, wt, totals, rng, &go), 4u);
}

// Full sweeps over an L x L grid, L blocks at a time on real threads (one sampler, one private
// copy of n_k per thread, reconciled after each round, as the trainer does).
struct GridRun {
    std::vector<TokenBlock> blocks;
    DocTopicTable dt;
    WordTopicTable wt;
    std::vector<TotalCount> totals;
};

GridRun run_grid(const SyntheticCorpus& c, std::uint32_t V, const LdaParams& p, std::uint32_t L,
                 int sweeps, bool sequential = false, detail::DocMassesFn doc_masses = nullptr) {
    std::vector<std::uint32_t> rows(c.num_docs()), cols(V);
    for (std::uint32_t d = 0; d < c.num_docs(); ++d) rows[d] = d % L;
    for (std::uint32_t w = 0; w < V; ++w) cols[w] = (w * 3) % L;
    GridRun g;
    g.blocks = build_blocks(c.doc_offsets, c.word_ids, rows, cols, L);
    init_topics(g.blocks, p.num_topics, 5);
    if (sequential) {
        for (TokenBlock& b : g.blocks)
            std::fill(b.topics.begin(), b.topics.end(), kUnassignedTopic);
    }
    g.dt = DocTopicTable::from_blocks(p.num_topics, c.num_docs(), g.blocks);
    g.wt = WordTopicTable::from_blocks(p.num_topics, V, g.blocks);
    g.totals = count_topic_totals(g.blocks, p.num_topics);
    std::vector<SparseLdaSampler> samplers(L, SparseLdaSampler(p, V));
    if (doc_masses != nullptr) {
        for (SparseLdaSampler& s : samplers) s.use_doc_masses(doc_masses);
    }
    for (int sweep = 0; sweep < sweeps; ++sweep) {
        for (std::uint32_t round = 0; round < L; ++round) {
            std::vector<std::vector<TotalCount>> copies(L, g.totals);
            std::vector<std::thread> threads;
            for (std::uint32_t i = 0; i < L; ++i) {
                threads.emplace_back([&, i] {
                    const std::uint32_t b = i * L + (i + round) % L;
                    Rng rng = Rng::from({9, static_cast<std::uint64_t>(sweep), b});
                    samplers[i].sample_block(g.blocks[b], g.dt, g.wt, copies[i], rng, nullptr);
                });
            }
            for (auto& th : threads) th.join();
            const std::vector<TotalCount> snapshot = g.totals;
            for (std::uint32_t i = 0; i < L; ++i) {
                for (std::size_t k = 0; k < g.totals.size(); ++k)
                    g.totals[k] += copies[i][k] - snapshot[k];
            }
        }
    }
    return g;
}

// The corpus and parameters of the threaded-sweep tests.
SyntheticSpec grid_spec() {
    SyntheticSpec spec;
    spec.num_docs = 300;
    spec.vocab_size = 400;
    spec.num_topics = 8;
    spec.mean_doc_length = 40;
    return spec;
}
LdaParams grid_params() {
    LdaParams p;
    p.num_topics = 24;
    p.alpha = 0.1;
    return p;
}

// The tables against a recount of the blocks' topics, every topic assigned.
void expect_consistent(const GridRun& g, const SyntheticCorpus& c, std::uint32_t V,
                       std::uint32_t K) {
    for (const TokenBlock& b : g.blocks)
        for (TopicId z : b.topics) ASSERT_LT(z, K);
    const auto nd = testing::recount(g.blocks, c.num_docs(), K, true);
    const auto nw = testing::recount(g.blocks, V, K, false);
    TotalCount doc_sum = 0, word_sum = 0;
    for (DocId d = 0; d < c.num_docs(); ++d) {
        const auto row = testing::dense_doc_row(g.dt, d);
        for (TopicId k = 0; k < K; ++k) ASSERT_EQ(row[k], nd[d][k]);
        for (Count x : row) doc_sum += x;
        const auto r = g.dt.row(d);
        for (std::size_t i = 0; i + 1 < r.size(); ++i) ASSERT_GE(r[i].count, r[i + 1].count);
    }
    for (WordId w = 0; w < V; ++w) {
        const auto row = testing::dense_word_row(g.wt, w);
        for (TopicId k = 0; k < K; ++k) ASSERT_EQ(row[k], nw[w][k]);
        for (Count x : row) word_sum += x;
    }
    const auto N = static_cast<TotalCount>(c.num_tokens());
    EXPECT_EQ(doc_sum, N);
    EXPECT_EQ(word_sum, N);
    EXPECT_EQ(g.totals, count_topic_totals(g.blocks, K));
}

TEST(SparseLdaSampler, SequentialStartAssignsEveryTokenAcrossThreadedSweeps) {
    const SyntheticSpec spec = grid_spec();
    const SyntheticCorpus c = make_synthetic_corpus(spec);
    const LdaParams p = grid_params();
    for (int sweeps : {1, 3}) {
        SCOPED_TRACE(sweeps);
        const GridRun g = run_grid(c, spec.vocab_size, p, 2, sweeps, true);
        expect_consistent(g, c, spec.vocab_size, p.num_topics);
    }
}

TEST(SparseLdaSampler, CountsStayConsistentAcrossThreadedSweeps) {
    const SyntheticSpec spec = grid_spec();
    const SyntheticCorpus c = make_synthetic_corpus(spec);
    const LdaParams p = grid_params();
    constexpr std::uint32_t L = 2;
    const GridRun g = run_grid(c, spec.vocab_size, p, L, 4);
    expect_consistent(g, c, spec.vocab_size, p.num_topics);

    // Seeds come from (seed, sweep, block), so a second run is identical whatever the threads.
    const GridRun again = run_grid(c, spec.vocab_size, p, L, 4);
    for (std::size_t b = 0; b < g.blocks.size(); ++b)
        EXPECT_EQ(again.blocks[b].topics, g.blocks[b].topics);
}

TEST(SparseLdaSampler, EveryDocBucketVersionDrawsTheSameSamples) {
    const SyntheticSpec spec = grid_spec();
    const SyntheticCorpus c = make_synthetic_corpus(spec);
    const LdaParams p = grid_params();  // K = 24: rows of up to 24 entries, 4 a step and tails
    const GridRun want = run_grid(c, spec.vocab_size, p, 2, 3, false, &detail::doc_masses_scalar);
    if (detail::doc_masses_avx2() == nullptr) GTEST_SKIP() << "no AVX2 here";
    const GridRun got = run_grid(c, spec.vocab_size, p, 2, 3, false, detail::doc_masses_avx2());
    for (std::size_t b = 0; b < want.blocks.size(); ++b)
        EXPECT_EQ(got.blocks[b].topics, want.blocks[b].topics);
}

}  // namespace
}  // namespace rotor::lda
