// Test bodies of what comm offers every model (typed collectives, the ring pipeline, agreed
// failure), shared by the in-process tests (P = 1..4 threads: test_collectives.cpp,
// test_ring_pipeline.cpp, test_agreed.cpp) and the MPI tests (mpiexec -n 2|3|4). Same rules as
// comm_cases.h: every rank runs the same case at the same time, and a fatal ASSERT appears only
// where no collective call follows.
#pragma once

#include "comm/communicator.h"

namespace rotor::comm::testing {

/// gather / allgather / broadcast of scalars, strings, vectors and a user struct, from every
/// root; values and bit patterns arrive as sent.
void case_typed_collectives(Communicator& comm);
/// gather_messages / allgather_messages call the reader in rank order with messages named
/// "<what> of rank q", and refuse a message read only in part (trailing bytes) on the reader.
void case_message_collectives(Communicator& comm);
/// One RingPipeline iteration (run twice): every slice visits every rank once in the documented
/// order, compute sees the slice it expects with progress active exactly when a transfer is in
/// flight, the home slices come back, and the stats add up.
void case_ring_pipeline(Communicator& comm);
/// run_agreed: nothing thrown when no rank fails; the lowest failing rank's message, rank and
/// exit code on every rank otherwise.
void case_run_agreed(Communicator& comm);

}  // namespace rotor::comm::testing
