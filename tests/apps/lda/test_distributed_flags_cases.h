// Cases of lda::Trainer's --heldout, --optimize-alpha and --trace support on P ranks, shared by
// the in-process tests (test_distributed.cpp) and the MPI tests (test_distributed_mpi.cpp). Every
// case is collective; assertions are EXPECT_* only (a rank returning early would leave the others
// in a collective).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/lda/trainer.h"
#include "comm/communicator.h"
#include "core/lda/alpha_optimizer.h"
#include "core/lda/heldout.h"
#include "tests/apps/lda/test_distributed_cases.h"
#include "train/trace.h"

namespace rotor::lda::testing {

/// Collective: true on every rank iff `bytes` is the same on every rank.
inline bool same_on_every_rank(comm::Communicator& comm, std::span<const std::byte> bytes) {
    const auto all = comm.allgather(bytes);
    return std::all_of(all.begin(), all.end(), [&](const std::vector<std::byte>& v) {
        return v.size() == bytes.size() && std::equal(v.begin(), v.end(), bytes.begin());
    });
}

/// Histograms without trailing zero bins, for comparisons that ignore padding.
inline DocTopicHistograms trimmed(DocTopicHistograms h) {
    const auto trim = [](std::vector<std::uint64_t>& v) {
        while (v.size() > 1 && v.back() == 0) v.pop_back();
    };
    for (auto& t : h.topic_counts) trim(t);
    trim(h.doc_lengths);
    return h;
}

/// Calls evaluate_heldout and checks that every rank got the same bytes.
inline HeldoutResult evaluate_checked(Trainer& t, comm::Communicator& comm,
                                      const HeldoutEvaluator& evaluator) {
    const HeldoutResult r = t.evaluate_heldout(evaluator);
    EXPECT_TRUE(same_on_every_rank(comm, std::as_bytes(std::span<const HeldoutResult>(&r, 1))));
    return r;
}

/// evaluate_heldout equals (to 1e-9 relative) the evaluation of the gathered model, the path of
/// `rotor lda eval --model`; it is the same on every rank and leaves the tables as they were.
inline void case_heldout_matches_gathered_model(comm::Communicator& comm) {
    const auto corpus = small_corpus(5, 200, 300);
    // Held-out docs from the same generator family, in the training vocabulary (labels 1..D).
    const auto held = small_corpus(6, 40, 300);
    const HeldoutEvaluator evaluator(held, FoldInOptions{});
    sched::Runtime rt(2, sched::PinMode::kNone);
    Trainer t(corpus, dist_train_options(8), no_timer(), rt, comm);
    for (int round = 0; round < 2; ++round) {
        t.iterate();
        t.iterate();
        const HeldoutResult r = evaluate_checked(t, comm, evaluator);
        EXPECT_EQ(r.docs, held.num_docs());
        EXPECT_GT(r.scored_tokens, 0u);
        EXPECT_LT(r.loglik, 0.0);
        const LdaModel model = t.gather_model({}, "synthetic");
        if (comm.rank() == 0) {
            const HeldoutResult ref = evaluator.evaluate(model);
            EXPECT_EQ(r.docs, ref.docs);
            EXPECT_EQ(r.fit_tokens, ref.fit_tokens);
            EXPECT_EQ(r.scored_tokens, ref.scored_tokens);
            EXPECT_NEAR(r.loglik, ref.loglik, 1e-9 * std::abs(ref.loglik))
                << "distributed " << r.loglik << " model " << ref.loglik;
        }
        // The borrowed rows went back: rank 0 again holds only its home slices.
        expect_consistent_across_ranks(t, comm, corpus);
    }
}

/// optimize_alpha: histograms summed over ranks equal the gathered model's; the new α is
/// asymmetric, bit-identical on every rank, equal to Minka's update on the whole model, used by
/// the samplers (counts stay exact) and written into the gathered model.
inline void case_optimize_alpha(comm::Communicator& comm) {
    constexpr std::uint32_t kTopics = 8;
    const auto corpus = small_corpus(7, 240, 300);
    sched::Runtime rt(1, sched::PinMode::kNone);
    Trainer t(corpus, dist_train_options(kTopics), no_timer(), rt, comm);
    for (int i = 0; i < 4; ++i) t.iterate();
    const std::vector<double> before = t.alpha();
    EXPECT_EQ(before, std::vector<double>(kTopics, 50.0 / kTopics));

    const DocTopicHistograms summed = t.doc_topic_histograms();
    const LdaModel model = t.gather_model({}, "synthetic");
    std::vector<double> expect;
    if (comm.rank() == 0) {
        const DocTopicHistograms whole = doc_topic_histograms(model.doc_topic, kTopics);
        EXPECT_EQ(trimmed(summed).topic_counts, trimmed(whole).topic_counts);
        EXPECT_EQ(trimmed(summed).doc_lengths, trimmed(whole).doc_lengths);
        expect = optimize_alpha(whole, before).alpha;
    }

    EXPECT_TRUE(t.optimize_alpha());
    const std::vector<double>& alpha = t.alpha();
    EXPECT_EQ(alpha.size(), kTopics);
    EXPECT_NE(*std::min_element(alpha.begin(), alpha.end()),
              *std::max_element(alpha.begin(), alpha.end()))
        << "alpha stayed symmetric";
    EXPECT_TRUE(same_on_every_rank(comm, std::as_bytes(std::span<const double>(alpha))));
    if (comm.rank() == 0) {
        EXPECT_EQ(alpha, expect);
    }

    // The samplers run with it; counts stay exact; the model carries it.
    for (int i = 0; i < 2; ++i) t.iterate();
    expect_consistent_across_ranks(t, comm, corpus);
    EXPECT_TRUE(t.optimize_alpha());
    const std::vector<double> second = t.alpha();
    EXPECT_TRUE(same_on_every_rank(comm, std::as_bytes(std::span<const double>(second))));
    const LdaModel after = t.gather_model({}, "synthetic");
    if (comm.rank() == 0) {
        EXPECT_EQ(after.info.alpha, second);
    }
    const LogLikelihood ll = t.evaluate();
    EXPECT_TRUE(std::isfinite(ll.loglik));
    EXPECT_TRUE(same_on_every_rank(comm, std::as_bytes(std::span<const double>(&ll.loglik, 1))));
}

/// record_schedule: every rank records each of its non-empty blocks exactly once per iteration
/// (timer off); gather_schedule brings every rank's runs to rank 0, and the trace file has one
/// process per rank.
inline void case_schedule(comm::Communicator& comm, const std::string& trace_path) {
    constexpr std::uint32_t kIterations = 2;
    const auto corpus = small_corpus(8, 150, 200);
    const int threads = 2;
    sched::Runtime rt(threads, sched::PinMode::kNone);
    TrainOptions o = dist_train_options(8);
    o.record_schedule = true;
    Trainer t(corpus, o, no_timer(), rt, comm);
    for (std::uint32_t i = 0; i < kIterations; ++i) t.iterate();

    const auto& runs = t.schedule();
    const int side = t.grid_side();
    std::int64_t bad = 0;
    for (std::uint32_t iter = 1; iter <= kIterations; ++iter) {
        std::vector<int> seen(static_cast<std::size_t>(side) * side, 0);
        for (const train::BlockRun& r : runs) {
            if (r.iter != iter) continue;
            if (r.row < 0 || r.row >= side || r.col < 0 || r.col >= side || r.worker < 0 ||
                r.worker >= threads || !(r.start_s >= 0) || !(r.end_s >= r.start_s)) {
                ++bad;
                continue;
            }
            ++seen[static_cast<std::size_t>(r.row) * side + r.col];
        }
        for (std::size_t b = 0; b < seen.size(); ++b)
            if (t.blocks()[b].num_tokens() > 0 && seen[b] != 1) ++bad;
    }
    EXPECT_EQ(bad, 0) << "rank " << comm.rank();
    for (const train::BlockRun& r : runs) EXPECT_LE(r.iter, kIterations);

    std::vector<std::int64_t> sizes(comm.size(), 0);
    sizes[comm.rank()] = static_cast<std::int64_t>(runs.size());
    comm.allreduce_sum(sizes);
    const auto all = t.gather_schedule();
    if (comm.rank() != 0) {
        EXPECT_TRUE(all.empty());
        return;
    }
    EXPECT_EQ(all.size(), static_cast<std::size_t>(comm.size()));
    if (all.size() != static_cast<std::size_t>(comm.size())) return;
    for (int q = 0; q < comm.size(); ++q)
        EXPECT_EQ(static_cast<std::int64_t>(all[q].size()), sizes[q]) << "rank " << q;
    train::write_chrome_trace_ranks(trace_path, all, threads);
    std::ifstream in(trace_path);
    const auto j = nlohmann::json::parse(in);
    std::set<int> named;
    std::vector<std::int64_t> per_pid(comm.size(), 0);
    for (const auto& e : j.at("traceEvents")) {
        const int pid = e.at("pid").get<int>();
        EXPECT_GE(pid, 0);
        EXPECT_LT(pid, comm.size());
        if (pid < 0 || pid >= comm.size()) continue;
        if (e.at("ph") == "X") ++per_pid[pid];
        if (e.at("ph") == "M" && e.at("name") == "process_name") {
            EXPECT_EQ(e.at("args").at("name").get<std::string>(), "rank " + std::to_string(pid));
            named.insert(pid);
        }
    }
    EXPECT_EQ(named.size(), static_cast<std::size_t>(comm.size()));
    for (int q = 0; q < comm.size(); ++q) EXPECT_EQ(per_pid[q], sizes[q]) << "rank " << q;
    std::filesystem::remove(trace_path);
}

}  // namespace rotor::lda::testing
