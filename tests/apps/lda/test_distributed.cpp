// The distributed trainer on in-process ranks (threads of one process, comm::run_ranks), so that
// every path also runs under ThreadSanitizer. The same cases run under mpiexec in
// test_distributed_mpi.cpp.
#include "apps/lda/distributed_trainer.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "comm/inprocess_communicator.h"
#include "core/base/timer.h"
#include "tests/apps/lda/test_distributed_cases.h"
#include "tests/apps/lda/test_distributed_checkpoint_cases.h"
#include "tests/apps/lda/test_distributed_flags_cases.h"

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
            DistributedTrainer t(corpus, dist_train_options(), d, rt, c);
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
}

TEST(DistributedTrainer, RejectsDeterministicMode) {
    const auto corpus = small_corpus();
    EXPECT_THROW(comm::run_ranks(2,
                                 [&](comm::Communicator& c) {
                                     sched::Runtime rt(1, sched::PinMode::kNone);
                                     TrainOptions o = dist_train_options();
                                     o.deterministic = true;
                                     DistributedTrainer t(corpus, o, no_timer(), rt, c);
                                 }),
                 ConfigError);
}

}  // namespace
}  // namespace rotor::lda
