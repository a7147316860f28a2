#include "core/lda/mh_sampler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/base/rng.h"
#include "core/lda/sparse_lda_sampler.h"
#include "core/lda/synthetic_corpus.h"
#include "tests/core/lda/chi2_test_util.h"
#include "tests/core/lda/lda_test_util.h"

namespace rotor::lda {
namespace {

using testing::chi2;
using testing::chi2_threshold;
using testing::Tok;

// A 2 x 2 grid: block (0,0) holds the tokens under test, block (0,1) the fixed background,
// row 1 is empty. Every doc is in block row 0, as the index requires.
struct Grid {
    LdaParams params;
    std::uint32_t vocab = 0;
    std::uint32_t docs = 0;
    std::vector<TokenBlock> blocks;
    DocTopicTable dt;
    WordTopicTable wt;
    std::vector<TotalCount> totals;
    DocTokenIndex index;
};

void make_grid(Grid& g, const std::vector<Tok>& under_test, const std::vector<Tok>& background) {
    const std::uint32_t K = g.params.num_topics;
    g.blocks = {testing::make_block(under_test), testing::make_block(background), TokenBlock{},
                TokenBlock{}};
    for (std::uint32_t b = 0; b < 4; ++b) {
        g.blocks[b].row = b / 2;
        g.blocks[b].col = b % 2;
    }
    g.dt = DocTopicTable::from_blocks(K, g.docs, g.blocks);
    g.wt = WordTopicTable::from_blocks(K, g.vocab, g.blocks);
    g.totals = count_topic_totals(g.blocks, K);
    g.index.build(g.blocks, 2, g.docs);
}

enum class State { kDoc, kWord, kSmoothing, kAsymmetric, kConflict };

// Background tokens for the token (word 0, doc 0) under test, in a state where the named part of
// the conditional dominates (or, kConflict, where the doc and the word pull to different topics).
std::vector<Tok> background(Grid& g, State kind, std::uint32_t K) {
    Rng rng(2000 + K + 17 * static_cast<std::uint64_t>(kind));
    auto low = [&] { return static_cast<TopicId>(rng.below(rng.below(K) + 1)); };
    auto high = [&] { return K - 1 - low(); };
    auto any = [&] { return static_cast<TopicId>(rng.below(K)); };
    std::vector<Tok> bg;
    g.params.num_topics = K;
    g.vocab = 1000;
    g.docs = 51;
    g.params.alpha = 0.1;
    g.params.beta = 0.01;
    auto word0 = [&](std::uint32_t n, auto topic) {
        for (std::uint32_t i = 0; i < n; ++i)
            bg.push_back({0, static_cast<DocId>(1 + rng.below(50)), topic()});
    };
    auto doc0 = [&](std::uint32_t n, auto topic) {
        for (std::uint32_t i = 0; i < n; ++i)
            bg.push_back({static_cast<WordId>(1 + rng.below(g.vocab - 1)), 0, topic()});
    };
    switch (kind) {
        case State::kDoc:
            g.params.alpha = 0.01;
            doc0(4 * K, low);
            word0(10 * K, any);
            break;
        case State::kWord:
            g.params.alpha = 1.0;
            doc0(1, any);
            word0(20 * K, low);
            break;
        case State::kSmoothing:
            g.params.alpha = 5.0;
            g.params.beta = 2.0;
            g.vocab = 50;
            doc0(1, any);
            word0(1, any);
            for (std::uint32_t i = 0; i < 3 * K; ++i)
                bg.push_back({static_cast<WordId>(2 + rng.below(48)),
                              static_cast<DocId>(2 + rng.below(8)), low()});
            break;
        case State::kAsymmetric:
            g.params.alpha_per_topic.resize(K);
            for (std::uint32_t k = 0; k < K; ++k) g.params.alpha_per_topic[k] = 0.02 + 0.5 * k / K;
            doc0(K, low);
            word0(3 * K, any);
            break;
        case State::kConflict:
            doc0(2 * K, low);
            word0(4 * K, high);
            break;
    }
    return bg;
}

// Runs the chain of one token (word 0, doc 0) with every other count fixed, keeping every
// `thin`-th state, and compares the histogram with the exact conditional.
void run_single_token(State kind, std::uint32_t K, std::uint32_t cycles) {
    SCOPED_TRACE("state " + std::to_string(static_cast<int>(kind)) + " K=" + std::to_string(K) +
                 " cycles=" + std::to_string(cycles));
    Grid g;
    const std::vector<Tok> bg = background(g, kind, K);
    make_grid(g, {{0, 0, 0}}, bg);
    std::vector<Count> nd = testing::dense_doc_row(g.dt, 0), nw = testing::dense_word_row(g.wt, 0);
    std::vector<TotalCount> nk = g.totals;
    --nd[0];
    --nw[0];
    --nk[0];
    const std::vector<double> exact = SparseLdaSampler::conditional(nd, nw, nk, g.params, g.vocab);

    MhSampler sampler(g.params, g.vocab, g.index, cycles);
    Rng rng = Rng::from({31, K, static_cast<std::uint64_t>(kind), cycles});
    constexpr int kDraws = 30000;
    const int thin = cycles == 1 ? 12 : 6;
    std::vector<std::uint64_t> hist(K, 0);
    for (int i = 0; i < kDraws * thin; ++i) {
        ASSERT_EQ(sampler.sample_block(g.blocks[0], g.dt, g.wt, g.totals, rng, nullptr), 1u);
        if (i % thin == thin - 1) ++hist[g.blocks[0].topics[0]];
    }
    const auto [stat, df] = chi2(hist, exact);
    ASSERT_GT(df, 0);
    EXPECT_LT(stat, chi2_threshold(df)) << "df " << df;
    // Both proposals moved the chain; the tables still hold the background exactly.
    EXPECT_GT(sampler.stats().doc_accepted, 0u);
    EXPECT_GT(sampler.stats().word_accepted, 0u);
    EXPECT_EQ(g.totals, count_topic_totals(g.blocks, K));
    EXPECT_EQ(g.index.doc_topics(0)[g.index.slots(0, 0)[0]], g.blocks[0].topics[0]);
}

class MhStationary : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(MhStationary, DocDominated) { run_single_token(State::kDoc, GetParam(), 2); }
TEST_P(MhStationary, WordDominated) { run_single_token(State::kWord, GetParam(), 2); }
TEST_P(MhStationary, SmoothingDominated) { run_single_token(State::kSmoothing, GetParam(), 2); }
TEST_P(MhStationary, AsymmetricAlpha) { run_single_token(State::kAsymmetric, GetParam(), 2); }
TEST_P(MhStationary, DocAndWordDisagree) { run_single_token(State::kConflict, GetParam(), 1); }

INSTANTIATE_TEST_SUITE_P(Topics, MhStationary, ::testing::Values(4u, 16u, 64u));

// Two tokens of one (word, doc) in one block: each proposal reads the other's current topic
// (the word's other token in the block, the doc's other slot). The pair must follow the exact
// joint p(z1, z2 | rest) ∝ g(z1 | rest) g(z2 | rest, z1), g the unnormalised conditional
// (normalising each factor apart would drop the evidence the second token's word carries).
// Isolated: the two tokens are all of their word and doc, so that most proposals read the other
// token (or the chain's own slot).
TEST(MhSampler, TwoTokensOfOneWordAndDocFollowTheExactJoint) {
    struct Case {
        std::uint32_t K;
        bool isolated;
        std::uint32_t cycles;  // 2: the second doc proposal reads the chain's own slot moved
    };
    for (const Case c : {Case{4, false, 1}, Case{8, false, 1}, Case{4, true, 1}, Case{8, true, 1},
                         Case{4, true, 2}, Case{8, true, 2}}) {
        const std::uint32_t K = c.K;
        const bool isolated = c.isolated;
        SCOPED_TRACE(std::to_string(K) + (isolated ? " isolated" : "") + " cycles " +
                     std::to_string(c.cycles));
        Grid g;
        g.params.num_topics = K;
        g.params.alpha = 0.1;
        g.params.beta = 0.1;
        g.vocab = 20;
        g.docs = 8;
        std::vector<Tok> fixed;
        if (!isolated) fixed = {{0, 1, 0}, {0, 2, 0}, {0, 3, 1}, {5, 0, 0}, {6, 0, 1}};
        make_grid(g, {{0, 0, 0}, {0, 0, 0}}, testing::short_doc_background(K, fixed, 5));
        std::vector<Count> nd = testing::dense_doc_row(g.dt, 0),
                           nw = testing::dense_word_row(g.wt, 0);
        std::vector<TotalCount> nk = g.totals;
        nd[0] -= 2;
        nw[0] -= 2;
        nk[0] -= 2;
        auto with = [](auto v, TopicId k) {
            ++v[k];
            return v;
        };
        const double vbeta = g.vocab * g.params.beta;
        auto weight = [&](const auto& d, const auto& w, const auto& n, TopicId k) {
            return (w[k] + g.params.beta) * (d[k] + g.params.alpha) / (n[k] + vbeta);
        };
        std::vector<double> joint(K * K, 0.0);
        double sum = 0;
        for (TopicId a = 0; a < K; ++a) {
            const auto nd1 = with(nd, a);
            const auto nw1 = with(nw, a);
            const auto nk1 = with(nk, a);
            for (TopicId b = 0; b < K; ++b) {
                joint[a * K + b] = weight(nd, nw, nk, a) * weight(nd1, nw1, nk1, b);
                sum += joint[a * K + b];
            }
        }
        for (double& x : joint) x /= sum;
        MhSampler sampler(g.params, g.vocab, g.index, c.cycles);
        Rng rng(99);
        constexpr int kDraws = 40000;
        constexpr int kThin = 40;
        std::vector<std::uint64_t> hist(K * K, 0);
        for (int i = 0; i < kDraws * kThin; ++i) {
            ASSERT_EQ(sampler.sample_block(g.blocks[0], g.dt, g.wt, g.totals, rng, nullptr), 2u);
            if (i % kThin == kThin - 1) ++hist[g.blocks[0].topics[0] * K + g.blocks[0].topics[1]];
        }
        const auto [stat, df] = chi2(hist, joint);
        EXPECT_LT(stat, chi2_threshold(df)) << "df " << df;
        EXPECT_EQ(g.totals, count_topic_totals(g.blocks, K));
    }
}

TEST(MhSampler, StopFlagLeavesTokensAlone) {
    Grid g;
    g.params.num_topics = 8;
    g.vocab = 3;
    g.docs = 2;
    make_grid(g, {{0, 0, 1}, {1, 0, 2}, {2, 1, 3}, {2, 1, 3}}, {});
    MhSampler sampler(g.params, 3, g.index);
    Rng rng(1);
    const std::atomic<bool> stop{true};
    const auto before = g.blocks[0].topics;
    EXPECT_EQ(sampler.sample_block(g.blocks[0], g.dt, g.wt, g.totals, rng, &stop), 0u);
    EXPECT_EQ(g.blocks[0].topics, before);
    const std::atomic<bool> go{false};
    EXPECT_EQ(sampler.sample_block(g.blocks[0], g.dt, g.wt, g.totals, rng, &go), 4u);
}

TEST(MhSampler, RejectsZeroCycles) {
    Grid g;
    g.params.num_topics = 4;
    g.docs = 1;
    g.vocab = 1;
    make_grid(g, {{0, 0, 1}}, {});
    EXPECT_THROW(MhSampler(g.params, 1, g.index, 0), ConfigError);
}

// Full sweeps over an L x L grid, L blocks at a time on real threads (one sampler and one private
// copy of n_k per thread, reconciled after each round, as the trainer does). With `sparse_first`
// the first sweep is SparseLDA's, then the index is synced: the switch the trainer's auto makes.
struct GridRun {
    std::vector<TokenBlock> blocks;
    DocTopicTable dt;
    WordTopicTable wt;
    std::vector<TotalCount> totals;
    DocTokenIndex index;
};

void run_grid(GridRun& g, const SyntheticCorpus& c, std::uint32_t V, const LdaParams& p,
              std::uint32_t L, int sweeps, bool sparse_first) {
    std::vector<std::uint32_t> rows(c.num_docs()), cols(V);
    for (std::uint32_t d = 0; d < c.num_docs(); ++d) rows[d] = d % L;
    for (std::uint32_t w = 0; w < V; ++w) cols[w] = (w * 3) % L;
    g.blocks = build_blocks(c.doc_offsets, c.word_ids, rows, cols, L);
    init_topics(g.blocks, p.num_topics, 5);
    g.dt = DocTopicTable::from_blocks(p.num_topics, c.num_docs(), g.blocks);
    g.wt = WordTopicTable::from_blocks(p.num_topics, V, g.blocks);
    g.totals = count_topic_totals(g.blocks, p.num_topics);
    g.index.build(g.blocks, L, c.num_docs(), testing::thread_loop(2));
    std::vector<MhSampler> mh(L, MhSampler(p, V, g.index));
    std::vector<SparseLdaSampler> sparse(L, SparseLdaSampler(p, V));
    for (int sweep = 0; sweep < sweeps; ++sweep) {
        const bool use_sparse = sparse_first && sweep == 0;
        for (std::uint32_t round = 0; round < L; ++round) {
            std::vector<std::vector<TotalCount>> copies(L, g.totals);
            std::vector<std::thread> threads;
            for (std::uint32_t i = 0; i < L; ++i) {
                threads.emplace_back([&, i] {
                    const std::uint32_t b = i * L + (i + round) % L;
                    Rng rng = Rng::from({9, static_cast<std::uint64_t>(sweep), b});
                    Sampler& s = use_sparse ? static_cast<Sampler&>(sparse[i]) : mh[i];
                    s.sample_block(g.blocks[b], g.dt, g.wt, copies[i], rng, nullptr);
                });
            }
            for (auto& th : threads) th.join();
            const std::vector<TotalCount> snapshot = g.totals;
            for (std::uint32_t i = 0; i < L; ++i) {
                for (std::size_t k = 0; k < g.totals.size(); ++k)
                    g.totals[k] += copies[i][k] - snapshot[k];
            }
        }
        if (use_sparse) g.index.sync_topics(g.blocks);
    }
}

void expect_consistent(const GridRun& g, const SyntheticCorpus& c, std::uint32_t V,
                       const LdaParams& p) {
    const auto nd = testing::recount(g.blocks, c.num_docs(), p.num_topics, true);
    const auto nw = testing::recount(g.blocks, V, p.num_topics, false);
    for (DocId d = 0; d < c.num_docs(); ++d) {
        const auto row = testing::dense_doc_row(g.dt, d);
        for (TopicId k = 0; k < p.num_topics; ++k) ASSERT_EQ(row[k], nd[d][k]);
        const auto r = g.dt.row(d);
        for (std::size_t i = 0; i + 1 < r.size(); ++i) ASSERT_GE(r[i].count, r[i + 1].count);
        // The index holds the doc's topics: the same histogram as the row.
        std::vector<std::int64_t> h(p.num_topics, 0);
        ASSERT_EQ(g.index.doc_length(d), c.doc_offsets[d + 1] - c.doc_offsets[d]);
        for (std::uint32_t i = 0; i < g.index.doc_length(d); ++i) ++h[g.index.doc_topics(d)[i]];
        ASSERT_EQ(h, nd[d]);
    }
    for (WordId w = 0; w < V; ++w) {
        const auto row = testing::dense_word_row(g.wt, w);
        for (TopicId k = 0; k < p.num_topics; ++k) ASSERT_EQ(row[k], nw[w][k]);
    }
    for (const TokenBlock& b : g.blocks) {
        const auto slots = g.index.slots(b.row, b.col);
        for (std::size_t t = 0; t < b.docs.size(); ++t)
            ASSERT_EQ(g.index.doc_topics(b.docs[t])[slots[t]], b.topics[t]);
    }
    EXPECT_EQ(g.totals, count_topic_totals(g.blocks, p.num_topics));
}

TEST(MhSampler, CountsAndIndexStayConsistentAcrossThreadedSweeps) {
    SyntheticSpec spec;
    spec.num_docs = 300;
    spec.vocab_size = 400;
    spec.num_topics = 8;
    spec.mean_doc_length = 40;
    const SyntheticCorpus c = make_synthetic_corpus(spec);
    LdaParams p;
    p.num_topics = 24;
    p.alpha = 0.1;
    constexpr std::uint32_t L = 2;
    for (bool sparse_first : {false, true}) {
        SCOPED_TRACE(sparse_first);
        GridRun g;
        run_grid(g, c, spec.vocab_size, p, L, 4, sparse_first);
        expect_consistent(g, c, spec.vocab_size, p);
        // Seeds come from (seed, sweep, block), so a second run is identical whatever the
        // threads.
        GridRun again;
        run_grid(again, c, spec.vocab_size, p, L, 4, sparse_first);
        for (std::size_t b = 0; b < g.blocks.size(); ++b)
            EXPECT_EQ(again.blocks[b].topics, g.blocks[b].topics);
    }
}

}  // namespace
}  // namespace rotor::lda
