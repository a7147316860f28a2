// --sampler: the auto policy's decisions, and the trainer with MhSampler and auto (count
// invariants, the doc-token index kept current, determinism across thread counts).
#include "apps/lda/sampler_policy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "apps/lda/trainer.h"
#include "apps/lda/trainer_test_util.h"
#include "sched/runtime.h"

namespace rotor::lda {
namespace {

using testing::expect_consistent;
using testing::small_corpus;

TEST(SamplerPolicy, FixedKindsNeverSwitch) {
    SamplerPolicy sparse(SamplerKind::kSparse, false);
    SamplerPolicy mh(SamplerKind::kMh, false);
    for (std::uint32_t iter = 1; iter < 5; ++iter) {
        EXPECT_FALSE(sparse.start_block(iter).mh);
        EXPECT_TRUE(mh.start_block(iter).mh);
        EXPECT_FALSE(mh.start_block(iter).sync_index);
        mh.end_block(iter, true, 5000, 1.0);
        sparse.end_block(iter, false, 5000, 1e-9);
    }
    EXPECT_FALSE(sparse.index_in_use());
    EXPECT_TRUE(mh.index_in_use());
    EXPECT_EQ(mh.take_label(4), "mh");
    EXPECT_EQ(sparse.take_label(4), "sparse");
}

// --init sequential: SparseLDA through the given iteration, copying topics into the index when
// MhSampler runs later; the kind's own choice after it.
TEST(SamplerPolicy, SparseThroughOverridesTheKindForTheFirstIterations) {
    for (SamplerKind kind : {SamplerKind::kMh, SamplerKind::kAuto}) {
        SCOPED_TRACE(std::string(sampler_name(kind)));
        SamplerPolicy p(kind, false);
        p.sparse_through(1);
        for (int b = 0; b < 3; ++b) {
            const BlockChoice c = p.start_block(1);
            EXPECT_FALSE(c.mh);
            EXPECT_TRUE(c.sync_index);
            p.end_block(1, false, 5000, 1.0);
        }
        EXPECT_EQ(p.take_label(1), "sparse");
        if (kind == SamplerKind::kMh) {
            EXPECT_TRUE(p.start_block(2).mh);
        }
    }
    SamplerPolicy sparse(SamplerKind::kSparse, false);
    sparse.sparse_through(1);
    EXPECT_FALSE(sparse.start_block(1).sync_index);
}

TEST(SamplerPolicy, AutoProbesOncePerIterationAndSwitchesWhenSparseIsCheaper) {
    SamplerPolicy p(SamplerKind::kAuto, false);
    // Iteration 1 (random start): mh only.
    for (int b = 0; b < 4; ++b) {
        const BlockChoice c = p.start_block(1);
        EXPECT_TRUE(c.mh);
        p.end_block(1, true, 10000, 1.0);  // 1e-4 s per token
    }
    EXPECT_EQ(p.take_label(1), "mh");
    // Iteration 2: the first block is a SparseLDA probe that keeps the index, the rest mh.
    BlockChoice probe = p.start_block(2);
    EXPECT_FALSE(probe.mh);
    EXPECT_TRUE(probe.sync_index);
    EXPECT_TRUE(p.start_block(2).mh);
    p.end_block(2, false, 10000, 2.0);  // dearer than mh: no switch
    p.end_block(2, true, 10000, 0.9);
    EXPECT_FALSE(p.switched());
    EXPECT_TRUE(p.index_in_use());
    EXPECT_EQ(p.take_label(2), "mh+sparse");
    // Iteration 3: the probe is cheaper than iteration 2's mh blocks: switch for good.
    probe = p.start_block(3);
    EXPECT_FALSE(probe.mh);
    p.end_block(3, false, 10000, 0.5);
    EXPECT_TRUE(p.switched());
    EXPECT_FALSE(p.index_in_use());
    for (std::uint32_t iter = 3; iter < 6; ++iter) {
        const BlockChoice c = p.start_block(iter);
        EXPECT_FALSE(c.mh);
        EXPECT_FALSE(c.sync_index);
    }
}

TEST(SamplerPolicy, DeterministicAutoFollowsTheStateNotTimings) {
    SamplerPolicy p(SamplerKind::kAuto, true);
    p.plan_iteration(100, 100);
    for (std::uint32_t iter = 1; iter < 4; ++iter) {
        EXPECT_TRUE(p.start_block(iter).mh);  // no probes
        p.end_block(iter, true, 10000, 100.0);
    }
    p.plan_iteration(SamplerPolicy::kDeterministicSwitch * 100 + 1, 100);
    EXPECT_TRUE(p.start_block(4).mh);
    p.plan_iteration(SamplerPolicy::kDeterministicSwitch * 100, 100);
    const BlockChoice c = p.start_block(5);
    EXPECT_FALSE(c.mh);
    EXPECT_TRUE(c.sync_index);  // a function of the state: mh could come back
    p.plan_iteration(100, 100);
    EXPECT_TRUE(p.start_block(6).mh);
}

TrainOptions options(std::uint32_t k, SamplerKind kind, bool deterministic = false) {
    TrainOptions o;
    o.params.num_topics = k;
    o.params.beta = 0.01;
    o.seed = 11;
    o.deterministic = deterministic;
    o.sampler = kind;
    return o;
}

class SamplerThreads : public ::testing::TestWithParam<int> {};

// mh and auto keep every table exact and label each iteration's kernels; auto's labels never go
// back to mh once sparse alone ran.
TEST_P(SamplerThreads, CountsStayConsistentWithMhAndAuto) {
    const auto corpus = small_corpus();
    for (SamplerKind kind : {SamplerKind::kMh, SamplerKind::kAuto}) {
        SCOPED_TRACE(std::string(sampler_name(kind)));
        sched::Runtime rt(GetParam(), sched::PinMode::kNone);
        Trainer t(corpus, options(16, kind), rt);
        bool sparse_only = false;
        for (int i = 0; i < 6; ++i) {
            const train::Record m = t.iterate();
            EXPECT_EQ(m.processed, corpus.num_tokens());
            expect_consistent(t, corpus);
            const std::string* label = m.label("sampler");
            ASSERT_NE(label, nullptr);
            if (kind == SamplerKind::kMh) {
                EXPECT_EQ(*label, "mh");
            }
            if (sparse_only) {
                EXPECT_EQ(*label, "sparse");
            }
            sparse_only = *label == "sparse";
            if (kind == SamplerKind::kAuto && i == 0) {
                EXPECT_EQ(*label, "mh");
            }
        }
    }
}

// --init sequential: every token starts unassigned (empty tables); the first sweep is
// SparseLDA's whatever the kernel and assigns every token, on its own when MhSampler follows
// (which must not read an unassigned token); the sweeps after it keep the tables exact.
TEST_P(SamplerThreads, SequentialInitDrawsEveryTokenInTheFirstSweep) {
    const auto corpus = small_corpus();
    for (SamplerKind kind : {SamplerKind::kSparse, SamplerKind::kMh, SamplerKind::kAuto}) {
        SCOPED_TRACE(std::string(sampler_name(kind)));
        sched::Runtime rt(GetParam(), sched::PinMode::kNone);
        auto o = options(16, kind);
        o.init.method = InitMethod::kSequential;
        Trainer t(corpus, o, rt);
        for (const TokenBlock& b : t.blocks())
            for (TopicId z : b.topics) ASSERT_EQ(z, kUnassignedTopic);
        for (TotalCount n : t.topic_totals()) ASSERT_EQ(n, 0u);
        std::vector<std::string> labels;
        const train::Record last = t.iterate_span(4, [&](train::Record& m) {
            EXPECT_EQ(m.processed, corpus.num_tokens());
            if (const std::string* l = m.label("sampler")) labels.push_back(*l);
        });
        if (const std::string* l = last.label("sampler")) labels.push_back(*l);
        EXPECT_EQ(last.iter, 4u);
        expect_consistent(t, corpus);
        if (kind == SamplerKind::kSparse) continue;
        ASSERT_EQ(labels.size(), 4u);
        EXPECT_EQ(labels[0], "sparse");
        if (kind == SamplerKind::kMh) {
            EXPECT_EQ(labels[1], "mh");
        }
        for (int i = 0; i < 2; ++i) {
            t.iterate();
            expect_consistent(t, corpus);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Threads, SamplerThreads, ::testing::Values(1, 2));

// --deterministic with mh and auto: the same model at 1, 2 and 3 threads; and mh's model is not
// SparseLDA's (the flag does switch the kernel).
TEST(TrainerSampler, DeterministicMhAndAutoAreIndependentOfThreadCount) {
    const auto corpus = small_corpus(5);
    std::vector<std::vector<Count>> sparse_counts;
    for (SamplerKind kind : {SamplerKind::kMh, SamplerKind::kAuto, SamplerKind::kSparse}) {
        SCOPED_TRACE(std::string(sampler_name(kind)));
        std::vector<LdaModel> models;
        for (int threads : {1, 2, 3}) {
            sched::Runtime rt(threads, sched::PinMode::kNone);
            Trainer t(corpus, options(12, kind, true), rt);
            for (int i = 0; i < 8; ++i) t.iterate();
            expect_consistent(t, corpus);
            models.push_back(t.gather_model({}, "synthetic"));
        }
        for (std::size_t i = 1; i < models.size(); ++i) {
            EXPECT_EQ(models[i].word_topic.counts, models[0].word_topic.counts);
            EXPECT_EQ(models[i].doc_topic.counts, models[0].doc_topic.counts);
            EXPECT_EQ(models[i].topic_totals, models[0].topic_totals);
        }
        sparse_counts.push_back(models[0].word_topic.counts);
    }
    EXPECT_NE(sparse_counts[0], sparse_counts[2]);
}

}  // namespace
}  // namespace rotor::lda
