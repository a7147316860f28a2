// lda::Trainer on 1-4 in-process ranks (threads of one process, comm::run_ranks), so that
// every path also runs under ThreadSanitizer. The same cases run under mpiexec in
// test_distributed_mpi.cpp.
#include "apps/lda/trainer.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "comm/inprocess_communicator.h"
#include "core/base/timer.h"
#include "sched/rebalance.h"
#include "tests/apps/lda/test_distributed_cases.h"
#include "tests/apps/lda/test_distributed_checkpoint_cases.h"
#include "tests/apps/lda/test_distributed_flags_cases.h"
#include "tests/apps/lda/test_distributed_rebalance_cases.h"

namespace rotor::lda {
namespace {

using namespace rotor::lda::testing;

class DistributedRanks : public ::testing::TestWithParam<int> {};

TEST_P(DistributedRanks, CountsStayConsistentEveryIteration) {
    comm::run_ranks(GetParam(), [](comm::Communicator& c) { case_counts_consistent(c); });
}

TEST_P(DistributedRanks, GatheredModelIsWhole) {
    comm::run_ranks(GetParam(), [](comm::Communicator& c) { case_gather_model(c); });
}

TEST_P(DistributedRanks, TopWordsMatchGatheredModel) {
    comm::run_ranks(GetParam(),
                    [](comm::Communicator& c) { case_top_words_match_gathered_model(c); });
}

TEST_P(DistributedRanks, AgreedFailureReachesEveryRank) {
    comm::run_ranks(GetParam(), [](comm::Communicator& c) { case_agreed_failure(c); });
}

TEST_P(DistributedRanks, HeldoutMatchesGatheredModel) {
    comm::run_ranks(GetParam(),
                    [](comm::Communicator& c) { case_heldout_matches_gathered_model(c); });
}

TEST_P(DistributedRanks, OptimizeAlphaIsSharedByEveryRank) {
    comm::run_ranks(GetParam(), [](comm::Communicator& c) { case_optimize_alpha(c); });
}

TEST_P(DistributedRanks, ScheduleGathersOneProcessPerRank) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("rotor-dist-trace-" + std::to_string(::getpid()) + "-" +
                               std::to_string(GetParam()) + ".json"))
                                 .string();
    comm::run_ranks(GetParam(), [&](comm::Communicator& c) { case_schedule(c, path); });
}

std::string checkpoint_dir(const char* name, int ranks) {
    return (std::filesystem::temp_directory_path() /
            fmt::format("rotor-dist-ckpt-{}-{}-{}", name, ::getpid(), ranks))
        .string();
}

TEST_P(DistributedRanks, CheckpointRestoresExactState) {
    const std::string dir = checkpoint_dir("exact", GetParam());
    comm::run_ranks(GetParam(),
                    [&](comm::Communicator& c) { case_checkpoint_restores_exact_state(c, dir); });
}

TEST_P(DistributedRanks, CheckpointKeepsTimerBudget) {
    const std::string dir = checkpoint_dir("timer", GetParam());
    comm::run_ranks(GetParam(),
                    [&](comm::Communicator& c) { case_checkpoint_keeps_timer_budget(c, dir); });
}

TEST_P(DistributedRanks, CheckpointDetectsBadParts) {
    const std::string dir = checkpoint_dir("bad", GetParam());
    comm::run_ranks(GetParam(),
                    [&](comm::Communicator& c) { case_checkpoint_detects_bad_parts(c, dir); });
}

TEST_P(DistributedRanks, MovingDocumentsKeepsTheState) {
    const std::string dir =
        (std::filesystem::temp_directory_path() / ("rotor-dist-move-" + std::to_string(::getpid())))
            .string();
    comm::run_ranks(GetParam(),
                    [&](comm::Communicator& c) { case_move_documents_keeps_state(c, dir); });
}

INSTANTIATE_TEST_SUITE_P(Ranks, DistributedRanks, ::testing::Values(1, 2, 3, 4));

TEST(Distributed, TwoThreadsPerRankStayConsistent) {
    comm::run_ranks(2, [](comm::Communicator& c) { case_counts_consistent(c, 2); });
}

TEST(Distributed, FourRanksHoldOnlyTheirSlicesTables) {
    comm::run_ranks(4, [](comm::Communicator& c) { case_model_memory_per_slice(c); });
}

TEST(Distributed, LoglikWithinHalfPercentOfSingleNode) {
#if defined(__SANITIZE_THREAD__)
    // A statistical check (about 20 s instrumented) on the code paths the other tests run here.
    GTEST_SKIP() << "covered by the uninstrumented and MPI builds";
#endif
    comm::run_ranks(2, [](comm::Communicator& c) { case_loglik_matches_single_node(c); });
}

