// comm's typed collectives (comm/collectives.h) on 1..4 in-process ranks; the same cases run
// under mpiexec in test_mpi_communicator.cpp.
#include "comm/collectives.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "tests/comm/engine_cases.h"

namespace rotor::comm {
namespace {

class CollectivesRanks : public ::testing::TestWithParam<int> {};

TEST_P(CollectivesRanks, TypedValuesArriveAsSent) {
    run_ranks(GetParam(), [](Communicator& c) { testing::case_typed_collectives(c); });
}

TEST_P(CollectivesRanks, MessagesAreReadInRankOrderAndWhole) {
    run_ranks(GetParam(), [](Communicator& c) { testing::case_message_collectives(c); });
}

TEST_P(CollectivesRanks, MalformedMessageNamesItsSenderOnEveryReader) {
    // Rank 1 (or 0 alone) sends a u32 where every rank reads a u64.
    const int p = GetParam();
    const int odd = p > 1 ? 1 : 0;
    run_ranks(p, [&](Communicator& c) {
        const std::vector<std::byte> mine =
            c.rank() == odd ? encode_message(std::uint32_t{1}) : encode_message(std::uint64_t{2});
        try {
            allgather_messages(c, mine, "counts",
                               [](int, WireReader& r) { (void)r.get<std::uint64_t>(); });
            ADD_FAILURE() << "no CommError";
        } catch (const CommError& e) {
            EXPECT_EQ(e.rank(), c.rank());
            EXPECT_NE(std::string(e.what()).find("counts of rank " + std::to_string(odd) +
                                                 ": truncated: needs 8 bytes at offset 0 of 4"),
                      std::string::npos)
                << e.what();
        }
    });
}

INSTANTIATE_TEST_SUITE_P(Ranks, CollectivesRanks, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                             return "P" + std::to_string(param_info.param);
                         });

}  // namespace
}  // namespace rotor::comm
