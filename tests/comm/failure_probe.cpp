// A small MPI program that fails on purpose, run by ctest under mpiexec through
// run_and_check.cmake, to show how a failing rank ends the whole job:
//   failure_probe ok     every rank succeeds: exit 0
//   failure_probe agree  the last rank fails at a point where every rank can agree: all ranks
//                        learn rank P-1's message via agree_on_failure, rank 0 prints it, and
//                        every rank exits with ExitCode::kInput after MPI_Finalize
//   failure_probe throw  the last rank throws while the others wait in a barrier that it never
//                        enters; main() catches and calls abort(): the job must end at once
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "comm/mpi_communicator.h"
#include "core/base/error.h"

namespace {

int run(rotor::comm::MpiCommunicator& comm, const char* mode) {
    const bool last = comm.rank() == comm.size() - 1;
    if (std::strcmp(mode, "ok") == 0) {
        comm.barrier();
        return 0;
    }
    if (std::strcmp(mode, "agree") == 0) {
        bool failed = false;
        std::string why;
        try {
            if (last) throw rotor::InputError("docword.txt", 7, 2, "count is not a number");
        } catch (const rotor::Error& e) {
            failed = true;
            why = e.what();
        }
        if (auto err = comm.agree_on_failure(failed, why)) {
            if (comm.rank() == 0) std::fprintf(stderr, "rotor: error: %s\n", err->c_str());
            return static_cast<int>(rotor::ExitCode::kInput);
        }
        return 0;
    }
    if (std::strcmp(mode, "throw") == 0) {
        if (last)
            throw std::runtime_error("unexpected failure inside rank " +
                                     std::to_string(comm.rank()));
        comm.barrier();  // never completes: the last rank does not come
        return 0;
    }
    throw rotor::ConfigError("mode", std::string("unknown mode '") + mode + "'");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: failure_probe ok|agree|throw\n");
        return 2;
    }
    rotor::comm::MpiSession session(&argc, &argv);
    auto comm = session.world();
    try {
        return run(*comm, argv[1]);
    } catch (const std::exception& e) {
        // The other ranks cannot agree (they are blocked): end the job.
        std::fprintf(stderr, "rotor: error: rank %d: %s\n", comm->rank(), e.what());
        comm->abort(static_cast<int>(rotor::ExitCode::kInternal));
    }
}
