// The key-value push/pull engine (comm/kv.h) on MPI ranks (mpiexec -n 1..4): the shared sum case
// on every layout and delay, the delay bound checked from the schedules of every rank (one
// host's steady clock), and a failing rank turned into the same AgreedError on every rank.
#include <gtest/gtest.h>

#include <string>

#include "comm/agreed.h"
#include "comm/kv.h"
#include "comm/mpi_communicator.h"
#include "core/base/error.h"
#include "tests/comm/kv_cases.h"
#include "tests/comm/mpi_test_env.h"

namespace rotor::comm {
namespace {

class KvMpi : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(KvMpi, PushAndPullSumsWithinTheDelayBound) {
    auto world = testing::mpi_session().world();
    for (const KvLayout& layout : testing::kv_layouts(world->size())) {
        auto comm = testing::mpi_session().world();  // a fresh communicator per run
        testing::case_kv_sum(*comm, layout, GetParam(), 12, 0);
    }
}

INSTANTIATE_TEST_SUITE_P(Delays, KvMpi,
                         ::testing::Values(std::int64_t{0}, std::int64_t{2}, kInfiniteDelay));

TEST(KvMpiFailure, AFailingRankEndsEveryRankWithTheSameAgreedError) {
    auto comm = testing::mpi_session().world();
    const int p = comm->size();
    if (p < 2) GTEST_SKIP() << "needs two ranks";
    KvServerHandler h{
        .on_push = [](std::uint64_t, int, std::span<const std::uint64_t>,
                      std::span<const double>) {},
        .on_complete = [](std::uint64_t) {},
        .on_pull = [](std::span<const std::uint64_t>, std::vector<double>&) {},
    };
    std::vector<int> workers;
    for (int r = 1; r < p; ++r) workers.push_back(r);
    KvNode node(*comm, KvLayout::even({0}, workers), KvOptions{}, std::move(h));
    int failed = -1;
    std::string what;
    try {
        if (comm->rank() == p - 1) {
            const InputError e("part.svm", 4, 1, "label \"2\" is not +1, -1 or 0");
            node.fail(e);
            throw AgreedError(e.exit_code(), comm->rank(), e.what());
        }
        if (node.is_worker()) {
            for (std::uint64_t t = 0; t < 4; ++t) {
                node.begin_iteration(t);
                node.push(t, {}, {});
                node.end_iteration(t);
            }
        }
        node.finish();
    } catch (const AgreedError& e) {
        failed = e.failed_rank();
        what = e.what();
    }
    EXPECT_EQ(failed, p - 1);
    EXPECT_NE(what.find("part.svm:4:1: label"), std::string::npos) << what;
}

}  // namespace
}  // namespace rotor::comm
