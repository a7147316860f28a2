// The shared communicator cases over MPI. Run under `mpiexec -n 2|3|4` by ctest, and alone as a
// singleton. Each test makes its own communicator (a duplicate of MPI_COMM_WORLD), once with the
// default chunk size and once with a chunk size of a few bytes, so every payload, broadcast and
// reduction goes through the chunking path that > 2 GiB messages take.
#include "comm/mpi_communicator.h"

#include <gtest/gtest.h>

#include "comm/launch.h"
#include "core/base/error.h"
#include "tests/comm/comm_cases.h"
#include "tests/comm/engine_cases.h"
#include "tests/comm/mpi_test_env.h"

namespace rotor::comm {
namespace {

struct ChunkParam {
    const char* name;
    std::size_t chunk_bytes;
};

class MpiRanks : public ::testing::TestWithParam<ChunkParam> {
  protected:
    std::unique_ptr<MpiCommunicator> make() {
        MpiOptions options;
        options.max_chunk_bytes = GetParam().chunk_bytes;
        return testing::mpi_session().world(options);
    }
};

#define ROTOR_MPI_CASE(name) \
    TEST_P(MpiRanks, name) { testing::case_##name(*make()); }

ROTOR_MPI_CASE(rank_and_size)
ROTOR_MPI_CASE(allreduce)
ROTOR_MPI_CASE(reduce_scatter)
ROTOR_MPI_CASE(allgather_blocks)
ROTOR_MPI_CASE(any)
ROTOR_MPI_CASE(broadcast_uneven)
ROTOR_MPI_CASE(gather_uneven)
ROTOR_MPI_CASE(allgather_uneven)
ROTOR_MPI_CASE(point_to_point_unknown_sizes)
ROTOR_MPI_CASE(ring_returns_home)
ROTOR_MPI_CASE(ring_two_slices_pipelined)
ROTOR_MPI_CASE(agree_on_failure)
ROTOR_MPI_CASE(typed_collectives)
ROTOR_MPI_CASE(message_collectives)
ROTOR_MPI_CASE(ring_pipeline)
ROTOR_MPI_CASE(run_agreed)

INSTANTIATE_TEST_SUITE_P(Chunks, MpiRanks,
                         ::testing::Values(ChunkParam{"Default", std::size_t{1} << 30},
                                           ChunkParam{"SevenBytes", 7}),
                         [](const ::testing::TestParamInfo<ChunkParam>& param_info) {
                             return std::string(param_info.param.name);
                         });

TEST(MpiSession, ReportsWorldAndAcceptsAnInitialisedMpi) {
    const MpiSession& s = testing::mpi_session();
    EXPECT_GE(s.world_size(), 1);
    EXPECT_EQ(s.singleton(), s.world_size() == 1);
    EXPECT_GE(static_cast<int>(s.provided()), static_cast<int>(ThreadLevel::kFunneled));
    // A second session while MPI is up must neither initialise nor finalise it.
    MpiSession nested;
    EXPECT_FALSE(nested.owns_init());
    EXPECT_EQ(nested.world_size(), s.world_size());
    EXPECT_EQ(nested.world_rank(), s.world_rank());
}

TEST(MpiSession, RejectsBadChunkSize) {
    MpiOptions options;
    options.max_chunk_bytes = 0;
    try {
        (void)testing::mpi_session().world(options);
        ADD_FAILURE() << "no ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "max_chunk_bytes");
    }
}

TEST(MpiLaunch, MpiexecIsDetected) {
    EXPECT_TRUE(built_with_mpi());
    // A singleton run (no mpiexec) has no launch variables; under mpiexec they are set.
    if (testing::mpi_session().world_size() > 1) {
        EXPECT_TRUE(launched_by_mpi());
    }
}

TEST(MpiCommunicator, WorldMatchesSession) {
    auto comm = testing::mpi_session().world();
    EXPECT_EQ(comm->size(), testing::mpi_session().world_size());
    EXPECT_EQ(comm->rank(), testing::mpi_session().world_rank());
}

}  // namespace
}  // namespace rotor::comm
