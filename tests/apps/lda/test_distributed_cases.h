// Cases of lda::Trainer on P ranks shared by the in-process tests (ranks as threads, under
// ThreadSanitizer too) and the MPI tests (ranks as processes under mpiexec). Every case is
// collective: each rank calls it with its own communicator. Assertions inside are EXPECT_*
// only, never ASSERT_*: a rank that returned early would leave the others in a collective.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "apps/lda/trainer.h"
#include "apps/lda/trainer_test_util.h"
#include "comm/agreed.h"
#include "comm/communicator.h"
#include "core/corpus/corpus.h"
#include "sched/runtime.h"

namespace rotor::lda::testing {

inline TrainOptions dist_train_options(std::uint32_t k = 16) {
    TrainOptions o;
    o.params.num_topics = k;
    o.params.beta = 0.01;
    o.seed = 11;
    return o;
}

/// A planted-topic corpus of `docs` documents (8 topics) for the distributed cases.
inline core::Corpus planted_corpus(std::uint32_t docs, std::uint32_t vocab,
                                   std::uint32_t mean_length, std::uint64_t seed) {
    SyntheticSpec spec;
    spec.num_docs = docs;
    spec.vocab_size = vocab;
    spec.num_topics = 8;
    spec.mean_doc_length = mean_length;
    spec.seed = seed;
    return to_corpus(make_synthetic_corpus(spec), spec.vocab_size);
}

/// The corpus of the straggler cases: rounds of about 20k tokens per rank at two ranks.
inline core::Corpus straggler_corpus() { return planted_corpus(1500, 1500, 100, 9); }

inline DistributedOptions no_timer() {
    DistributedOptions d;
    d.timer = false;
    return d;
}

/// Collective. Recounts every table from the ranks' token assignments (summed over ranks with
/// allreduce) and compares: local doc rows, home-slice word rows (exactly the home slices'
/// tables are held, and they hold exactly those words), topic totals, and the corpus' doc
/// lengths and word frequencies.
inline void expect_consistent_across_ranks(const Trainer& t, comm::Communicator& comm,
                                           const core::Corpus& corpus) {
    const auto k_count = static_cast<std::uint32_t>(t.topic_totals().size());
    const WordId w_count = corpus.num_words();
    const auto& local_docs = t.local_docs();
    std::vector<std::int64_t> wk(static_cast<std::size_t>(w_count) * k_count, 0);
    std::vector<std::int64_t> nk(k_count + 1, 0);  // last: tokens
    std::vector<std::int64_t> dk(local_docs.size() * k_count, 0);
    std::int64_t bad_tokens = 0;
    for (const TokenBlock& b : t.blocks()) {
        // Block words are slice-local: positions in the slice of the block's column.
        const auto& slice = t.slice_words(t.slice_of_column(static_cast<int>(b.col)));
        for (std::size_t j = 0; j < b.num_words(); ++j) {
            if (b.words[j] >= slice.size() || (j > 0 && b.words[j] <= b.words[j - 1])) {
                bad_tokens += static_cast<std::int64_t>(b.word_offsets[j + 1] - b.word_offsets[j]);
                continue;
            }
            const WordId w = slice[b.words[j]];
            for (auto i = b.word_offsets[j]; i < b.word_offsets[j + 1]; ++i) {
                const TopicId z = b.topics[i];
                if (z >= k_count || b.docs[i] >= local_docs.size()) {
                    ++bad_tokens;
                    continue;
                }
                ++wk[static_cast<std::size_t>(w) * k_count + z];
                ++dk[static_cast<std::size_t>(b.docs[i]) * k_count + z];
                ++nk[z];
                ++nk[k_count];
            }
        }
    }
    EXPECT_EQ(bad_tokens, 0);

    // Doc rows are local: compare at once.
    std::int64_t doc_mismatch = 0;
    for (DocId d = 0; d < local_docs.size(); ++d) {
        std::uint64_t sum = 0;
        for (TopicId k = 0; k < k_count; ++k) {
            const Count c = t.doc_topic().get(d, k);
            if (c != dk[static_cast<std::size_t>(d) * k_count + k]) ++doc_mismatch;
            sum += c;
        }
        if (sum != corpus.doc_length(local_docs[d])) ++doc_mismatch;
    }
    EXPECT_EQ(doc_mismatch, 0) << "rank " << comm.rank();

    comm.allreduce_sum(wk);
    comm.allreduce_sum(nk);
    EXPECT_EQ(nk[k_count], static_cast<std::int64_t>(corpus.num_tokens()));
    std::vector<TotalCount> totals(nk.begin(), nk.begin() + k_count);
    EXPECT_EQ(t.topic_totals(), totals) << "rank " << comm.rank();

    // Exactly the home slices' tables are held (one slice of every word with one rank, 2p and
    // 2p + 1 else), over their words, and their model_bytes.
    const std::vector<int> mine = t.home_slices(comm.rank());
    EXPECT_EQ(mine.size(), comm.size() == 1 ? 1u : 2u);
    std::size_t held_bytes = 0;
    for (int s = 0; s < t.num_slices(); ++s) {
        const bool home = std::find(mine.begin(), mine.end(), s) != mine.end();
        const WordTopicTable* table = t.slice_table(s);
        EXPECT_EQ(table != nullptr, home) << "rank " << comm.rank() << " slice " << s;
        if (table == nullptr) continue;
        EXPECT_EQ(table->num_words(), t.slice_words(s).size()) << "slice " << s;
        EXPECT_EQ(table->num_topics(), k_count);
        held_bytes += table->memory_bytes();
    }
    EXPECT_EQ(t.model_bytes(), held_bytes) << "rank " << comm.rank();

    // Home slices hold exact rows; every other word counts 0 on this rank.
    std::vector<std::uint8_t> home(w_count, 0);
    for (const int s : mine)
        for (WordId w : t.slice_words(s)) home[w] = 1;
    const auto freq = corpus.word_frequencies();
    std::int64_t word_mismatch = 0;
    std::int64_t freq_mismatch = 0;
    for (WordId w = 0; w < w_count; ++w) {
        std::int64_t sum = 0;
        for (TopicId k = 0; k < k_count; ++k) {
            const std::int64_t expect = home[w] ? wk[static_cast<std::size_t>(w) * k_count + k] : 0;
            if (t.word_count(w, k) != expect) ++word_mismatch;
            sum += wk[static_cast<std::size_t>(w) * k_count + k];
        }
        if (sum != freq[w]) ++freq_mismatch;
    }
    EXPECT_EQ(word_mismatch, 0) << "rank " << comm.rank();
    EXPECT_EQ(freq_mismatch, 0) << "rank " << comm.rank();

    // Slices partition the vocabulary; ranks partition the docs.
    std::vector<int> seen(w_count, 0);
    for (int s = 0; s < t.num_slices(); ++s)
        for (WordId w : t.slice_words(s)) ++seen[w];
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    std::vector<std::int64_t> docs(1, static_cast<std::int64_t>(local_docs.size()));
    comm.allreduce_sum(docs);
    EXPECT_EQ(docs[0], static_cast<std::int64_t>(corpus.num_docs()));
}

/// Timer off: every token is sampled exactly once per iteration and the counts stay exact.
inline void case_counts_consistent(comm::Communicator& comm, int threads = 1) {
    const auto corpus = small_corpus();
    sched::Runtime rt(threads, sched::PinMode::kNone);
    Trainer t(corpus, dist_train_options(), no_timer(), rt, comm);
    expect_consistent_across_ranks(t, comm, corpus);
    for (int i = 0; i < 3; ++i) {
        const train::Record m = t.iterate();
        EXPECT_EQ(m.processed, corpus.num_tokens());
        EXPECT_DOUBLE_EQ(m.processed_ratio, 1.0);
        EXPECT_GE(m.get("s_error").value(), 0.0);
        // Per-rank accounting is the ring's: none for one process.
        EXPECT_EQ(t.rank_metrics().size(),
                  comm.size() == 1 ? 0u : static_cast<std::size_t>(comm.size()));
        for (const RankMetrics& r : t.rank_metrics()) {
            EXPECT_EQ(r.tokens_sampled, r.tokens);
            EXPECT_GE(r.compute_s, 0.0);
            EXPECT_GE(r.overhead_ratio, 0.0);
            EXPECT_LE(r.overhead_ratio, 1.0);
        }
        expect_consistent_across_ranks(t, comm, corpus);
    }
}

/// Collective. Each rank holds word-topic tables of its slices only: model_bytes() is the sum of
/// its two home slices' tables, after construction and after iterations; with 4 or more ranks it
/// is below half of one whole-corpus table, and the ranks' sum stays that table's size (rows
/// and pools are the same, only per-table overhead could differ). The iteration metrics report
/// every rank's peak and their maximum.
inline void case_model_memory_per_slice(comm::Communicator& comm) {
    const auto corpus = planted_corpus(600, 1200, 80, 5);
    constexpr std::uint32_t kTopics = 32;
    sched::Runtime rt(1, sched::PinMode::kNone);
    Trainer t(corpus, dist_train_options(kTopics), no_timer(), rt, comm);
    const auto freq = corpus.word_frequencies();
    const std::vector<std::uint64_t> freq_u(freq.begin(), freq.end());
    const auto whole = static_cast<double>(WordTopicTable(kTopics, freq_u).memory_bytes());
    const double bound = comm.size() >= 4 ? 0.5 : 1.0;
    const auto check = [&](const char* when) {
        std::size_t home = 0;
        for (const int s : t.home_slices(comm.rank())) {
            const WordTopicTable* table = t.slice_table(s);
            EXPECT_NE(table, nullptr) << when;
            if (table != nullptr) home += table->memory_bytes();
        }
        EXPECT_EQ(t.model_bytes(), home) << when << ", rank " << comm.rank();
        EXPECT_LE(static_cast<double>(t.model_bytes()), bound * whole)
            << when << ", rank " << comm.rank() << " of " << comm.size();
        std::vector<std::int64_t> sum{static_cast<std::int64_t>(t.model_bytes())};
        comm.allreduce_sum(sum);
        EXPECT_NEAR(static_cast<double>(sum[0]), whole, 0.01 * whole) << when;
    };
    check("after construction");
    for (int i = 0; i < 2; ++i) {
        const train::Record m = t.iterate();
        check("after an iteration");
        const std::vector<double>* per_rank = nullptr;
        for (const auto& [key, values] : m.arrays)
            if (key == "rank_model_bytes") per_rank = &values;
        double max_reported = -1;
        for (const auto& [key, value] : m.values)
            if (key == "model_bytes_max") max_reported = value;
        EXPECT_NE(per_rank, nullptr);
        if (per_rank == nullptr) continue;
        EXPECT_EQ(per_rank->size(), static_cast<std::size_t>(comm.size()));
        if (per_rank->size() != static_cast<std::size_t>(comm.size())) continue;
        // The peak includes the start of the iteration, when the home slices are held.
        EXPECT_GE((*per_rank)[comm.rank()], static_cast<double>(t.model_bytes()));
        EXPECT_LE((*per_rank)[comm.rank()], bound * whole);
        EXPECT_EQ(max_reported, *std::max_element(per_rank->begin(), per_rank->end()));
        EXPECT_EQ(static_cast<double>(t.rank_metrics()[comm.rank()].model_bytes),
                  (*per_rank)[comm.rank()]);
    }
    expect_consistent_across_ranks(t, comm, corpus);
}

/// The log-likelihood after N iterations is within 0.5% of one process's (P = 1) on the same
/// corpus and seed, for three corpora. They have few, well separated planted topics and K equal
/// to their number, and N is large enough for both chains to converge: after 40 iterations
/// chains of either run still differ by up to 1% (either side); after 80, by about 0.1%.
inline void case_loglik_matches_single_node(comm::Communicator& comm) {
    constexpr int kIterations = 80;
    sched::Runtime rt(1, sched::PinMode::kNone);
    std::vector<double> rel;
    for (std::uint64_t corpus_seed : {1, 2, 3}) {
        SyntheticSpec spec;
        spec.num_docs = 400;
        spec.vocab_size = 400;
        spec.num_topics = 4;
        spec.mean_doc_length = 150;
        spec.seed = corpus_seed;
        const auto corpus = to_corpus(make_synthetic_corpus(spec), spec.vocab_size);
        std::vector<double> single{0.0};
        if (comm.rank() == 0) {
            Trainer ref(corpus, dist_train_options(4), rt);
            for (int i = 0; i < kIterations; ++i) ref.iterate();
            single[0] = ref.evaluate().loglik;
        }
        comm.allreduce_sum(single);
        Trainer t(corpus, dist_train_options(4), no_timer(), rt, comm);
        const double initial = t.evaluate().loglik;
        for (int i = 0; i < kIterations; ++i) t.iterate();
        const double ll = t.evaluate().loglik;
        EXPECT_GT(ll, initial);  // training made progress
        rel.push_back(std::abs(ll - single[0]) / std::abs(single[0]));
        EXPECT_LT(rel.back(), 0.005) << "distributed " << ll << " single-node " << single[0];
        // Every rank sees the same value.
        std::vector<double> lo{ll};
        std::vector<double> hi{ll};
        comm.allreduce_min(lo);
        comm.allreduce_max(hi);
        EXPECT_EQ(lo[0], hi[0]);
    }
}

/// With the timer on and the last rank 10x slower, the run completes, counts stay exact, and the
/// slow rank reports a processed ratio below 1.
/// `compare_ranks`: also check that the straggler's ratio is below every other rank's. Only with
/// ranks in separate processes: in-process ranks share oneTBB's worker pool (global_control takes
/// the smallest limit), so a healthy rank's round can wait for the straggler's job, sleep
/// included, and under load it may then process less than the straggler.
inline void case_straggler_with_timer(comm::Communicator& comm, bool compare_ranks) {
    const auto corpus = straggler_corpus();
    sched::Runtime rt(1, sched::PinMode::kNone);
    DistributedOptions d;
    d.timer = true;
    // Rounds of about 20k tokens: 2-5 ms for a healthy rank, 10x that for the straggler. The
    // budget is long enough that a healthy rank descheduled for a time slice or two (loaded CI
    // machines) still gets well ahead of the straggler, and short enough that the straggler does
    // not finish its rounds even on a fast machine.
    d.timer_params.initial_s = 0.01;
    d.timer_params.max_s = 0.01;
    d.straggler_rank = comm.size() - 1;
    d.straggler_factor = 10;
    d.rebalance = false;  // the timer alone: documents stay where they are
    Trainer t(corpus, dist_train_options(8), d, rt, comm);
    std::vector<double> ratio_sum(comm.size(), 0.0);
    constexpr int kIterations = 6;
    for (int i = 0; i < kIterations; ++i) {
        const train::Record m = t.iterate();
        EXPECT_LE(m.processed, corpus.num_tokens());
        for (int q = 0; q < comm.size(); ++q) ratio_sum[q] += t.rank_metrics()[q].processed_ratio;
        EXPECT_GT(t.timer_budget(), 0.0);
    }
    const int slow = comm.size() - 1;
    EXPECT_LT(ratio_sum[slow], kIterations);
    for (int q = 0; q < slow && compare_ranks; ++q)
        EXPECT_LT(ratio_sum[slow], ratio_sum[q]) << "rank " << q << " vs the straggler";
    expect_consistent_across_ranks(t, comm, corpus);
}

/// --init sequential with the timer on: the first iteration is untimed and draws every token
/// (the tables exact, the budget untouched); the timed iterations after it keep them exact.
inline void case_sequential_init_with_timer(comm::Communicator& comm) {
    const auto corpus = small_corpus();
    sched::Runtime rt(1, sched::PinMode::kNone);
    DistributedOptions d;
    d.timer = true;
    d.timer_params.initial_s = 0.0005;  // far too short for a round of this corpus
    d.timer_params.min_s = 0.0001;
    d.timer_params.max_s = 0.0005;
    d.timer_always = true;  // the iterations after the first are timed whatever the speeds
    d.rebalance = false;
    auto o = dist_train_options();
    o.init.method = InitMethod::kSequential;
    Trainer t(corpus, o, d, rt, comm);
    const train::Record first = t.iterate();
    EXPECT_EQ(first.processed, corpus.num_tokens());
    EXPECT_EQ(t.timer_budget(), 0.0005);
    expect_consistent_across_ranks(t, comm, corpus);
    for (int i = 0; i < 2; ++i) {
        const train::Record m = t.iterate();
        EXPECT_LE(m.processed, corpus.num_tokens());
        expect_consistent_across_ranks(t, comm, corpus);
    }
}

/// Without timer_always the timer cuts rounds only while the ranks' speeds differ: with a tolerance
/// no measured imbalance exceeds, the first iteration is timed (no speeds yet) and every one after
/// it runs each round to its end (every token sampled; the record's budget 0) without touching the
/// budget.
inline void case_timer_off_while_balanced(comm::Communicator& comm) {
    const auto corpus = small_corpus();
    sched::Runtime rt(1, sched::PinMode::kNone);
    DistributedOptions d;
    d.timer = true;
    // Long enough that every rank samples in the first (timed) iteration, even descheduled for
    // a while: a rank without a measured speed keeps the timer on.
    d.timer_params.initial_s = 0.5;
    d.timer_always = false;
    d.rebalance = false;
    d.rebalance_tolerance = 1e6;  // every rank counts as as fast as the others
    Trainer t(corpus, dist_train_options(), d, rt, comm);
    const train::Record first = t.iterate();
    EXPECT_LE(first.processed, corpus.num_tokens());
    EXPECT_EQ(first.get("timer_budget_s").value_or(-1), 0.0);  // the next iteration runs untimed
    const double budget = t.timer_budget();
    EXPECT_GT(budget, 0.0);
    for (int i = 0; i < 2; ++i) {
        const train::Record m = t.iterate();
        EXPECT_EQ(m.processed, corpus.num_tokens());
        EXPECT_EQ(m.get("timer_budget_s").value_or(-1), 0.0);
        EXPECT_EQ(t.timer_budget(), budget);
        expect_consistent_across_ranks(t, comm, corpus);
    }
}

/// gather_model on rank 0 is the whole model: rows sum to frequencies and doc lengths, labels in
/// corpus order, and it equals a model assembled from the recount.
inline void case_gather_model(comm::Communicator& comm) {
    const auto corpus = small_corpus(4, 120, 200);
    sched::Runtime rt(1, sched::PinMode::kNone);
    Trainer t(corpus, dist_train_options(8), no_timer(), rt, comm);
    t.iterate();
    t.iterate();
    const LdaModel model = t.gather_model({}, "synthetic");
    if (comm.rank() != 0) {
        EXPECT_EQ(model.word_topic.rows(), 0u);
        return;
    }
    EXPECT_EQ(model.info.num_docs, corpus.num_docs());
    EXPECT_EQ(model.info.iterations, 2u);
    ASSERT_EQ(model.word_topic.rows(), corpus.num_words());
    ASSERT_EQ(model.doc_topic.rows(), corpus.num_docs());
    EXPECT_EQ(model.doc_labels,
              std::vector<std::uint64_t>(corpus.doc_labels().begin(), corpus.doc_labels().end()));
    const auto freq = corpus.word_frequencies();
    std::vector<TotalCount> col(8, 0);
    for (WordId w = 0; w < corpus.num_words(); ++w) {
        std::int64_t sum = 0;
        for (auto i = model.word_topic.offsets[w]; i < model.word_topic.offsets[w + 1]; ++i) {
            sum += model.word_topic.counts[i];
            col[model.word_topic.topics[i]] += model.word_topic.counts[i];
        }
        EXPECT_EQ(sum, freq[w]) << "word " << w;
    }
    EXPECT_EQ(col, model.topic_totals);
    for (DocId d = 0; d < corpus.num_docs(); ++d) {
        std::uint64_t sum = 0;
        for (auto i = model.doc_topic.offsets[d]; i < model.doc_topic.offsets[d + 1]; ++i)
            sum += model.doc_topic.counts[i];
        EXPECT_EQ(sum, corpus.doc_length(d)) << "doc " << d;
    }
}

/// top_words merges every rank's best rows into what lda::top_words gives on the gathered model.
inline void case_top_words_match_gathered_model(comm::Communicator& comm) {
    const auto corpus = small_corpus(4, 120, 200);
    sched::Runtime rt(1, sched::PinMode::kNone);
    Trainer t(corpus, dist_train_options(8), no_timer(), rt, comm);
    t.iterate();
    t.iterate();
    for (std::size_t top : {std::size_t{1}, std::size_t{7}, std::size_t{500}}) {
        const auto got = t.top_words(top);
        const LdaModel model = t.gather_model({}, "synthetic");
        if (comm.rank() != 0) {
            EXPECT_TRUE(got.empty());
            continue;
        }
        std::vector<std::vector<WordId>> want;
        for (const auto& s : lda::top_words(model, top)) {
            want.emplace_back();
            for (const auto& [w, p] : s.words) want.back().push_back(w);
        }
        EXPECT_EQ(got, want) << "top " << top;
    }
}

/// A failure on one rank (bad input) is agreed: every rank throws AgreedError with that rank's
/// message and exit code.
inline void case_agreed_failure(comm::Communicator& comm) {
    const int bad = comm.size() - 1;
    try {
        comm::run_agreed(comm, [&] {
            if (comm.rank() == bad) core::load_corpus("/nonexistent/docword.txt", "");
        });
        ADD_FAILURE() << "run_agreed did not throw";
    } catch (const comm::AgreedError& e) {
        EXPECT_EQ(e.failed_rank(), bad);
        EXPECT_EQ(e.exit_code(), ExitCode::kInput);
        EXPECT_NE(std::string(e.what()).find("/nonexistent/docword.txt"), std::string::npos)
            << e.what();
    }
    // Nothing failed: nothing thrown.
    comm::run_agreed(comm, [] {});
}

}  // namespace rotor::lda::testing
