// One rank's CCD++ iteration on its pinned workers (core/mf/ccd.h describes the algorithm; the
// trainer, apps/mf/ccd_trainer.cpp, owns the data and the checkpoints).
//
// Inside a rank the conflict-free units of CCD++ run in parallel on the runtime's workers:
//   - residual updates (add_rank_one, subtract_rank_one) and row updates (update_rows) split the
//     rank's rows into one contiguous range per worker, balanced by ratings;
//   - a column update's PUSH adds each worker's rows into that worker's ColumnSums; the PULL then
//     splits the columns into one range per worker, each adding every worker's sums of its
//     columns (exactly: core::ExactSum) and dividing. Across ranks, the combined sums travel as
//     core::ExactSum limbs in one allreduce_sum per pull.
// The iteration is a list of steps, each cut into one share per worker touching disjoint data
// (sched::Team: a share is taken by whichever worker runs). On one rank the steps run in one team
// call (run_steps); on several ranks each step is its own call (run) and the coordinator thread
// runs the allreduce between a combine and its pull (a worker never waits for another rank:
// in-process ranks share oneTBB's threads, and MPI may be initialised FUNNELED).
// Every coordinate is thus the same function of the same terms as in ccd_iteration over one part,
// and the model is bitwise the same for any ranks x threads.
//
// Why per-worker pushes rather than LIBPMF's column-parallel pass over a CSC copy of the
// residuals: the CSC copy would double the residual memory and the work of (a) and (d), which
// must then update both copies; the per-worker sums cost 48 bytes per column and worker and a
// combine that is column-parallel too (bench/mf/bench_ccd_scaling measures the speedup).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "core/mf/ccd.h"
#include "core/mf/factors.h"
#include "sched/runtime.h"
#include "sched/team.h"
#include "sched/worker_clock.h"

namespace rotor::mf {

/// A rank's CCD++ state: its rows' ratings (CSR, local rows 0..rows-1, global item ids), W rows,
/// b and residuals, and the replicated H, c and |Ω_j|. Owned by the trainer; biases are empty
/// without bias.
struct CcdRankState {
    SparseView ratings;
    Factors w;                              ///< rows x K
    std::vector<float> row_bias;            ///< b, rows
    std::vector<float> residuals;           ///< ratings.nnz(), in ratings' order
    Factors h;                              ///< M x K
    std::vector<float> col_bias;            ///< c, M
    std::vector<std::uint64_t> col_counts;  ///< |Ω_j| over every rank, M
};

/// First row of each of `parts` contiguous ranges of a CSR part's rows (parts + 1 entries, the
/// last = rows), cut where the running rating count passes k·nnz/parts: deterministic, about the
/// same number of ratings per range. Ranges may be empty.
std::vector<std::uint32_t> split_rows_by_ratings(std::span<const std::uint64_t> offsets, int parts);

/// Runs CCD++ iterations over a CcdRankState with the runtime's workers and the communicator's
/// ranks. Holds references to all three; the state's shapes must not change while it lives.
/// Collective: every rank calls iterate() at the same point. Not thread-safe.
class ParallelCcd {
  public:
    ParallelCcd(CcdRankState& state, const CcdParams& params, sched::Runtime& runtime,
                comm::Communicator& comm);
    ~ParallelCcd();
    ParallelCcd(const ParallelCcd&) = delete;
    ParallelCcd& operator=(const ParallelCcd&) = delete;

    /// One iteration: the bias step, then the rank-one updates of k = 0..K-1. Returns the
    /// shares' compute seconds and the workers' wait seconds (for a step to complete).
    sched::IterationTimes iterate();

  private:
    struct Worker;
    /// What a step does (run_step); one step's work touches nothing another worker touches in
    /// the same step.
    enum class StepKind : std::uint8_t { kBiasPush, kLoad, kAddPush, kCombine, kPull, kRows };
    /// One unit of the iteration that every worker runs on its share: kind, factor k (kBiasStep
    /// for the bias step) and, for kRows, whether it is the last inner sweep.
    struct Step {
        StepKind kind;
        std::uint32_t k;
        bool last;
    };
    static constexpr std::uint32_t kBiasStep = 0xFFFFFFFFu;
    static constexpr std::size_t kBiasBuffer = 1;
    static constexpr std::size_t kLimbsPerColumn = 2 * core::ExactSum::kLimbs;

    std::vector<Step> plan() const;
    Worker make_worker(int w);
    void run_step(Worker& me, const Step& step);
    void push(Worker& me, std::span<const float> u);
    void combine(Worker& me);
    void pull(Worker& me, double lambda, std::span<float> v);
    void load(Worker& me, std::uint32_t k);
    void finish_biases(Worker& me);
    void finish_rank_one(Worker& me, std::uint32_t k);

    CcdRankState& state_;
    CcdParams params_;
    comm::Communicator& comm_;
    int threads_;
    std::vector<std::uint32_t> row_begin_;             ///< threads + 1
    std::vector<std::uint32_t> col_begin_;             ///< threads + 1
    std::vector<std::vector<std::uint64_t>> offsets_;  ///< each worker's rows, rebased to 0
    std::vector<ColumnSums> pushed_;                   ///< each worker's push (M columns)
    std::vector<ColumnSums> totals_;                   ///< each worker's pulled columns, combined
    std::vector<std::int64_t> limbs_;  ///< ranks > 1: 2 * kLimbs per column, allreduced
    std::vector<float> u_;             ///< column k of W (or b's ones), rows
    /// Column k of H in v_[k % 2] (so that loading factor k + 1 need not wait for every worker
    /// to finish with factor k); c's pull in v_[kBiasBuffer]. M each.
    std::array<std::vector<float>, 2> v_;
    std::vector<float> ones_cols_;  ///< M ones: the column side of the b update
    sched::Team team_;
    sched::WorkerClocks clocks_;
};

}  // namespace rotor::mf
