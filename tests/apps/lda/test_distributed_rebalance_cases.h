// Cases of moving documents between ranks (Trainer::move_documents, rebalancing by
// measured speed), shared by the in-process tests and the MPI tests. Collective, EXPECT_* only
// (see test_distributed_cases.h). `dir` is a path every rank agrees on; the cases remove it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/lda/checkpoint.h"
#include "apps/lda/trainer.h"
#include "comm/communicator.h"
#include "sched/runtime.h"
#include "tests/apps/lda/test_distributed_cases.h"
#include "tests/apps/lda/test_distributed_checkpoint_cases.h"

namespace rotor::lda::testing {

/// Moving documents does not change the sampling state: counts stay exact on every rank, the
/// log-likelihood and the gathered model are what they were, each rank sends about what the plan
/// says (whole documents), every rank knows every rank's documents, the trainer samples every
/// token once per iteration afterwards, and a checkpoint saves and restores the moved layout.
inline void case_move_documents_keeps_state(comm::Communicator& comm, const std::string& dir) {
    const auto corpus = small_corpus(4, 120, 200);
    sched::Runtime rt(1, sched::PinMode::kNone);
    const TrainOptions o = dist_train_options(8);
    DistributedOptions d = no_timer();
    d.rebalance = false;  // only the moves the test asks for
    Trainer t(corpus, o, d, rt, comm);
    t.iterate();
    t.iterate();
    const double ll0 = t.evaluate().loglik;
    const LdaModel m0 = t.gather_model({}, "synthetic");

    const int ranks = comm.size();
    const int last = ranks - 1;
    const auto& rm = t.rank_metrics();
    std::vector<DocTransfer> plan;
    if (ranks > 1) plan.push_back({last, 0, rm[last].tokens / 2});
    if (ranks > 2) plan.push_back({1, last, rm[1].tokens / 4});
    std::uint64_t planned_out = 0;
    for (const DocTransfer& m : plan)
        if (m.from == comm.rank()) planned_out += m.tokens;
    std::uint64_t longest = 0;
    for (DocId doc = 0; doc < corpus.num_docs(); ++doc)
        longest = std::max<std::uint64_t>(longest, corpus.doc_length(doc));
    const std::vector<DocId> docs_before = t.local_docs();

    const std::uint64_t sent = t.move_documents(plan);
    EXPECT_LE(sent, planned_out + longest) << "rank " << comm.rank();
    EXPECT_GE(sent + longest, planned_out) << "rank " << comm.rank();
    if (ranks > 1) {
        EXPECT_EQ(t.rebalances(), 1u);
        EXPECT_GT(t.tokens_moved(), 0u);
        if (comm.rank() == last) {
            EXPECT_NE(t.local_docs(), docs_before);
        }
    } else {
        EXPECT_EQ(t.rebalances(), 0u);
        EXPECT_EQ(t.local_docs(), docs_before);
    }
    EXPECT_TRUE(std::is_sorted(t.local_docs().begin(), t.local_docs().end()));
    EXPECT_EQ(t.rank_docs().size(), static_cast<std::size_t>(ranks));
    if (t.rank_docs().size() == static_cast<std::size_t>(ranks)) {
        EXPECT_EQ(t.rank_docs()[comm.rank()], t.local_docs());
    }
    expect_consistent_across_ranks(t, comm, corpus);
    EXPECT_NEAR(t.evaluate().loglik, ll0, 1e-9 * std::abs(ll0));
    const LdaModel m1 = t.gather_model({}, "synthetic");
    if (comm.rank() == 0) {
        EXPECT_EQ(m1.doc_topic.offsets, m0.doc_topic.offsets);
        EXPECT_EQ(m1.doc_topic.topics, m0.doc_topic.topics);
        EXPECT_EQ(m1.doc_topic.counts, m0.doc_topic.counts);
        EXPECT_EQ(m1.word_topic.counts, m0.word_topic.counts);
        EXPECT_EQ(m1.topic_totals, m0.topic_totals);
    }

    for (int i = 0; i < 2; ++i) {
        const train::Record m = t.iterate();
        EXPECT_EQ(m.processed, corpus.num_tokens());
        for (const RankMetrics& r : t.rank_metrics()) EXPECT_EQ(r.tokens_sampled, r.tokens);
    }
    expect_consistent_across_ranks(t, comm, corpus);

    // A checkpoint lists the moved documents; a trainer restored from it takes them back.
    const double ll1 = t.evaluate().loglik;
    write_checkpoint(dir, t, o, d, fingerprint(corpus));
    comm.barrier();
    const auto c = read_agreed(comm, dir);
    EXPECT_TRUE(c.has_value());
    if (c) {
        EXPECT_EQ(c->docs, t.local_docs());
        EXPECT_FALSE(c->rebalance);
        Trainer t2(corpus, c->options, d, rt, comm);
        t2.restore(corpus, c->docs, c->topics, c->iterations_done, c->timer_budget, c->part_path);
        EXPECT_EQ(t2.local_docs(), t.local_docs());
        EXPECT_EQ(t2.rank_docs(), t.rank_docs());
        EXPECT_EQ(t2.topic_totals(), t.topic_totals());
        expect_consistent_across_ranks(t2, comm, corpus);
        EXPECT_NEAR(t2.evaluate().loglik, ll1, 1e-9 * std::abs(ll1));
    }
    comm.barrier();
    if (comm.rank() == 0) std::filesystem::remove_all(dir);
    comm.barrier();
}

/// With the last rank 10x slower and the timer off, rebalancing moves documents off it once the
/// first iteration has measured the ranks' speeds (a gross imbalance): it ends with well under an
/// even share of the tokens, and every iteration still samples every token once with exact
/// counts. Only with ranks
/// in separate processes (in-process ranks share oneTBB's workers, so a healthy rank can be
/// measured as slow as the straggler).
inline void case_rebalance_follows_straggler(comm::Communicator& comm) {
    const auto corpus = straggler_corpus();
    sched::Runtime rt(1, sched::PinMode::kNone);
    DistributedOptions d = no_timer();
    d.straggler_rank = comm.size() - 1;
    d.straggler_factor = 10;
    Trainer t(corpus, dist_train_options(8), d, rt, comm);
    double moved = 0;
    for (int i = 0; i < 6; ++i) {
        const train::Record m = t.iterate();
        EXPECT_EQ(m.processed, corpus.num_tokens());
        for (const auto& [name, value] : m.values)
            if (name == "tokens_moved") moved += value;
    }
    EXPECT_GE(t.rebalances(), 1u);
    EXPECT_EQ(moved, static_cast<double>(t.tokens_moved()));
    const double even = static_cast<double>(corpus.num_tokens()) / comm.size();
    EXPECT_LT(static_cast<double>(t.rank_metrics().back().tokens), 0.5 * even);
    expect_consistent_across_ranks(t, comm, corpus);
}

}  // namespace rotor::lda::testing
