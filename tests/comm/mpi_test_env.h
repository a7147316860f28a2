// The MPI session of the MPI test executable, created by its main() (mpi_test_main.cpp).
#pragma once

#include "comm/mpi_communicator.h"

namespace rotor::comm::testing {

/// The process's session; valid while the tests run.
const MpiSession& mpi_session();

}  // namespace rotor::comm::testing
