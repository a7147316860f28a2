// Reconstruction ICA on servers and workers (Li et al., NIPS 2014, Appendix C; docs/rica.md,
// "Partitioning"), over the key-value engine of comm/kv.h. The model is partitioned by
// PARAMETERS, not by data: every worker holds all of X (and C = XᵀX, its spectrum) and a
// contiguous range of row blocks of W; the servers hold S = WᵀW.
//
//   keys: the p(p+1)/2 entries S_kl (k ≤ l) and one more, Σ_j ‖X w_j‖₁, spread evenly over the
//     64-bit key space (so that several servers share them);
//   worker, kv iteration t: begin_iteration(t); for t ≥ 1, one proximal gradient step of each of
//     its row blocks (core/rica/prox.h) from the latest S it pulled; push its rows' contribution
//     Σ_b W_bᵀW_b and Σ_b ‖X W_bᵀ‖₁ (core::ExactSum limbs: the servers' totals are exact, so they
//     do not depend on how the rows are split); pull every key after iteration t; take the pull
//     of t − τ before ending t (τ = --delay; the pull of iteration 0 is always waited for);
//   server: sums the pushes of t exactly; once every worker's is in, S and the L1 total of
//     iteration t replace the last ones and answer the pulls.
// With one worker holding every row, Solver::kAdmm replaces the per-block proximal step by a step
// of ADMM on all of W (core/rica/augmented.h; the same pushes and pulls, so the objective is
// still the servers' exact S and L1 total).
// Each worker's blocks are shared by its threads (sched::Team; a block's step is one thread's
// gemms of shapes that depend on the block only, core/base/blas.h "Determinism"). So with τ = 0
// the model is the same bit for bit for any number of threads, workers and servers.
//
// A run is cut into segments (between evaluations and checkpoints): each is one KvNode whose
// iteration 0 pushes the rows as they are (no step) and whose iterations 1..k are steps; every
// pull is applied before a segment ends, so at τ = 0 segments change nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/kv.h"
#include "core/base/range_loop.h"
#include "core/rica/augmented.h"
#include "core/rica/prox.h"
#include "sched/team.h"
#include "train/record.h"

namespace rotor::rica {

/// How a worker steps its rows (docs/rica.md, "Algorithm" and "One worker: ADMM on all of W").
enum class Solver {
    kProx,  ///< the paper's: a proximal gradient step per row block, its prox by ADMM (any workers)
    kAdmm,  ///< ADMM on all of W, its W step on the true f (one worker holding every row)
};

/// Options of the trainer. A plain struct.
struct TrainerOptions {
    Solver solver = Solver::kProx;
    std::size_t components = 0;   ///< ℓ, rows of W
    double lambda = 0;            ///< λ > 0
    double eta = 8;               ///< step scale η > 0 (1: the safe step 1/L of an exact prox)
    int admm_iterations = 1;      ///< ADMM iterations per step (warm-started)
    double rho = 0.2;             ///< kAdmm: the initial penalty ρ (doubled when F rises)
    int inner_iterations = 20;    ///< kAdmm: L-BFGS iterations of each W step
    std::size_t block_rows = 16;  ///< rows per block (the unit of work of a thread)
    std::uint64_t seed = 1;       ///< of the initial W
    std::int64_t delay = 0;       ///< τ, or comm::kInfiniteDelay
    int threads = 1;              ///< threads per worker
    double timeout_s = 60;        ///< of the kv engine
    int straggler_rank = -1;      ///< --simulate-straggler: this rank's worker is slowed
    double straggler_factor = 1;  ///< to 1/factor of its speed (sleeps (factor-1)× its compute)
    bool rebalance = true;        ///< kProx, several workers: move row blocks to follow speeds
};

/// A row block as it moves between workers at a segment boundary (kProx): its rows of W, their
/// ADMM state and Σ_j ‖X w_j‖₁ of its rows, exactly as the worker held them.
struct RowBlock {
    std::vector<double> w;
    BlockState state;
    double l1 = 0;
};

/// New block boundaries of the workers (workers + 1 of them, from 0 to the block count, each
/// worker at least one block): the rows shared by the workers' measured `speeds` (rows stepped
/// per second) through sched::rebalance_targets, no worker over `max_rows` (0: no limit), the
/// blocks staying contiguous and in worker order. `bounds` unchanged when the predicted
/// imbalance (sched::rebalance_imbalance) is at most 1 + `tolerance`, or when a speed is unknown.
std::vector<std::size_t> plan_blocks(std::span<const std::size_t> bounds,
                                     std::span<const double> speeds, std::size_t components,
                                     std::size_t block_rows, double tolerance,
                                     std::uint64_t max_rows = 0);

/// The row blocks of worker `worker` of `workers`: [first, last) block indices (blocks of
/// block_rows rows, the last one shorter), contiguous and balanced.
std::pair<std::size_t, std::size_t> worker_blocks(std::size_t components, std::size_t block_rows,
                                                  std::size_t worker, std::size_t workers);

/// The memory plan of a worker holding `rows` rows of W, on n observations of dimension p: the
/// bytes at its peak (X, C and its eigenvectors; kProx: z, u of the rows and the threads'
/// scratch; kAdmm: its split, U, the chunks' partial Rs, a tile per thread). `rotor rica train`
/// and the Python package check it against --max-memory before training.
std::uint64_t estimate_memory(std::size_t n, std::size_t p, std::size_t rows,
                              const TrainerOptions& options);

/// The keys of `rotor rica train`'s records (its --metrics file, the Python package's metrics_).
train::RecordSchema record_schema();

/// The record of an evaluation after `done` steps in all, the last `steps` of which took
/// `seconds` (`time_s` training seconds so far), on n observations: objective, reconstruction,
/// l1 and the relative change from the previous evaluation's objective (NaN at the first).
train::Record evaluation_record(std::uint64_t done, std::uint64_t steps, double seconds,
                                double time_s, std::size_t n, double objective,
                                double reconstruction, double l1, double previous);

/// `rotor rica train`'s progress line of a record (with its newline), of a run of at most
/// `iterations` steps.
std::string progress_line(const train::Record& r, std::uint64_t iterations);

/// A worker's rows of W and their ADMM states, and its threads. Borrows the data.
class RowWorker {
  public:
    /// Rows [first_row, first_row + rows) of W; `w` their values (rows×p) and `metric` their
    /// AdaGrad factors (empty: 1). `spectrum` is C's.
    RowWorker(const Dense& data, const std::vector<double>& c, const Spectrum& spectrum,
              const TrainerOptions& options, std::size_t first_block, std::size_t last_block,
              std::vector<double> w, std::vector<double> metric);
    /// kProx: blocks [first_block, first_block + blocks.size()) as another worker held them.
    RowWorker(const Dense& data, const std::vector<double>& c, const Spectrum& spectrum,
              const TrainerOptions& options, std::size_t first_block, std::vector<RowBlock> blocks);
    ~RowWorker();
    RowWorker(const RowWorker&) = delete;
    RowWorker& operator=(const RowWorker&) = delete;