TEST(Distributed, SequentialInitDrawsEveryTokenUntimed) {
    comm::run_ranks(2, [](comm::Communicator& c) { case_sequential_init_with_timer(c); });
}

TEST(Distributed, TimerOffWhileRanksAreBalanced) {
    comm::run_ranks(2, [](comm::Communicator& c) { case_timer_off_while_balanced(c); });
}

TEST(Distributed, StragglerWithTimerReportsLowerRatio) {
    comm::run_ranks(2, [](comm::Communicator& c) { case_straggler_with_timer(c, false); });
}

// A rank that throws in the middle of training ends the whole group quickly: the other ranks,
// blocked waiting for its slice or in a collective, throw instead of hanging.
TEST(Distributed, RankFailingMidRunEndsEveryRank) {
    const auto corpus = small_corpus();
    Stopwatch watch;
    try {
        comm::run_ranks(3, [&](comm::Communicator& c) {
            sched::Runtime rt(1, sched::PinMode::kNone);
            DistributedOptions d = no_timer();
            d.on_iteration_start = [](int rank, std::uint32_t iter) {
                if (rank == 1 && iter == 2) throw std::runtime_error("injected failure");
            };
            Trainer t(corpus, dist_train_options(), d, rt, c);
            for (int i = 0; i < 5; ++i) t.iterate();
        });
        ADD_FAILURE() << "run_ranks did not throw";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("injected failure"), std::string::npos) << e.what();
    }
    EXPECT_LT(watch.seconds(), 30.0);
}

TEST(DistributedOptions, ParsesAndValidatesStraggler) {
    DistributedOptions d;
    parse_straggler("1:5", d);
    EXPECT_EQ(d.straggler_rank, 1);
    EXPECT_DOUBLE_EQ(d.straggler_factor, 5.0);
    EXPECT_NO_THROW(d.validate(2));
    EXPECT_THROW(d.validate(1), ConfigError);  // rank 1 of a single rank
    for (const char* bad : {"", "1", "1:", ":5", "x:5", "1:y", "-1:2", "1:5z"})
        EXPECT_THROW(parse_straggler(bad, d), ConfigError) << bad;
    parse_straggler("0:0.5", d);
    EXPECT_THROW(d.validate(2), ConfigError);  // a factor below 1 would speed up
    DistributedOptions t;
    t.timer_params.low = 0.9;
    t.timer_params.high = 0.8;
    try {
        t.validate(2);
        ADD_FAILURE() << "no throw";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "--timer-high");
    }
    t.timer = false;  // not checked when the timer is off
    EXPECT_NO_THROW(t.validate(2));
    for (double bad : {0.0, -0.1, std::nan("")}) {
        DistributedOptions r;
        r.rebalance_tolerance = bad;
        EXPECT_THROW(r.validate(2), ConfigError) << bad;
    }
}

TEST(PlanRebalance, MovesTokensToTheFasterRanks) {
    const std::vector<std::uint64_t> even{100, 100};
    const std::vector<double> same{1.0, 1.0};
    EXPECT_TRUE(plan_rebalance(even, same, 0.15).empty());
    // Rank 1 at a fifth of rank 0's speed: it should hold 1/6 of the tokens.
    const std::vector<std::uint64_t> half{600, 600};
    const std::vector<double> fifth{1.0, 0.2};
    EXPECT_EQ(plan_rebalance(half, fifth, 0.15), (std::vector<DocTransfer>{{1, 0, 400}}));
    // Within the tolerance nothing moves; below it, the excess does.
    const std::vector<std::uint64_t> near{110, 90};
    EXPECT_TRUE(plan_rebalance(near, same, 0.15).empty());
    EXPECT_EQ(plan_rebalance(near, same, 0.05), (std::vector<DocTransfer>{{0, 1, 10}}));
    // A rank measured at (almost) no speed keeps a tenth of an even share.
    const std::vector<std::uint64_t> five{500, 500};
    const std::vector<double> stalled{1.0, 0.0};
    EXPECT_EQ(plan_rebalance(five, stalled, 0.15), (std::vector<DocTransfer>{{1, 0, 452}}));
    // The imbalance is the busiest rank's tokens over its target.
    EXPECT_DOUBLE_EQ(sched::rebalance_imbalance(half, fifth), 3.0);
    EXPECT_DOUBLE_EQ(sched::rebalance_imbalance(even, same), 1.0);
    EXPECT_NEAR(sched::rebalance_imbalance(near, same), 1.1, 1e-12);
    // One rank: nothing to balance.
    EXPECT_TRUE(
        plan_rebalance(std::vector<std::uint64_t>{7}, std::vector<double>{1.0}, 0.15).empty());
}

