// Cases of the distributed checkpoints (apps/lda/checkpoint.h, write_checkpoint /
// read_checkpoint / Trainer::restore), shared by the MPI tests (ranks as
// processes under mpiexec) and the in-process tests. Every case is collective; assertions are
// EXPECT_* only (a rank returning early alone would leave the others in a collective). `dir` is
// a path every rank agrees on, whose parent exists; the cases remove it when done.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/lda/checkpoint.h"
#include "apps/lda/trainer.h"
#include "comm/agreed.h"
#include "comm/communicator.h"
#include "sched/runtime.h"
#include "tests/apps/lda/test_distributed_cases.h"

namespace rotor::lda::testing {

/// Collective: reads this rank's view of `dir` (failures agreed, so every rank returns alike).
inline std::optional<Checkpoint> read_agreed(comm::Communicator& comm, const std::string& dir,
                                             std::string* error = nullptr) {
    std::optional<Checkpoint> c;
    try {
        comm::run_agreed(comm, [&] { c = read_checkpoint(dir, comm.rank(), comm.size()); });
    } catch (const comm::AgreedError& e) {
        if (error) *error = e.what();
        return std::nullopt;
    }
    return c;
}

/// A trainer restored from a checkpoint holds exactly the state that was saved: every token's
/// topic, the doc rows, the home slices' word rows (others zero), the topic totals, α, the
/// iteration count, hence the same log-likelihood; and it trains on with exact counts.
inline void case_checkpoint_restores_exact_state(comm::Communicator& comm, const std::string& dir,
                                                 int threads = 1) {
    const auto corpus = small_corpus();
    sched::Runtime rt(threads, sched::PinMode::kNone);
    TrainOptions o = dist_train_options(8);
    o.iterations = 6;
    const DistributedOptions d = no_timer();
    Trainer t1(corpus, o, d, rt, comm);
    for (int i = 0; i < 3; ++i) t1.iterate();
    // An asymmetric α, as --optimize-alpha leaves it: saved and restored too.
    std::vector<double> alpha(8);
    for (std::size_t k = 0; k < alpha.size(); ++k) alpha[k] = 0.1 + 0.05 * static_cast<double>(k);
    t1.set_alpha(alpha);
    const double ll1 = t1.evaluate().loglik;
    const CorpusFingerprint print = fingerprint(corpus);
    write_checkpoint(dir, t1, o, d, print);
    comm.barrier();

    const auto c = read_agreed(comm, dir);
    EXPECT_TRUE(c.has_value());
    if (!c) return;  // every rank alike
    EXPECT_EQ(c->ranks, comm.size());
    EXPECT_EQ(c->iterations_done, 3u);
    EXPECT_EQ(c->options.iterations, 6u);
    EXPECT_EQ(c->options.seed, o.seed);
    EXPECT_EQ(c->options.params.num_topics, 8u);
    EXPECT_EQ(c->alpha, alpha);
    EXPECT_EQ(c->columns_per_slice, t1.columns_per_slice());
    EXPECT_FALSE(c->timer);
    EXPECT_TRUE(c->corpus == print);
    const LocalDocs saved = t1.local_state();
    EXPECT_EQ(c->docs, t1.local_docs());
    EXPECT_TRUE(c->topics == saved.topics) << "rank " << comm.rank();

    // Another runtime width and another grid: the parts list documents, not blocks.
    sched::Runtime rt2(threads == 1 ? 2 : 1, sched::PinMode::kNone);
    DistributedOptions d2 = d;
    d2.columns_per_slice = c->columns_per_slice + 1;
    Trainer t2(corpus, c->options, d2, rt2, comm);
    t2.set_alpha(c->alpha);
    t2.restore(corpus, c->docs, c->topics, c->iterations_done, c->timer_budget, c->part_path);
    EXPECT_EQ(t2.iterations_done(), 3u);
    EXPECT_EQ(t2.alpha(), alpha);
    EXPECT_EQ(t2.topic_totals(), t1.topic_totals());
    EXPECT_EQ(t2.local_docs(), t1.local_docs());
    std::int64_t doc_diff = 0;
    for (DocId doc = 0; doc < t1.doc_topic().num_docs(); ++doc)
        for (TopicId k = 0; k < 8; ++k)
            doc_diff += t1.doc_topic().get(doc, k) != t2.doc_topic().get(doc, k);
    EXPECT_EQ(doc_diff, 0) << "rank " << comm.rank();
    std::int64_t word_diff = 0;
    for (WordId w = 0; w < corpus.num_words(); ++w)
        for (TopicId k = 0; k < 8; ++k) word_diff += t1.word_count(w, k) != t2.word_count(w, k);
    EXPECT_EQ(word_diff, 0) << "rank " << comm.rank();
    expect_consistent_across_ranks(t2, comm, corpus);
    const double ll2 = t2.evaluate().loglik;
    EXPECT_NEAR(ll2, ll1, 1e-9 * std::abs(ll1));

    // It trains on from iteration 4, sampling every token, with exact counts.
    for (int i = 0; i < 3; ++i) {
        const train::Record m = t2.iterate();
        EXPECT_EQ(m.iter, static_cast<std::uint32_t>(4 + i));
        EXPECT_EQ(m.processed, corpus.num_tokens());
    }
    EXPECT_EQ(t2.iterations_done(), 6u);
    expect_consistent_across_ranks(t2, comm, corpus);
    const LdaModel model = t2.gather_model({}, "synthetic");
    if (comm.rank() == 0) {
        EXPECT_EQ(model.info.iterations, 6u);
    }
    comm.barrier();
    if (comm.rank() == 0) std::filesystem::remove_all(dir);
    comm.barrier();
}

/// With the timer on, the budget in force is saved and becomes the restored trainer's.
inline void case_checkpoint_keeps_timer_budget(comm::Communicator& comm, const std::string& dir) {
    const auto corpus = small_corpus(4, 120, 200);
    sched::Runtime rt(1, sched::PinMode::kNone);
    TrainOptions o = dist_train_options(8);
    DistributedOptions d;
    d.timer = true;
    d.timer_params.initial_s = 0.5;  // every round finishes: the budget halves every iteration
    d.timer_always = true;
    Trainer t1(corpus, o, d, rt, comm);
    t1.iterate();
    t1.iterate();
    const double budget = t1.timer_budget();
    if (comm.size() == 1) {
        // One process runs no timer; its checkpoint carries the first budget, for a resume on
        // more ranks.
        EXPECT_EQ(budget, 0.0);
        write_checkpoint(dir, t1, o, d, fingerprint(corpus));
        EXPECT_EQ(read_checkpoint(dir).timer_budget, d.timer_params.initial_s);
        return;
    }
    EXPECT_GT(budget, 0.0);
    write_checkpoint(dir, t1, o, d, fingerprint(corpus));
    comm.barrier();
    const auto c = read_agreed(comm, dir);
    EXPECT_TRUE(c.has_value());
    if (!c) return;
    EXPECT_TRUE(c->timer);
    EXPECT_TRUE(c->timer_always);
    EXPECT_EQ(c->timer_budget, budget);
    EXPECT_EQ(c->timer_low, d.timer_params.low);
    EXPECT_EQ(c->timer_high, d.timer_params.high);
    DistributedOptions d2 = d;
    d2.columns_per_slice = c->columns_per_slice;
    Trainer t2(corpus, c->options, d2, rt, comm);
    t2.restore(corpus, c->docs, c->topics, c->iterations_done, c->timer_budget, c->part_path);
    EXPECT_EQ(t2.timer_budget(), budget);
    EXPECT_EQ(t2.iterations_done(), 2u);
    expect_consistent_across_ranks(t2, comm, corpus);
    comm.barrier();
    if (comm.rank() == 0) std::filesystem::remove_all(dir);
    comm.barrier();
}

/// A checkpoint that is not whole is refused on every rank with an error naming the file: a
/// truncated, a corrupt (one byte flipped) or a missing part of the last rank, also when read
/// by another number of ranks, a single-process reader, and parts that do not fit the corpus (a
/// topic short, a topic out of range, a document missing, a document on two ranks).
inline void case_checkpoint_detects_bad_parts(comm::Communicator& comm, const std::string& dir) {
    namespace fs = std::filesystem;
    const auto corpus = small_corpus(4, 120, 200);
    sched::Runtime rt(1, sched::PinMode::kNone);
    const TrainOptions o = dist_train_options(8);
    const DistributedOptions d = no_timer();
    Trainer t(corpus, o, d, rt, comm);
    t.iterate();
    const CorpusFingerprint print = fingerprint(corpus);
    const int last = comm.size() - 1;
    const std::string part = (fs::path(dir) / fmt::format("part-{:05d}.bin", last)).string();

    // Rank 0 damages the checkpoint (the ranks share the filesystem), then every rank reads.
    const auto expect_refused = [&](const char* what, const std::function<void()>& damage,
                                    const std::string& expect_in_message) {
        write_checkpoint(dir, t, o, d, print);
        comm.barrier();
        if (comm.rank() == 0) damage();
        comm.barrier();
        std::string error;
        const auto c = read_agreed(comm, dir, &error);
        EXPECT_FALSE(c.has_value()) << what;
        EXPECT_NE(error.find(expect_in_message), std::string::npos) << what << ": " << error;
    };
    expect_refused(
        "truncated", [&] { fs::resize_file(part, fs::file_size(part) - 3); }, part);
    expect_refused(
        "corrupt",
        [&] {
            std::fstream f(part, std::ios::in | std::ios::out | std::ios::binary);
            f.seekg(-1, std::ios::end);
            char ch = 0;
            f.get(ch);
            f.seekp(-1, std::ios::end);
            f.put(static_cast<char>(ch ^ 0x5a));
        },
        "corrupt");
    expect_refused(
        "missing", [&] { fs::remove(part); }, "missing");
    expect_refused(
        "missing manifest", [&] { fs::remove(fs::path(dir) / "state.json"); }, "state.json");

    // Whole again. Read by another number of ranks: no part yet; read_checkpoint_parts then
    // takes any documents' topics from every part, and finds a broken part of any rank.
    write_checkpoint(dir, t, o, d, print);
    comm.barrier();
    const LocalDocs mine = t.local_state();
    std::optional<Checkpoint> other;
    try {
        other = read_checkpoint(dir, comm.rank(), comm.size() + 1);
    } catch (const InputError& e) {
        ADD_FAILURE() << e.what();
    }
    if (other) {
        EXPECT_EQ(other->ranks, comm.size());
        EXPECT_TRUE(other->docs.empty());
        EXPECT_EQ(other->part_paths.size(), static_cast<std::size_t>(comm.size()));
        read_checkpoint_parts(*other, corpus, mine.docs);
        EXPECT_EQ(other->docs, mine.docs);
        EXPECT_TRUE(other->topics == mine.topics) << "rank " << comm.rank();
        std::vector<DocId> all(corpus.num_docs());
        std::iota(all.begin(), all.end(), DocId{0});
        read_checkpoint_parts(*other, corpus, all);
        EXPECT_EQ(other->topics.size(), corpus.num_tokens());
    }
    comm.barrier();
    if (comm.rank() == 0) {
        std::fstream f(part, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(-1, std::ios::end);
        f.put('\x7f');
    }
    comm.barrier();
    if (other) {
        std::string error;
        try {
            read_checkpoint_parts(*other, corpus, mine.docs);
        } catch (const InputError& e) {
            error = e.what();
        }
        EXPECT_NE(error.find(part), std::string::npos) << error;
    }
    write_checkpoint(dir, t, o, d, print);
    comm.barrier();
    // One process reads the same checkpoint: the manifest, and its documents from the parts
    // (read_checkpoint_parts) when the checkpoint has more than one.
    const Checkpoint alone = read_checkpoint(dir);
    EXPECT_EQ(alone.ranks, comm.size());
    EXPECT_EQ(alone.docs.empty(), comm.size() > 1);

    // Parts that do not fit the corpus: every rank refuses alike, before anything changed.
    const auto c = read_agreed(comm, dir);
    EXPECT_TRUE(c.has_value());
    if (c) {
        const auto refused = [&](const char* what, std::vector<DocId> docs,
                                 std::vector<TopicId> topics, const std::string& expect) {
            Trainer t2(corpus, c->options, d, rt, comm);
            std::string error;
            try {
                t2.restore(corpus, docs, topics, c->iterations_done, c->timer_budget, c->part_path);
            } catch (const comm::AgreedError& e) {
                error = e.what();
            }
            EXPECT_NE(error.find(expect), std::string::npos) << what << ": " << error;
            EXPECT_EQ(t2.iterations_done(), 0u) << what;
            expect_consistent_across_ranks(t2, comm, corpus);
        };
        const bool is_last = comm.rank() == last;
        std::vector<TopicId> short_topics = c->topics;
        if (is_last && !short_topics.empty()) short_topics.pop_back();
        refused("a topic short", c->docs, short_topics, "topics for documents of");
        std::vector<TopicId> bad_topic = c->topics;
        if (is_last && !bad_topic.empty()) bad_topic.back() = 8;
        refused("topic out of range", c->docs, bad_topic, "out of range");
        std::vector<DocId> fewer = c->docs;
        std::vector<TopicId> fewer_topics = c->topics;
        if (is_last && !fewer.empty()) {
            fewer_topics.resize(fewer_topics.size() - corpus.doc_length(fewer.back()));
            fewer.pop_back();
        }
        refused("a document missing", fewer, fewer_topics, "documents");
        if (comm.size() > 1) {
            // The last rank claims rank 0's documents (with valid topics) instead of its own.
            std::vector<DocId> twice = c->docs;
            std::vector<TopicId> twice_topics = c->topics;
            if (is_last) {
                twice = t.rank_docs()[0];
                std::uint64_t n = 0;
                for (DocId doc : twice) n += corpus.doc_length(doc);
                twice_topics.assign(n, 0);
            }
            refused("a document on two ranks", twice, twice_topics, "on two ranks");
        }
    }
    comm.barrier();
    if (comm.rank() == 0) fs::remove_all(dir);
    comm.barrier();
}

}  // namespace rotor::lda::testing