    /// One proximal gradient step of every row from `pulled` (S's entries and the L1 total, as
    /// key_values()).
    void step(std::span<const double> pulled);
    /// The push of the rows as they are: kLimbs values per key.
    const std::vector<double>& contribution() const { return push_; }
    const std::vector<double>& w() const { return w_; }
    std::vector<double> metric() const;
    std::size_t rows() const { return w_.size() / data_.p; }
    /// kProx: gives up every block, in order (the worker is empty afterwards).
    std::vector<RowBlock> release();

  private:
    /// The blocks' row offsets and the team, for blocks [first_block, last_block).
    void start(std::size_t first_block, std::size_t last_block);
    void contribute();
    /// Calls body(share) on every share of the team (or on this thread).
    void run_shares(const std::function<void(int)>& body);
    /// A core::RangeLoop over the team: its threads take the indexes one at a time.
    void parallel(std::int64_t begin, std::int64_t end,
                  const std::function<void(std::int64_t, std::int64_t)>& body);
    void step_admm(std::span<const double> pulled);

    const Dense& data_;
    const std::vector<double>& c_;
    const Spectrum& spectrum_;
    TrainerOptions options_;
    std::vector<std::size_t> block_first_;  ///< per block: its first row in w_ (and one past)
    std::vector<double> w_;
    std::vector<BlockState> states_;  ///< kProx: per block
    std::vector<double> l1_;          ///< kProx: per block, Σ ‖X w_j‖₁ of its rows
    std::vector<Scratch> scratch_;    ///< per share
    std::vector<double> push_;
    core::RangeLoop loop_;              ///< parallel() or the serial loop
    std::unique_ptr<AdmmSplit> split_;  ///< kAdmm: U and R
    std::vector<double> admm_metric_;   ///< kAdmm: the metric factors as given (unused)
    double rho_ = 0;                    ///< kAdmm: the current ρ
    double last_objective_ = 0;         ///< kAdmm: F at the previous step (∞ before the first)
    std::unique_ptr<sched::Runtime> runtime_;
    std::unique_ptr<sched::Team> team_;
};

/// What a segment ends with on a worker: the last pull (S and the L1 total of the final rows).
struct SegmentResult {
    std::vector<double> pulled;
    comm::KvStats stats;
    double compute_s = 0;  ///< on a worker: seconds in its steps (a straggler's sleep included)
};

/// The keys of dimension p: p(p+1)/2 entries of S then the L1 total, increasing.
std::vector<std::uint64_t> rica_keys(std::size_t p);
/// S (p×p, both triangles) from pulled values.
std::vector<double> s_of(std::span<const double> pulled, std::size_t p);

/// Collective over the ranks of `layout`: kv iteration 0 pushes the rows, iterations 1..steps
/// step them. `worker` non-null exactly on workers.
SegmentResult run_segment(comm::Communicator& comm, const comm::KvLayout& layout, RowWorker* worker,
                          std::size_t p, std::uint64_t steps, const TrainerOptions& options);

/// Collective over every rank of `layout` at a segment boundary (every pull applied): the
/// workers' speeds (rows × `steps` / `compute_s`) shared, plan_blocks' boundaries replace
/// `bounds` (on every rank alike) and the blocks whose worker changes move to it whole, so
/// `worker` is rebuilt on the workers whose blocks change. Returns the rows moved (0: no
/// change). The servers' sums are exact and a block's step depends on its state and S only, so at
/// τ = 0 the model is the same bits as without the move.
std::size_t rebalance_blocks(comm::Communicator& comm, const comm::KvLayout& layout,
                             std::unique_ptr<RowWorker>& worker, std::vector<std::size_t>& bounds,
                             std::uint64_t steps, double compute_s, const Dense& data,
                             const std::vector<double>& c, const Spectrum& spectrum,
                             const TrainerOptions& options, std::uint64_t max_rows = 0);

}  // namespace rotor::rica
