// main() of the MPI test executable: MPI first, then GoogleTest. Only rank 0 prints gtest's
// report; other ranks print only their failed assertions, prefixed by their rank. The exit code
// is non-zero on every rank if any rank had a failure.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "comm/mpi_communicator.h"
#include "core/base/error.h"
#include "tests/comm/mpi_test_env.h"

namespace rotor::comm::testing {
namespace {

const MpiSession* g_session = nullptr;

/// Prints failed assertions of a non-zero rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
  public:
    explicit RankFailurePrinter(int rank) : rank_(rank) {}
    void OnTestPartResult(const ::testing::TestPartResult& r) override {
        if (!r.failed()) return;
        std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                     r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
    }

  private:
    int rank_;
};

}  // namespace

const MpiSession& mpi_session() { return *g_session; }

}  // namespace rotor::comm::testing

int main(int argc, char** argv) {
    try {
        rotor::comm::MpiSession session(&argc, &argv);
        rotor::comm::testing::g_session = &session;
        ::testing::InitGoogleTest(&argc, argv);
        auto world = session.world();
        if (world->rank() != 0) {
            auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
            std::unique_ptr<::testing::TestEventListener> printer(
                listeners.Release(listeners.default_result_printer()));
            listeners.Append(
                std::make_unique<rotor::comm::testing::RankFailurePrinter>(world->rank())
                    .release());
        }
        const int rc = RUN_ALL_TESTS();
        const bool any_failed = world->any(rc != 0);
        return any_failed ? 1 : 0;
    } catch (const rotor::Error& e) {
        std::fprintf(stderr, "test_comm_mpi: error: %s\n", e.what());
        return 1;
    }
}
