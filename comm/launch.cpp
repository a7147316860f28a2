#include "comm/launch.h"

#include <cstdlib>

#include "core/base/error.h"

#if defined(ROTOR_HAVE_MPI)
#include "comm/mpi_communicator.h"
#endif

namespace rotor::comm {

bool launched_by_mpi() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
        if (std::getenv(name) != nullptr) return true;
    return false;
}

#if defined(ROTOR_HAVE_MPI)

bool built_with_mpi() noexcept { return true; }

namespace {

class MpiWorld final : public LaunchedWorld {
  public:
    MpiWorld(int* argc, char*** argv) : session_(argc, argv), world_(session_.world()) {}
    Communicator& world() override { return *world_; }

  private:
    // Declared in this order so that the communicator is destroyed before MPI is finalised.
    MpiSession session_;
    std::unique_ptr<MpiCommunicator> world_;
};

}  // namespace

std::unique_ptr<LaunchedWorld> join_launched_world(int* argc, char*** argv) {
    if (!launched_by_mpi()) return nullptr;
    return std::make_unique<MpiWorld>(argc, argv);
}

#else

bool built_with_mpi() noexcept { return false; }

std::unique_ptr<LaunchedWorld> join_launched_world(int*, char***) {
    if (!launched_by_mpi()) return nullptr;
    throw ConfigError("mpiexec", "this rotor was built without MPI (ROTOR_MPI=OFF)");
}

#endif

}  // namespace rotor::comm
