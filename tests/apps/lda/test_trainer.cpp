// The trainer in one process (P = 1) on real threads: count invariants, determinism across thread
// counts, likelihood against brute force, recovery of planted topics.
#include "apps/lda/trainer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "apps/lda/trainer_test_util.h"
#include "core/base/error.h"
#include "sched/block_grid.h"
#include "sched/runtime.h"

namespace rotor::lda {
namespace {

using testing::expect_consistent;
using testing::small_corpus;

TrainOptions options(std::uint32_t k, bool deterministic = false) {
    TrainOptions o;
    o.params.num_topics = k;
    o.params.beta = 0.01;
    o.seed = 11;
    o.deterministic = deterministic;
    return o;
}

class TrainerThreads : public ::testing::TestWithParam<int> {};

// Every table sums to N and agrees with the assignments after every iteration (dynamic mode).
TEST_P(TrainerThreads, CountsStayConsistentEveryIteration) {
    const auto corpus = small_corpus();
    sched::Runtime rt(GetParam(), sched::PinMode::kNone);
    Trainer t(corpus, options(16), rt);
    expect_consistent(t, corpus);
    for (int i = 0; i < 5; ++i) {
        const train::Record m = t.iterate();
        EXPECT_EQ(m.processed, corpus.num_tokens());
        EXPECT_DOUBLE_EQ(m.processed_ratio, 1.0);
        EXPECT_GE(m.get("s_error").value(), 0.0);
        if (GetParam() == 1) {
            EXPECT_EQ(m.get("s_error").value(), 0.0);  // one worker: its copy is exact
        }
        expect_consistent(t, corpus);
    }
}

TEST_P(TrainerThreads, DeterministicModeCountsStayConsistent) {
    const auto corpus = small_corpus();
    sched::Runtime rt(GetParam(), sched::PinMode::kNone);
    Trainer t(corpus, options(16, true), rt);
    for (int i = 0; i < 3; ++i) {
        t.iterate();
        expect_consistent(t, corpus);
    }
}

// Back-to-back sweeps: each sweep reported once, in order, every token sampled once per sweep,
// and the tables exact when the span ends.
TEST_P(TrainerThreads, SweepsBackToBackReportEachSweepInOrder) {
    const auto corpus = small_corpus();
    sched::Runtime rt(GetParam(), sched::PinMode::kNone);
    auto o = options(16);
    o.blocks = 3;
    Trainer t(corpus, o, rt);
    t.iterate();
    std::vector<std::uint32_t> seen;
    const train::Record last = t.iterate_span(6, [&](train::Record& m) {
        seen.push_back(m.iter);  // one call at a time: no lock needed
        EXPECT_EQ(m.processed, corpus.num_tokens());
        EXPECT_GE(m.iteration_s, 0.0);
        EXPECT_GE(m.effective_ratio, 0.0);
        EXPECT_LE(m.effective_ratio, 1.0);
        EXPECT_GE(m.get("s_error").value(), 0.0);
    });
    EXPECT_EQ(seen, (std::vector<std::uint32_t>{2, 3, 4, 5, 6}));
    EXPECT_EQ(last.iter, 7u);
    EXPECT_EQ(t.iterations_done(), 7u);
    EXPECT_EQ(last.processed, corpus.num_tokens());
    EXPECT_GT(last.iteration_s, 0.0);
    if (GetParam() == 1) {
        EXPECT_EQ(last.get("s_error").value(), 0.0);
    }
    expect_consistent(t, corpus);
}

// train(): sweeps run back to back between sync points; evaluations and hooks that need the
// state see every sweep up to theirs finished and none after it begun.
TEST_P(TrainerThreads, TrainSyncsAtEvaluationsAndStateHooks) {
    const auto corpus = small_corpus();
    sched::Runtime rt(GetParam(), sched::PinMode::kNone);
    auto o = options(16);
    o.eval_every = 3;
    o.iterations = 8;
    Trainer t(corpus, o, rt);
    struct Recorder : train::Reporter {
        std::vector<std::pair<std::uint32_t, bool>> calls;
        void on_iteration(const train::Record& m, std::uint32_t) override {
            calls.emplace_back(m.iter, m.has("loglik"));
        }
    } reporter;
    train::Hooks hooks;
    std::vector<std::uint32_t> state_calls;
    hooks.needs_state = [](std::uint32_t iter) { return iter == 4; };
    hooks.after_iteration = [&](const train::Record& m) {
        if (m.iter != 4) return;
        state_calls.push_back(m.iter);
        EXPECT_EQ(t.iterations_done(), 4u);
        expect_consistent(t, corpus);
    };
    t.train(reporter, hooks);
    ASSERT_EQ(reporter.calls.size(), 8u);
    for (std::uint32_t i = 0; i < 8; ++i) {
        EXPECT_EQ(reporter.calls[i].first, i + 1);
        const std::uint32_t iter = i + 1;
        EXPECT_EQ(reporter.calls[i].second, iter % 3 == 0 || iter == 8) << "iteration " << iter;
    }
    EXPECT_EQ(state_calls, (std::vector<std::uint32_t>{4}));
    EXPECT_EQ(train::next_sync_point(0, 8, 3, hooks), 3u);
    EXPECT_EQ(train::next_sync_point(3, 8, 3, hooks), 4u);
    EXPECT_EQ(train::next_sync_point(4, 8, 3, hooks), 6u);
    EXPECT_EQ(train::next_sync_point(6, 8, 3, hooks), 8u);
    expect_consistent(t, corpus);
}

INSTANTIATE_TEST_SUITE_P(Threads, TrainerThreads, ::testing::Values(1, 2, 4));

// The default grid side: ceil(sqrt(2) P) for the P workers that run at once (threads, at most
// the processors), at least TrainOptions::kMinThreadedBlocks from 2 of them; --blocks and
// --deterministic as given.
TEST(Trainer, DefaultGridSideIsAtLeastFourWithTwoOrMoreRunningThreads) {
    const auto corpus = small_corpus(5);
    const int cpus = sched::available_cpus();
    for (int threads : {1, 2, 3, 4}) {
        sched::Runtime rt(threads, sched::PinMode::kNone);
        Trainer t(corpus, options(8), rt);
        const int running = std::min(threads, cpus);
        const int expected = running >= 2 ? std::max(sched::default_grid_side(running), 4) : 2;
        EXPECT_EQ(t.grid_side(), expected) << threads << " threads on " << cpus << " processors";
    }
    sched::Runtime rt(2, sched::PinMode::kNone);
    auto o = options(8);
    o.blocks = 3;
    EXPECT_EQ(Trainer(corpus, o, rt).grid_side(), 3);
    EXPECT_EQ(Trainer(corpus, options(8, true), rt).grid_side(),
              TrainOptions::kDeterministicBlocks);
}

// The same seed gives the same model, bit for bit, at 1, 2 and 3 threads.
TEST(Trainer, DeterministicModeIsIndependentOfThreadCount) {
    const auto corpus = small_corpus(5);
    std::vector<LdaModel> models;
    std::vector<double> logliks;
    for (int threads : {1, 2, 3}) {
        sched::Runtime rt(threads, sched::PinMode::kNone);
        Trainer t(corpus, options(12, true), rt);
        for (int i = 0; i < 4; ++i) t.iterate();
        models.push_back(t.gather_model({}, "synthetic"));
        logliks.push_back(t.evaluate().loglik);
    }
    for (std::size_t i = 1; i < models.size(); ++i) {
        EXPECT_EQ(models[i].word_topic.offsets, models[0].word_topic.offsets);
        EXPECT_EQ(models[i].word_topic.topics, models[0].word_topic.topics);
        EXPECT_EQ(models[i].word_topic.counts, models[0].word_topic.counts);
        EXPECT_EQ(models[i].doc_topic.topics, models[0].doc_topic.topics);
        EXPECT_EQ(models[i].doc_topic.counts, models[0].doc_topic.counts);
        EXPECT_EQ(models[i].topic_totals, models[0].topic_totals);
        EXPECT_EQ(logliks[i], logliks[0]);
    }
    // And a different seed gives a different model (the test could otherwise pass vacuously).
    sched::Runtime rt(2, sched::PinMode::kNone);
    auto o = options(12, true);
    o.seed = 12;
    Trainer t(corpus, o, rt);
    for (int i = 0; i < 4; ++i) t.iterate();
    EXPECT_NE(t.gather_model({}, "synthetic").word_topic.counts, models[0].word_topic.counts);
}

// --init sparse: tables consistent with the first topics, every doc row at most c wide, and in
// deterministic mode the same model at 1 and 3 threads (and not the random init's model).
TEST(Trainer, SparseInitIsConsistentNarrowAndThreadIndependent) {
    const auto corpus = small_corpus(5);
    std::vector<std::vector<Count>> counts;
    for (int threads : {1, 3}) {
        sched::Runtime rt(threads, sched::PinMode::kNone);
        auto o = options(12, true);
        o.init = InitOptions{InitMethod::kSparse, 2};
        Trainer t(corpus, o, rt);
        expect_consistent(t, corpus);
        for (DocId d = 0; d < corpus.num_docs(); ++d) {
            int width = 0;
            for (TopicId k = 0; k < 12; ++k) width += t.doc_topic().get(d, k) > 0;
            EXPECT_LE(width, 2) << "doc " << d;
        }
        for (int i = 0; i < 3; ++i) t.iterate();
        expect_consistent(t, corpus);
        counts.push_back(t.gather_model({}, "synthetic").word_topic.counts);
    }
    EXPECT_EQ(counts[1], counts[0]);
    sched::Runtime rt(1, sched::PinMode::kNone);
    Trainer random(corpus, options(12, true), rt);
    for (int i = 0; i < 3; ++i) random.iterate();
    EXPECT_NE(random.gather_model({}, "synthetic").word_topic.counts, counts[0]);
}

// --init sequential, deterministic: the same model at 1 and 3 threads, not the random start's,
// nor the one of another word prior (the first sweep draws with β'). A resume continues exactly.
TEST(Trainer, SequentialInitIsThreadIndependentAndStartsAhead) {
    const auto corpus = small_corpus(5);
    auto o = options(12, true);
    o.init.method = InitMethod::kSequential;
    std::vector<std::vector<Count>> counts;
    for (int threads : {1, 3}) {
        sched::Runtime rt(threads, sched::PinMode::kNone);
        Trainer t(corpus, o, rt);
        for (int i = 0; i < 3; ++i) t.iterate();
        expect_consistent(t, corpus);
        counts.push_back(t.gather_model({}, "synthetic").word_topic.counts);
    }
    EXPECT_EQ(counts[1], counts[0]);
    sched::Runtime rt(2, sched::PinMode::kNone);
    // word_prior 0: the automatic prior of the corpus, recorded with the model.
    Trainer automatic(corpus, o, rt);
    automatic.iterate();
    EXPECT_EQ(automatic.gather_model({}, "c").info.init_word_prior,
              auto_word_prior(static_cast<double>(corpus.num_tokens()) / corpus.num_docs()));
    Trainer random(corpus, options(12, true), rt);
    Trainer sequential(corpus, o, rt);
    for (int i = 0; i < 3; ++i) random.iterate();
    EXPECT_NE(random.gather_model({}, "synthetic").word_topic.counts, counts[0]);
    auto flat = o;
    flat.init.word_prior = 0.12;  // β' = max(0.01, 0.12 / 12) = β
    Trainer other_prior(corpus, flat, rt);
    for (int i = 0; i < 3; ++i) other_prior.iterate();
    EXPECT_NE(other_prior.gather_model({}, "synthetic").word_topic.counts, counts[0]);
    sequential.iterate();

    const LocalDocs saved = sequential.local_state();
    Trainer resumed(corpus, o, rt);
    resumed.restore(corpus, saved.docs, saved.topics, sequential.iterations_done(), 1.0, "test");
    expect_consistent(resumed, corpus);
    for (int i = 0; i < 2; ++i) {
        sequential.iterate();
        resumed.iterate();
    }
    EXPECT_EQ(resumed.gather_model({}, "c").word_topic.counts,
              sequential.gather_model({}, "c").word_topic.counts);
}

// log p(w|z) and log p(w,z) against a brute-force sum of std::lgamma over every cell.
TEST(Trainer, LikelihoodMatchesBruteForce) {
    const auto corpus = small_corpus(7, 120, 200);
    sched::Runtime rt(2, sched::PinMode::kNone);
    auto o = options(6);
    o.params.alpha = 0.3;
    Trainer t(corpus, o, rt);
    for (int i = 0; i < 3; ++i) t.iterate();
    const LogLikelihood got = t.evaluate();

    const double beta = 0.01, alpha = 0.3;
    const double K = 6, V = corpus.num_words();
    double lw = K * (std::lgamma(V * beta) - V * std::lgamma(beta));
    for (TopicId k = 0; k < 6; ++k) {
        for (WordId w = 0; w < corpus.num_words(); ++w)
            lw += std::lgamma(t.word_topic().get(w, k) + beta);
        lw -= std::lgamma(t.topic_totals()[k] + V * beta);
    }
    double ld = corpus.num_docs() * (std::lgamma(K * alpha) - K * std::lgamma(alpha));
    for (DocId d = 0; d < corpus.num_docs(); ++d) {
        for (TopicId k = 0; k < 6; ++k) ld += std::lgamma(t.doc_topic().get(d, k) + alpha);
        ld -= std::lgamma(corpus.doc_length(d) + K * alpha);
    }
    EXPECT_NEAR(got.loglik_word, lw, 1e-6 * std::abs(lw));
    EXPECT_NEAR(got.loglik, lw + ld, 1e-6 * std::abs(lw + ld));
}

// Trained on a corpus drawn from planted topics, the model finds them again, and the
// likelihood rises along the way.
TEST(Trainer, RecoversPlantedTopics) {
    SyntheticSpec spec;
    spec.num_docs = 600;
    spec.vocab_size = 500;
    spec.num_topics = 8;
    spec.mean_doc_length = 80;
    spec.seed = 21;
    const SyntheticCorpus synth = make_synthetic_corpus(spec);
    const auto corpus = testing::to_corpus(synth, spec.vocab_size);
    sched::Runtime rt(2, sched::PinMode::kNone);
    auto o = options(8);
    o.params.alpha = 0.1;
    Trainer t(corpus, o, rt);
    const double ll_init = t.evaluate().loglik;
    t.iterate();
    const double ll_first = t.evaluate().loglik;
    for (int i = 1; i < 60; ++i) t.iterate();
    const double ll_last = t.evaluate().loglik;
    // Gibbs sampling is noisy once converged, so compare the ends, not every step.
    EXPECT_GT(ll_first, ll_init);
    EXPECT_GT(ll_last, ll_first);

    std::vector<std::vector<double>> phi(8, std::vector<double>(spec.vocab_size, 0));
    for (WordId w = 0; w < spec.vocab_size; ++w)
        for (TopicId k = 0; k < 8; ++k)
            phi[k][w] =
                (t.word_topic().get(w, k) + 0.01) / (t.topic_totals()[k] + spec.vocab_size * 0.01);
    EXPECT_GE(mean_best_cosine(synth.topic_word, phi), 0.9);
}

TEST(Trainer, RejectsBadOptions) {
    const auto corpus = small_corpus();
    sched::Runtime rt(1, sched::PinMode::kNone);
    auto o = options(0);
    EXPECT_THROW(Trainer(corpus, o, rt), ConfigError);
    o = options(4);
    o.blocks = -1;
    EXPECT_THROW(Trainer(corpus, o, rt), ConfigError);
    o = options(4);
    o.init.method = InitMethod::kSequential;
    o.iterations = 0;  // no sweep: every token would stay unassigned
    EXPECT_THROW(Trainer(corpus, o, rt), ConfigError);
    o.init.word_prior = -1;
    o.iterations = 1;
    EXPECT_THROW(Trainer(corpus, o, rt), ConfigError);
    const core::Corpus empty = core::Corpus::from_docs({{}, {}}, 3);
    EXPECT_THROW(Trainer(empty, options(4), rt), ConfigError);
}

// The plan's part after the sweeps bounds the model gathered for saving (its vectors'
// capacities), at small K and at a K beyond every row's length (rows as wide as they can be),
// and grows with the coherence's --top and with the text the model copies.
TEST(Trainer, FinishMemoryBoundsTheGatheredModel) {
    const auto corpus = small_corpus(5, 200, 300);
    sched::Runtime rt(2, sched::PinMode::kNone);
    struct Quiet : train::Reporter {
        void on_iteration(const train::Record&, std::uint32_t) override {}
    } quiet;
    for (const std::uint32_t k : {4u, 2000u}) {
        TrainOptions o = options(k);
        o.iterations = 3;
        Trainer t(corpus, o, rt);
        t.train(quiet);
        const LdaModel m = t.gather_model({}, "c");
        const auto bytes = [](const SparseCounts& c) {
            return 8 * c.offsets.capacity() + 4 * c.topics.capacity() + 4 * c.counts.capacity();
        };
        const std::uint64_t held =
            bytes(m.word_topic) + bytes(m.doc_topic) +
            8 * (m.doc_labels.capacity() + m.topic_totals.capacity() + m.info.alpha.capacity());
        const std::uint64_t plan = Trainer::estimate_finish_memory(corpus, options(k), 1, 0, 0);
        EXPECT_GE(plan, held) << "K = " << k;
        EXPECT_LE(plan, 4 * held + 1000 * k) << "K = " << k;  // and not absurdly loose
        EXPECT_EQ(m.word_topic.topics.capacity(), m.word_topic.nnz()) << "K = " << k;
        EXPECT_GT(Trainer::estimate_finish_memory(corpus, options(k), 1, 0, 5000), plan);
        EXPECT_GT(Trainer::estimate_finish_memory(corpus, options(k), 2, 0, 0), plan);
    }
    // At big K the coherence's pair counts outgrow the model.
    const TrainOptions big = options(200000);
    EXPECT_GT(Trainer::estimate_finish_memory(corpus, big, 1, 10, 0),
              Trainer::estimate_finish_memory(corpus, big, 1, 0, 0));
}

}  // namespace
}  // namespace rotor::lda

