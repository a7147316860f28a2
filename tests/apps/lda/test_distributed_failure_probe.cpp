// An MPI program in which one rank of an lda::Trainer fails on purpose, run by ctest
// under mpiexec through tests/comm/run_and_check.cmake. Its main() handles errors as
// apps/rotor/main.cpp does:
//   probe load   the last rank cannot read its corpus: every rank agrees (comm::run_agreed), rank 0
//                prints the error once, every rank exits with ExitCode::kInput
//   probe throw  rank 1 throws at the start of iteration 2 while the others wait for its slice:
//                it cannot be agreed, so main() aborts the job (MPI_Abort), which must end fast
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "apps/lda/trainer.h"
#include "apps/lda/trainer_test_util.h"
#include "comm/agreed.h"
#include "comm/mpi_communicator.h"
#include "core/base/error.h"
#include "sched/runtime.h"

namespace {

using namespace rotor;

int run(comm::Communicator& comm, const char* mode) {
    const auto corpus = lda::testing::small_corpus();
    lda::TrainOptions o;
    o.params.num_topics = 8;
    lda::DistributedOptions d;
    d.timer = false;
    if (std::strcmp(mode, "load") == 0) {
        comm::run_agreed(comm, [&] {
            if (comm.rank() == comm.size() - 1) core::load_corpus("/nonexistent/corpus.bin", "");
        });
    } else if (std::strcmp(mode, "throw") == 0) {
        d.on_iteration_start = [](int rank, std::uint32_t iter) {
            if (rank == 1 && iter == 2) throw std::runtime_error("injected failure on rank 1");
        };
    } else {
        throw ConfigError("mode", std::string("unknown mode '") + mode + "'");
    }
    sched::Runtime rt(1, sched::PinMode::kNone);
    lda::Trainer t(corpus, o, d, rt, comm);
    for (int i = 0; i < 5; ++i) t.iterate();
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: test_distributed_failure_probe load|throw\n");
        return 2;
    }
    comm::MpiSession session(&argc, &argv);
    auto comm = session.world();
    try {
        return run(*comm, argv[1]);
    } catch (const comm::AgreedError& e) {
        if (comm->rank() == 0) std::fprintf(stderr, "rotor: error: %s\n", e.what());
        return static_cast<int>(e.exit_code());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rotor: error: rank %d: %s\n", comm->rank(), e.what());
        std::fflush(stderr);
        comm->abort(static_cast<int>(ExitCode::kInternal));
    }
}
