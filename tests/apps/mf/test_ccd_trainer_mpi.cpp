// make_ccd_trainer on MPI ranks: run by ctest under `mpiexec -n 2|3` (main() is
// tests/comm/mpi_test_main.cpp). Every test is collective: all ranks run the same tests in the
// same order. The model trained over MPI must equal, bit for bit, the one a single process
// trains (an in-process world of one rank, run on rank 0).
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "comm/collectives.h"
#include "comm/inprocess_communicator.h"
#include "comm/mpi_communicator.h"
#include "tests/apps/mf/ccd_test_util.h"
#include "tests/comm/mpi_test_env.h"

namespace rotor::mf {
namespace {

std::unique_ptr<comm::MpiCommunicator> world() { return comm::testing::mpi_session().world(); }

/// The model of one process with one thread.
testing::CcdRun single_process(const Ratings& r, const TrainOptions& o, int iterations,
                               const TrainerState* from = nullptr) {
    testing::CcdRun out;
    comm::run_ranks(
        1, [&](comm::Communicator& c) { out = testing::run_ccd(c, r, o, 1, iterations, from); });
    return out;
}

TEST(CcdTrainerMpi, ModelEqualsTheSingleProcessModelBitwise) {
    auto c = world();
    const Ratings r = testing::small_ratings(12);
    for (const int threads : {1, 2}) {
        const TrainOptions o = testing::ccd_options(4);
        const testing::CcdRun run = testing::run_ccd(*c, r, o, threads, 3);
        if (c->rank() != 0) continue;
        const testing::CcdRun one = single_process(r, o, 3);
        testing::expect_bitwise_equal(run.model, one.model,
                                      fmt::format("{} ranks x {} threads", c->size(), threads));
        EXPECT_EQ(run.state.residuals, one.state.residuals);
        EXPECT_NEAR(run.objectives.back(), one.objectives.back(), 1e-9 * one.objectives.back());
    }
}

TEST(CcdTrainerMpi, RestoredStateContinuesBitwise) {
    auto c = world();
    const Ratings r = testing::small_ratings(13);
    const TrainOptions o = testing::ccd_options(3);
    // The first two iterations in one process, the rest on every MPI rank from that state.
    TrainerState state;
    if (c->rank() == 0) state = single_process(r, o, 2).state;
    comm::broadcast(*c, state.residuals, 0, "residuals");
    comm::broadcast(*c, state.iterations_done, 0, "iterations");
    std::vector<float> w(state.model.w.values().begin(), state.model.w.values().end());
    std::vector<float> h(state.model.h.values().begin(), state.model.h.values().end());
    comm::broadcast(*c, w, 0, "W");
    comm::broadcast(*c, h, 0, "H");
    comm::broadcast(*c, state.model.row_bias, 0, "b");
    comm::broadcast(*c, state.model.col_bias, 0, "c");
    comm::broadcast(*c, state.model.mu, 0, "mu");
    state.model.params = o.objective;
    state.model.w = Factors(r.num_users(), o.rank);
    state.model.h = Factors(r.num_items(), o.rank);
    std::copy(w.begin(), w.end(), state.model.w.values().begin());
    std::copy(h.begin(), h.end(), state.model.h.values().begin());
    const testing::CcdRun rest = testing::run_ccd(*c, r, o, 1, 2, &state);
    if (c->rank() != 0) return;
    testing::expect_bitwise_equal(rest.model, single_process(r, o, 4).model, "restored");
}

}  // namespace
}  // namespace rotor::mf
