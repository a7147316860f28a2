// A small MPI program for the failure rules of the key-value engine (comm/kv.h), run by ctest
// under mpiexec -n 3 through run_and_check.cmake (rank 0 a server, ranks 1 and 2 workers):
//   kv_failure_probe ok    every rank runs 20 iterations: exit 0
//   kv_failure_probe fail  rank 2 fails at iteration 5 and tells the others: every rank throws
//                          the same AgreedError, rank 0 prints it once, all exit with its code
//   kv_failure_probe kill  rank 2 dies at iteration 5 without a word (_Exit): the job must end
//                          with a non-zero exit within seconds, not hang
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "comm/agreed.h"
#include "comm/kv.h"
#include "comm/mpi_communicator.h"
#include "core/base/error.h"

namespace {

using rotor::comm::KvNode;

int run(rotor::comm::Communicator& comm, const char* mode) {
    rotor::comm::KvServerHandler h{
        .on_push = [](std::uint64_t, int, std::span<const std::uint64_t>,
                      std::span<const double>) {},
        .on_complete = [](std::uint64_t) {},
        .on_pull = [](std::span<const std::uint64_t> keys,
                      std::vector<double>& out) { out.insert(out.end(), keys.size(), 1.0); },
    };
    rotor::comm::KvOptions options;
    options.timeout_s = 20;
    KvNode node(comm, rotor::comm::KvLayout::even({0}, {1, 2}), options, std::move(h));
    const bool victim = comm.rank() == comm.size() - 1;
    try {
        if (node.is_worker()) {
            const std::uint64_t keys[] = {3, 1ULL << 63};
            const double values[] = {1, 2};
            for (std::uint64_t t = 0; t < 20; ++t) {
                node.begin_iteration(t);
                if (victim && t == 5 && std::strcmp(mode, "kill") == 0) std::_Exit(9);
                if (victim && t == 5 && std::strcmp(mode, "fail") == 0) {
                    throw rotor::InputError("part-2.svm", 5, 1, "label \"7\" is not +1, -1 or 0");
                }
                node.push(t, keys, values);
                (void)node.wait_pull(node.pull(t, keys));
                node.end_iteration(t);
            }
        }
        node.finish();
    } catch (const rotor::comm::AgreedError& e) {
        if (comm.rank() == 0) std::fprintf(stderr, "rotor: error: %s\n", e.what());
        return static_cast<int>(e.exit_code());
    } catch (const rotor::Error& e) {
        node.fail(e);
        if (comm.rank() == 0) std::fprintf(stderr, "rotor: error: %s\n", e.what());
        return static_cast<int>(e.exit_code());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: kv_failure_probe ok|fail|kill\n");
        return 2;
    }
    rotor::comm::MpiSession session(&argc, &argv);
    auto comm = session.world();
    try {
        return run(*comm, argv[1]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rotor: error: rank %d: %s\n", comm->rank(), e.what());
        comm->abort(static_cast<int>(rotor::ExitCode::kInternal));
    }
}