namespace rotor::lda {
namespace {

// One process restored from its own documents (Trainer::local_state, as a checkpoint keeps them)
// continues exactly as the uninterrupted run: the same blocks, tables and, sweeps later, model.
TEST(Trainer, DeterministicRestoreContinuesExactly) {
    const auto corpus = small_corpus(9);
    sched::Runtime rt(2, sched::PinMode::kNone);
    const TrainOptions o = options(8, true);
    Trainer straight(corpus, o, rt);
    for (int i = 0; i < 3; ++i) straight.iterate();
    const LocalDocs saved = straight.local_state();
    Trainer resumed(corpus, o, rt);
    resumed.restore(corpus, saved.docs, saved.topics, straight.iterations_done(), 1.0, "test");
    ASSERT_EQ(resumed.blocks().size(), straight.blocks().size());
    for (std::size_t b = 0; b < straight.blocks().size(); ++b) {
        ASSERT_EQ(resumed.blocks()[b].words, straight.blocks()[b].words) << b;
        ASSERT_EQ(resumed.blocks()[b].docs, straight.blocks()[b].docs) << b;
        ASSERT_EQ(resumed.blocks()[b].topics, straight.blocks()[b].topics) << b;
    }
    EXPECT_EQ(resumed.topic_totals(), straight.topic_totals());
    for (int i = 0; i < 3; ++i) {
        straight.iterate();
        resumed.iterate();
    }
    const LdaModel a = straight.gather_model({}, "c");
    const LdaModel b = resumed.gather_model({}, "c");
    EXPECT_EQ(a.word_topic.counts, b.word_topic.counts);
    EXPECT_EQ(a.doc_topic.counts, b.doc_topic.counts);
}

}  // namespace
}  // namespace rotor::lda
