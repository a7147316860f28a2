// The SGD trainer on MPI ranks: run by ctest under `mpiexec -n 2` (main() is
// tests/comm/mpi_test_main.cpp: MPI first, then GoogleTest; only rank 0 prints the report).
// Every test is collective: all ranks run the same tests in the same order.
#include <gtest/gtest.h>

#include <memory>

#include "apps/mf/trainer.h"
#include "comm/inprocess_communicator.h"
#include "comm/mpi_communicator.h"
#include "sched/runtime.h"
#include "tests/apps/mf/sgd_test_cases.h"
#include "tests/comm/mpi_test_env.h"

namespace rotor::mf {
namespace {

using namespace rotor::mf::testing;

std::unique_ptr<comm::MpiCommunicator> world() { return comm::testing::mpi_session().world(); }

TEST(SgdMpi, RingWithoutTimerProcessesEveryRatingAndConverges) {
    const Problem p = make_problem();
    const double one = one_rank_test_rmse(p, sgd_options(20), 20);
    case_ring_trains(*world(), false, one);
}

TEST(SgdMpi, RingWithTimerConverges) {
    const Problem p = make_problem();
    const double one = one_rank_test_rmse(p, sgd_options(20), 20);
    case_ring_trains(*world(), true, one);
}

TEST(SgdMpi, GatheredModelIsWhole) { case_gather_model(*world()); }

TEST(SgdMpi, StateOfOneRankRestoresOnEveryRank) {
    // Every process computes the same one-rank state (the training is a function of the seed).
    const Problem p = make_problem();
    TrainerState state;
    {
        comm::InProcessGroup group(1);
        sched::Runtime rt(1, sched::PinMode::kNone);
        auto t = make_trainer({p.train, &p.test, sgd_options(6), rt, group.at(0)});
        for (int e = 0; e < 6; ++e) t->iterate();
        state = t->gather_state();
    }
    case_restore_and_continue(*world(), state, p);
}

}  // namespace
}  // namespace rotor::mf
