// Test helpers for apps/lasso: run the trainer on `ranks` (in-process or MPI) x threads over a
// RawData split as the CLI splits it, and compare coefficients bit for bit.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "apps/lasso/trainer.h"
#include "comm/communicator.h"
#include "sched/runtime.h"

namespace rotor::lasso::testing {

/// What one rank's run ends with.
struct LassoRun {
    std::vector<double> b;
    double offset = 0;
    Evaluation last;
    std::vector<double> objectives;  ///< one per iteration
    std::uint32_t iterations = 0;
    std::uint64_t updates = 0;  ///< coordinate updates
    bool converged = false;
    double lambda_max = 0;
    Standardization standardization;
    std::uint32_t rollbacks = 0;  ///< shotgun, strads: diverged evaluations undone
    std::uint32_t parallel = 0;   ///< the L in use at the end
};

/// Trains on this rank's slice of `all` (split_by_entries over comm's ranks) with `threads`
/// workers for up to `iterations` iterations, stopping early when converged.
inline LassoRun run_lasso(comm::Communicator& comm, const RawData& all, const TrainOptions& o,
                          int threads, std::uint32_t iterations) {
    const std::vector<std::uint32_t> begin = split_by_entries(all.row_offsets, comm.size());
    const RawData slice = slice_rows(all, begin[comm.rank()], begin[comm.rank() + 1]);
    sched::Runtime runtime(threads, sched::PinMode::kNone);
    Trainer t(slice, o, runtime, comm);
    LassoRun run;
    run.lambda_max = t.lambda_max();
    for (std::uint32_t i = 0; i < iterations; ++i) {
        train::Record r = t.iterate();
        t.evaluate_record(r);
        run.objectives.push_back(t.last_evaluation().objective);
        if (t.converged()) break;
    }
    run.b.assign(t.coefficients().b.begin(), t.coefficients().b.end());
    run.offset = t.coefficients().offset;
    run.last = t.last_evaluation();
    run.iterations = t.iterations_done();
    run.updates = t.total_updates();
    run.converged = t.converged();
    run.standardization = t.standardization();
    run.rollbacks = t.rollbacks();
    run.parallel = t.parallel();
    return run;
}

/// Whether two vectors of doubles hold the same bits.
inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i])) return false;
    }
    return true;
}

}  // namespace rotor::lasso::testing
