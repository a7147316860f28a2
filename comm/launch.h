// How a process learns whether it is one rank of an MPI job, and joins that job. Both work
// whether or not rotor is built with MPI (ROTOR_MPI): a build without it still recognises an
// mpiexec launch, and says it cannot join instead of running P copies of a one-process job.
#pragma once

#include <memory>

#include "comm/communicator.h"

namespace rotor::comm {

/// True when this process was started by mpiexec/mpirun/srun (Open MPI's, PMIx's or PMI's launch
/// variables are set), i.e. when MPI should be initialised. A plain run never touches MPI.
bool launched_by_mpi();

/// True when this build has the MPI communicator (comm/mpi_communicator.h).
bool built_with_mpi() noexcept;

/// The job a launched process joined: MPI initialised, and its world communicator. Destroying
/// it destroys the communicator, then finalises MPI. Not thread-safe; one per process.
class LaunchedWorld {
  public:
    virtual ~LaunchedWorld() = default;
    /// Every rank of the job (MPI_COMM_WORLD's duplicate).
    virtual Communicator& world() = 0;
};

/// Joins the MPI job this process was launched into, or returns null for a plain run
/// (!launched_by_mpi()). `argc`/`argv` go to MPI_Init_thread. Throws ConfigError when launched by
/// mpiexec but built without MPI, CommError when MPI fails to initialise.
std::unique_ptr<LaunchedWorld> join_launched_world(int* argc, char*** argv);

}  // namespace rotor::comm
