// One rank's CCD++ iteration on its pinned workers (core/mf/ccd.h describes the algorithm; the
// trainer, apps/mf/ccd_trainer.cpp, owns the data and the checkpoints).
//
// Inside a rank the conflict-free units of CCD++ run in parallel on the runtime's workers:
//   - residual updates (add_rank_one, subtract_rank_one) and row updates (update_rows) split the
//     rank's rows into one contiguous range per worker, balanced by ratings;
//   - a column update's PUSH adds each worker's rows into that worker's ColumnSums; the PULL then
//     splits the columns into one range per worker, each adding every worker's sums of its
//     columns (exactly: core::ExactSum) and dividing. Across ranks, each rank pulls only its
//     own share of the columns: the combined sums travel as core::ExactSum narrow limbs (32
//     bytes a column) in one reduce_scatter_sum, each rank pulls its columns, and the new
//     values (4 bytes a column) in one allgather_blocks. A sum too large for the narrow limbs
//     (or invalid) sends the pull once more with the wide limbs (64 bytes a column), so the
//     totals are exact whatever their size.
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
    /// Seconds the last iterate() spent in collectives (on the coordinator thread; 0 on one
    /// rank).
    double comm_seconds() const { return comm_s_; }
    /// Bytes of the largest message buffer a collective of iterate() passes (0 on one rank).
    std::size_t largest_message_bytes() const;

  private:
    struct Worker;
    /// What a step does (run_step); one step's work touches nothing another worker touches in
    /// the same step.
    /// kWideLimbs and kWidePull: the pull sent again with the wide limbs (ranks > 1, rare).
    enum class StepKind : std::uint8_t {
        kBiasPush,
        kLoad,
        kAddPush,
        kCombine,
        kPull,
        kRows,
        kWideLimbs,
        kWidePull
    };
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
    static constexpr std::size_t kNarrowPerColumn = 2 * core::ExactSum::kNarrowLimbs;

    std::vector<Step> plan() const;
    void plan_exchange();
    Worker make_worker(int w);
    void run_step(Worker& me, const Step& step);
    void push(Worker& me, std::span<const float> u);
    void combine(Worker& me);
    void pull(Worker& me, double lambda, std::span<float> v);
    void narrow_limbs(Worker& me);
    void wide_limbs(Worker& me);
    void pull_owned(Worker& me, double lambda, std::span<float> v, bool wide);
    double lambda_of(const Step& step) const;
    std::span<float> v_of(const Step& step);
    /// Coordinator, ranks > 1: the reduce-scatter after a combine (narrow, or wide).
    void reduce(bool wide);
    /// Coordinator, ranks > 1, after a pull: allgathers the ranks' pulled columns into v, and
    /// returns true; false (v unchanged) when some rank's narrow sums did not fit.
    bool gather(std::span<float> v, bool wide);
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
    // Ranks > 1. Rank q pulls columns own_begin_[q] .. own_begin_[q + 1] - 1 (even bounds, so
    // that two floats fill one int64 of gathered_), its workers own_split_ of them. The blocks
    // of narrow_ and gathered_ start with a slot: the count of failed narrow conversions of the
    // block's columns (summed over ranks), and whether the rank's pull must go wide.
    int rank_ = 0;
    std::vector<std::uint32_t> own_begin_;              ///< ranks + 1
    std::vector<std::uint32_t> own_split_;              ///< threads + 1 (global columns)
    std::vector<std::size_t> narrow_first_;             ///< ranks: block offsets in narrow_
    std::vector<std::size_t> narrow_counts_;            ///< ranks: 1 + kNarrowPerColumn a column
    std::vector<std::int64_t> narrow_;                  ///< every column's narrow limbs
    std::vector<std::int64_t> narrow_mine_;             ///< this rank's block, reduced
    std::vector<std::vector<std::uint64_t>> failures_;  ///< [worker][rank]: failed conversions
    std::vector<std::size_t> wide_counts_;              ///< ranks: kLimbsPerColumn a column
    std::vector<std::int64_t> limbs_;                   ///< wide limbs, M columns (on demand)
    std::vector<std::int64_t> wide_mine_;               ///< this rank's wide block, reduced
    std::vector<std::size_t> gathered_first_;           ///< ranks: block offsets in gathered_
    std::vector<std::size_t> gathered_counts_;          ///< ranks: 1 + ⌈columns / 2⌉
    std::vector<std::int64_t> gathered_;                ///< the pulled values, 2 a slot
    std::vector<ColumnSums> owned_totals_;              ///< each worker's pulled columns
    double comm_s_ = 0;
    std::vector<float> u_;  ///< column k of W (or b's ones), rows
    /// Column k of H in v_[k % 2] (so that loading factor k + 1 need not wait for every worker
    /// to finish with factor k); c's pull in v_[kBiasBuffer]. M each.
    std::array<std::vector<float>, 2> v_;
    std::vector<float> ones_cols_;  ///< M ones: the column side of the b update
    sched::Team team_;
    sched::WorkerClocks clocks_;
};

}  // namespace rotor::mf
