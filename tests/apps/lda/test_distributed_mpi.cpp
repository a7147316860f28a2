// lda::Trainer on MPI ranks: run by ctest under `mpiexec -n 2|3|4` (main() is
// tests/comm/mpi_test_main.cpp: MPI first, then GoogleTest; only rank 0 prints the report).
// Every test is collective: all ranks run the same tests in the same order.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "comm/mpi_communicator.h"
#include "tests/apps/lda/test_distributed_cases.h"
#include "tests/apps/lda/test_distributed_checkpoint_cases.h"
#include "tests/apps/lda/test_distributed_flags_cases.h"
#include "tests/apps/lda/test_distributed_rebalance_cases.h"
#include "tests/comm/mpi_test_env.h"

namespace rotor::lda {
namespace {

using namespace rotor::lda::testing;

std::unique_ptr<comm::MpiCommunicator> world() { return comm::testing::mpi_session().world(); }

TEST(DistributedMpi, CountsStayConsistentEveryIteration) { case_counts_consistent(*world()); }

TEST(DistributedMpi, TwoThreadsPerRankStayConsistent) { case_counts_consistent(*world(), 2); }

TEST(DistributedMpi, LoglikWithinHalfPercentOfSingleNode) {
    case_loglik_matches_single_node(*world());
}

TEST(DistributedMpi, GatheredModelIsWhole) { case_gather_model(*world()); }

TEST(DistributedMpi, SequentialInitDrawsEveryTokenUntimed) {
    case_sequential_init_with_timer(*world());
}

TEST(DistributedMpi, StragglerWithTimerReportsLowerRatio) {
    auto c = world();
    if (c->size() < 2) GTEST_SKIP() << "needs two ranks";
    case_straggler_with_timer(*c, true);
}

TEST(DistributedMpi, RebalancingMovesDocumentsOffAStraggler) {
    auto c = world();
    if (c->size() < 2) GTEST_SKIP() << "needs two ranks";
    case_rebalance_follows_straggler(*c);
}

TEST(DistributedMpi, TopWordsMatchGatheredModel) { case_top_words_match_gathered_model(*world()); }

TEST(DistributedMpi, RanksHoldOnlyTheirSlicesTables) { case_model_memory_per_slice(*world()); }

TEST(DistributedMpi, AgreedFailureReachesEveryRank) { case_agreed_failure(*world()); }

TEST(DistributedMpi, HeldoutMatchesGatheredModel) { case_heldout_matches_gathered_model(*world()); }

TEST(DistributedMpi, OptimizeAlphaIsSharedByEveryRank) { case_optimize_alpha(*world()); }

/// Collective: a path named after rank 0's pid, the same on every rank.
std::string shared_temp_path(comm::Communicator& c, const std::string& name) {
    std::vector<std::int64_t> pid{c.rank() == 0 ? static_cast<std::int64_t>(::getpid()) : 0};
    c.allreduce_sum(pid);
    return (std::filesystem::temp_directory_path() /
            ("rotor-dist-" + name + "-mpi-" + std::to_string(pid[0])))
        .string();
}

TEST(DistributedMpi, CheckpointRestoresExactState) {
    auto c = world();
    case_checkpoint_restores_exact_state(*c, shared_temp_path(*c, "ckpt-exact"));
}

TEST(DistributedMpi, CheckpointRestoresExactStateTwoThreads) {
    auto c = world();
    case_checkpoint_restores_exact_state(*c, shared_temp_path(*c, "ckpt-exact2"), 2);
}

TEST(DistributedMpi, MovingDocumentsKeepsTheState) {
    auto c = world();
    case_move_documents_keeps_state(*c, shared_temp_path(*c, "move"));
}

TEST(DistributedMpi, CheckpointKeepsTimerBudget) {
    auto c = world();
    case_checkpoint_keeps_timer_budget(*c, shared_temp_path(*c, "ckpt-timer"));
}

TEST(DistributedMpi, CheckpointDetectsBadParts) {
    auto c = world();
    case_checkpoint_detects_bad_parts(*c, shared_temp_path(*c, "ckpt-bad"));
}

TEST(DistributedMpi, ScheduleGathersOneProcessPerRank) {
    auto c = world();
    // Rank 0 alone writes the file: its pid names it.
    std::vector<std::int64_t> pid{c->rank() == 0 ? static_cast<std::int64_t>(::getpid()) : 0};
    c->allreduce_sum(pid);
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("rotor-dist-trace-mpi-" + std::to_string(pid[0]) + ".json"))
                                 .string();
    case_schedule(*c, path);
}

}  // namespace
}  // namespace rotor::lda
