// Agreed failure (comm/agreed.h) on 1..4 in-process ranks; the shared case runs under mpiexec in
// test_mpi_communicator.cpp, and the failure probe shows a whole job agreeing.
#include "comm/agreed.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "tests/comm/engine_cases.h"

namespace rotor::comm {
namespace {

class AgreedRanks : public ::testing::TestWithParam<int> {};

TEST_P(AgreedRanks, LowestFailingRankWinsOnEveryRank) {
    run_ranks(GetParam(), [](Communicator& c) { testing::case_run_agreed(c); });
}

INSTANTIATE_TEST_SUITE_P(Ranks, AgreedRanks, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                             return "P" + std::to_string(param_info.param);
                         });

TEST(AgreedError, KeepsCodeRankAndMessage) {
    const AgreedError e(ExitCode::kSystem, 3, "disk full");
    EXPECT_EQ(e.exit_code(), ExitCode::kSystem);
    EXPECT_EQ(e.failed_rank(), 3);
    EXPECT_STREQ(e.what(), "disk full");
}

TEST(RunAgreed, OtherExceptionsAreNotAgreed) {
    // Not a rotor::Error: it propagates as it is on its rank (the caller aborts the job).
    run_ranks(1, [](Communicator& c) {
        EXPECT_THROW(run_agreed(c, [] { throw std::logic_error("bug"); }), std::logic_error);
    });
}

}  // namespace
}  // namespace rotor::comm
