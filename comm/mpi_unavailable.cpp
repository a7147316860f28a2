// MpiSession in a build without MPI (cmake -DROTOR_MPI=OFF): the `rotor` executable still links,
// and a process started by mpiexec stops with a CommError that says why. No MpiCommunicator
// exists in such a build (ROTOR_HAVE_MPI is not defined).
#include "comm/mpi_communicator.h"
#include "core/base/error.h"

namespace rotor::comm {
namespace {

[[noreturn]] void unavailable() {
    throw CommError(0, "MPI: this rotor was built without MPI (cmake -DROTOR_MPI=OFF)");
}

}  // namespace

MpiSession::MpiSession(int*, char***, ThreadLevel) { unavailable(); }

MpiSession::~MpiSession() = default;

std::unique_ptr<MpiCommunicator> MpiSession::world(const MpiOptions&) const { unavailable(); }

}  // namespace rotor::comm