TEST(PlanRebalance, KeepsEveryRankUnderTheTokenLimit) {
    const std::vector<std::uint64_t> half{600, 600};
    const std::vector<double> fifth{1.0, 0.2};
    // Rank 0 would take 1000 tokens; at most 800 fit, so rank 1 keeps 400.
    EXPECT_EQ(plan_rebalance(half, fifth, 0.15, 0.1, 800), (std::vector<DocTransfer>{{1, 0, 200}}));
    EXPECT_DOUBLE_EQ(sched::rebalance_imbalance(half, fifth, 0.1, 800), 1.5);
    // A limit the ranks cannot meet together is ignored rather than losing tokens.
    EXPECT_EQ(plan_rebalance(half, fifth, 0.15, 0.1, 500), (std::vector<DocTransfer>{{1, 0, 400}}));
    // Three ranks: the capped rank's excess goes to the others by their shares.
    const std::vector<std::uint64_t> three{300, 300, 300};
    const std::vector<double> speeds{4.0, 1.0, 1.0};
    const auto plan = plan_rebalance(three, speeds, 0.15, 0.1, 450);
    std::vector<std::int64_t> after(three.begin(), three.end());
    for (const DocTransfer& t : plan) {
        after[t.from] -= static_cast<std::int64_t>(t.tokens);
        after[t.to] += static_cast<std::int64_t>(t.tokens);
    }
    EXPECT_EQ(after, (std::vector<std::int64_t>{450, 225, 225}));
}

TEST(Trainer, MemoryEstimateFollowsTokensAndRanks) {
    const auto corpus = small_corpus();
    TrainOptions o;
    o.params.num_topics = 64;
    const std::uint64_t n = corpus.num_tokens();
    const std::uint64_t at0 = Trainer::estimate_memory(corpus, o, 2, 1, 0);
    const std::uint64_t half = Trainer::estimate_memory(corpus, o, 2, 1, n / 2);
    const std::uint64_t all = Trainer::estimate_memory(corpus, o, 2, 1, n);
    EXPECT_LT(at0, half);
    EXPECT_LT(half, all);
    EXPECT_NEAR(static_cast<double>(half - at0), static_cast<double>(all - half),
                0.01 * static_cast<double>(all - half));  // linear in the rank's tokens
    // More ranks: a smaller share of the model per rank.
    EXPECT_GT(at0, Trainer::estimate_memory(corpus, o, 4, 1, 0));
    // At least the rank's share of the word-topic table it really holds.
    const auto freq = corpus.word_frequencies();
    const std::vector<std::uint64_t> f(freq.begin(), freq.end());
    EXPECT_GE(at0, WordTopicTable::bytes_for(64, f) / 2);
}

TEST(PlanRebalance, PairsSendersAndReceiversOnce) {
    const std::vector<std::uint64_t> tokens{300, 300, 300, 300};
    const std::vector<double> speeds{2.0, 1.0, 0.5, 2.5};
    const auto plan = plan_rebalance(tokens, speeds, 0.15);
    ASSERT_FALSE(plan.empty());
    EXPECT_LE(plan.size(), tokens.size() - 1);
    std::vector<std::int64_t> after(tokens.begin(), tokens.end());
    for (std::size_t i = 0; i < plan.size(); ++i) {
        EXPECT_NE(plan[i].from, plan[i].to);
        EXPECT_GT(plan[i].tokens, 0u);
        for (std::size_t j = 0; j < i; ++j)
            EXPECT_FALSE(plan[j].from == plan[i].from && plan[j].to == plan[i].to);
        after[plan[i].from] -= static_cast<std::int64_t>(plan[i].tokens);
        after[plan[i].to] += static_cast<std::int64_t>(plan[i].tokens);
    }
    // Each rank ends at its speed-proportional share, to rounding.
    for (std::size_t q = 0; q < tokens.size(); ++q)
        EXPECT_NEAR(static_cast<double>(after[q]), 1200.0 * speeds[q] / 6.0, 1.0) << q;
}

TEST(Trainer, RejectsDeterministicMode) {
    const auto corpus = small_corpus();
    EXPECT_THROW(comm::run_ranks(2,
                                 [&](comm::Communicator& c) {
                                     sched::Runtime rt(1, sched::PinMode::kNone);
                                     TrainOptions o = dist_train_options();
                                     o.deterministic = true;
                                     Trainer t(corpus, o, no_timer(), rt, c);
                                 }),
                 ConfigError);
}

}  // namespace
}  // namespace rotor::lda
