// The two-slot ring pipeline (comm/ring_pipeline.h) on 1..4 in-process ranks; the shared case
// runs under mpiexec in test_mpi_communicator.cpp.
#include "comm/ring_pipeline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/inprocess_communicator.h"
#include "comm/wire.h"
#include "core/base/error.h"
#include "tests/comm/engine_cases.h"

namespace rotor::comm {
namespace {

class RingPipelineRanks : public ::testing::TestWithParam<int> {};

TEST_P(RingPipelineRanks, EverySliceVisitsEveryRankInOrder) {
    run_ranks(GetParam(), [](Communicator& c) { testing::case_ring_pipeline(c); });
}

TEST_P(RingPipelineRanks, MalformedSliceFailsNamingTheMessage) {
    // Rank 0 packs a message one byte short; its next rank's unpack must refuse it.
    const int p = GetParam();
    const int victim = 1 % p;
    std::atomic<int> named{0};
    EXPECT_THROW(
        run_ranks(p,
                  [&](Communicator& c) {
                      RingPipeline ring(c);
                      const RingCallbacks callbacks{
                          .compute = [](int, RingProgress&) {},
                          .pack =
                              [&](int slice) {
                                  std::vector<std::byte> bytes =
                                      encode_message(static_cast<std::uint64_t>(slice));
                                  if (c.rank() == 0) bytes.pop_back();
                                  return bytes;
                              },
                          .unpack =
                              [&](int slice, std::span<const std::byte> bytes) {
                                  try {
                                      const auto got = decode_message<std::uint64_t>(
                                          bytes, "slice message", c.rank());
                                      EXPECT_EQ(got, static_cast<std::uint64_t>(slice));
                                  } catch (const CommError& e) {
                                      EXPECT_EQ(c.rank(), victim);
                                      if (std::string(e.what()).find(
                                              "slice message: truncated: needs 8 bytes at offset "
                                              "0 of 7") != std::string::npos)
                                          named.fetch_add(1);
                                      throw;
                                  }
                              },
                      };
                      (void)ring.run(callbacks);
                  }),
        CommError);
    EXPECT_EQ(named.load(), 1);
}

TEST_P(RingPipelineRanks, ComputeFailurePropagates) {
    const int p = GetParam();
    EXPECT_THROW(run_ranks(p,
                           [&](Communicator& c) {
                               RingPipeline ring(c);
                               int computes = 0;
                               (void)ring.run({
                                   .compute =
                                       [&](int, RingProgress&) {
                                           if (c.rank() == p - 1 && ++computes == 2)
                                               throw std::runtime_error("sampler failed");
                                       },
                                   .pack = [](int) { return std::vector<std::byte>(3); },
                                   .unpack = [](int, std::span<const std::byte>) {},
                               });
                           }),
                 std::runtime_error);
}

TEST(RingProgress, IdleProgressIsANoOp) {
    RingProgress idle;
    EXPECT_FALSE(idle.active());
    EXPECT_TRUE(idle());
}

INSTANTIATE_TEST_SUITE_P(Ranks, RingPipelineRanks, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                             return "P" + std::to_string(param_info.param);
                         });

}  // namespace
}  // namespace rotor::comm
