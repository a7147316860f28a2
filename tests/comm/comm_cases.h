// Test bodies shared by the in-process tests (P = 1..4 threads) and the MPI tests (mpiexec -n
// 2|3|4): each takes one rank's Communicator and checks, with gtest EXPECTs, what that rank
// sees. Every rank must run the same case at the same time. A fatal ASSERT appears only where no
// collective call follows in the case, so a failure on one rank cannot leave the others blocked.
#pragma once

#include "comm/communicator.h"

namespace rotor::comm::testing {

void case_rank_and_size(Communicator& comm);
void case_allreduce(Communicator& comm);
/// reduce_scatter_sum with uneven blocks (one empty) and an empty reduction.
void case_reduce_scatter(Communicator& comm);
/// allgather_blocks with uneven blocks (one empty) and an empty exchange.
void case_allgather_blocks(Communicator& comm);
void case_any(Communicator& comm);
void case_broadcast_uneven(Communicator& comm);
void case_gather_uneven(Communicator& comm);
void case_allgather_uneven(Communicator& comm);
void case_point_to_point_unknown_sizes(Communicator& comm);
void case_ring_returns_home(Communicator& comm);
void case_ring_two_slices_pipelined(Communicator& comm);
void case_agree_on_failure(Communicator& comm);

/// Every case above, in order.
void run_all_cases(Communicator& comm);

}  // namespace rotor::comm::testing
