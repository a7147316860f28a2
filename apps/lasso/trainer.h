// The Lasso trainer on 1..N ranks x T threads (docs/lasso.md, "Training on ranks x threads"):
// STRADS push/pull coordinate descent (Lee et al., NIPS 2014) over the kernels of core/lasso.
//
// Layout: the samples are cut into one contiguous slice per rank (balanced by stored entries,
// split_by_entries) and, inside a rank, into one DesignPart per pinned worker (the same
// balance). The standardisation is agreed through exact sums allreduced across ranks
// (build_slice_design). The coefficients, the offset o, the priority sampler and the Rng are
// replicated: every rank runs the same schedule from Rng(seed, round).
//
// A round over coordinates C: every worker PUSHES x̃_jᵀq over its rows into its own ExactSums;
// the workers' sums are added (exactly), reduced across ranks and PULLED (soft-threshold, the
// same on every rank), each worker over its share of C in a large round, the coordinator
// otherwise. On several ranks a small round's limbs are allreduced; a large round's sums are
// reduce-scattered (RankSums: two limbs a sum), each rank pulls its share only and the ranks
// exchange their changes (allgather_blocks); an evaluation is split the same way, and shotgun's
// draws of a pass are made a share a rank and allgathered. The coordinator adds
// the offset's changes in C's order, and every worker subtracts the changes from its residuals
// (merged into the next round's push). Shotgun on one rank runs a pass's large rounds in one
// team call (sched::Team::run_steps), two steps a round (region_rounds). STRADS
// rounds first push the candidates' pairwise dot products the same way. Exact sums make every
// pulled value independent of the split, so ranks x threads give bitwise the same coefficients.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "apps/lasso/rank_sums.h"
#include "comm/communicator.h"
#include "core/lasso/design.h"
#include "core/lasso/objective.h"
#include "core/lasso/pair_cache.h"
#include "core/lasso/schedule.h"
#include "core/lasso/slice_design.h"
#include "sched/runtime.h"
#include "sched/team.h"
#include "sched/worker_clock.h"
#include "train/record.h"
#include "train/reporter.h"

namespace rotor::lasso {

enum class Schedule : std::uint8_t { kCyclic, kShotgun, kStrads };
/// "cyclic", "shotgun" or "strads".
std::string_view schedule_name(Schedule s);
/// The schedule named `name`; ConfigError("--schedule") otherwise.
Schedule parse_schedule(std::string_view name);

/// What stops a run before max_iterations.
enum class StopRule : std::uint8_t {
    kGap,  ///< relative duality gap (gap / σ_y², scikit-learn's test) below tol
    kKkt,  ///< KKT violation in standardised units (kkt / σ_y) below tol
};
StopRule parse_stop_rule(std::string_view name);
std::string_view stop_rule_name(StopRule s);

/// What `rotor lasso train` fits and how. Plain struct; validate() checks it.
struct TrainOptions {
    double lambda = 0;  ///< λ in y's units, glmnet/scikit-learn normalisation (--lambda), >= 0
    Schedule schedule = Schedule::kCyclic;
    /// shotgun uses strads.parallel (L); strads all four.
    StradsParams strads;
    StandardizeOptions standardize;       ///< --no-intercept, --no-standardize
    double tol = 1e-7;                    ///< --tol
    StopRule stop = StopRule::kGap;       ///< --stop
    std::uint32_t max_iterations = 1000;  ///< --max-iterations
    std::uint32_t eval_every = 1;         ///< evaluate (and test convergence) every N iterations
    std::uint64_t seed = 1;
    /// Steps of a round over fewer stored entries than this run on the coordinator thread, part
    /// after part, instead of on the workers (the same bits; tests set 0 to force the workers).
    std::uint64_t inline_entries = 16384;
    /// A worker's rows are cut into tiles of at most this many rows, walked one after another in
    /// every step, so that the residuals a push reads at random (8 bytes a row) stay in cache
    /// when a part has more rows than the cache holds (docs/lasso.md, "Row tiles"); 0: one tile
    /// a worker. The same bits for any value (--tile-rows).
    std::uint32_t tile_rows = 262144;
    /// ...but never so many tiles that one averages fewer stored entries a column than this: a
    /// column costs a few misses a tile (its offsets, the first lines of its rows and values)
    /// and a loop exit, which 512 entries amortise (tests set 1 to tile small data).
    std::uint32_t tile_column_entries = 512;
    /// Sweep a working set instead of every coordinate (--no-active-set turns it off): the
    /// active set (b_j ≠ 0) plus the coordinates the last evaluation's gradients select (KKT
    /// violators; after set_lambda, the strong rule), then the active set again until its
    /// largest change d_j δ_j² falls below the inner tolerance (docs/lasso.md, "Active sets").
    /// cyclic sweeps in order; shotgun and strads run ceil(|set| / L) rounds drawn from the set.
    bool active_set = true;

    /// ConfigError naming the flag on any bad value.
    void validate() const;
};

/// First row of each of `parts` contiguous ranges of rows (parts + 1 entries, the last = rows),
/// cut where the running cost (stored entries + 1 per row) passes k·total/parts.
std::vector<std::uint32_t> split_by_entries(std::span<const std::uint64_t> row_offsets, int parts);

/// How many row tiles (TrainOptions::tile_rows) a worker's `rows` rows holding `entries` stored
/// entries of p columns are cut into: enough that none has more than tile_rows rows (0: one
/// tile), but never so many that a tile averages fewer than `column_entries` entries a column
/// (TrainOptions::tile_column_entries). Every tile also costs p + 1 offsets (8 bytes each,
/// against 12 bytes an entry): at 4 or more entries a column, under a sixth of the part.
std::uint32_t row_tiles(std::uint32_t rows, std::uint64_t entries, std::uint32_t p,
                        std::uint32_t tile_rows, std::uint32_t column_entries);

/// The worker threads of a rank when --threads is not given, and why (for the start line).
struct ThreadChoice {
    int threads = 1;
    std::string reason;
};
/// A round must read at least this many stored entries for a second thread to pay: four times
/// the hand-off threshold (TrainOptions::inline_entries), as measured in docs/lasso.md ("The
/// default thread count").
inline constexpr std::uint64_t kThreadRoundEntries = 65536;
/// Chooses a rank's threads (docs/lasso.md, "The default thread count"). A round reads about
/// (its coordinates: 1 for cyclic, L otherwise) x (the rank's stored entries / p) entries; below
/// kThreadRoundEntries a second worker only cuts every column in two (its fixed misses paid
/// twice) and adds a meeting a round: one thread. Otherwise as many of `cores` as other
/// processes leave free (`busy`: their load, e.g. the 1-minute load average; a worker that
/// meets a descheduled partner at every round waits a time slice), at least 1.
/// `rank_entries`: the stored entries of the rank's samples.
ThreadChoice choose_threads(std::uint64_t rank_entries, std::uint32_t features,
                            const TrainOptions& options, int cores, double busy);

/// The memory plan of one rank of `ranks` (its peak bytes; `rotor lasso train` and the Python
/// package check it against --max-memory before reading or copying the samples), for data of
/// `entries` stored entries in `rows` samples of `features` features, `whole_read` when every
/// sample is copied before the rank's are sliced out (text input), `checkpoints` when they are
/// written or resumed. Reading: text is parsed whole (12 bytes an entry, 16 a row) and the
/// rank's slice copied out of it; a binary file is mapped, and only the slice is copied (the
/// mapping's pages leave the resident set as they are read). Training: the slice and its
/// standardised columns, then the columns and the workers' parts, the slice freed in between
/// (2 slices at any time). Per feature: the coefficients, changes, gradients, shifts, norms,
/// the evaluation's sums and the rounds' buffers (176 bytes), a worker's offsets and column sums
/// (48 bytes each), and with ranks the reduced sums and exchanges (64 bytes). Measured on a
/// 200,000 x 10^6 set of 8.9M entries (peak RSS 409, 450 and 321/365 MiB at 1 x 1, 1 x 2 and
/// 2 x 1; this gives 423, 469 and 380 MiB) and a 2M x 20,000 set of 55.6M entries (1,339 and
/// 671 MiB a rank at 1 x 1 and 2 x 1 from the binary form; this gives 1,337 and 672). With
/// checkpoints or --resume, the state gathered (N residuals, 3 p-vectors) beside its encoding.
/// Row tiles beyond one a worker add their offsets (8 bytes a feature each; lasso::row_tiles
/// keeps them under a sixth of the part) and up to 4 MiB of huge-page rounding (two arrays,
/// core/base/huge_pages.h): 1,359 MiB measured with 8 tiles on the 55.6M-entry set, 1,338
/// MiB with one.
std::uint64_t estimate_memory(std::uint64_t entries, std::uint64_t rows, std::uint32_t features,
                              bool whole_read, int ranks, int threads, bool checkpoints,
                              const TrainOptions& options);

/// The exact reductions of build_slice_design over a communicator (nothing for one rank).
Reducer comm_reducer(comm::Communicator& comm);

/// Everything a run needs to continue bitwise (checkpoints, docs/formats.md). A value type.
struct TrainerState {
    std::vector<double> b;           ///< standardised coefficients
    std::vector<double> last_delta;  ///< their last changes (the STRADS priorities)
    double offset = 0;               ///< o = Σ_j c_j b_j
    std::vector<double> residuals;   ///< q over every sample, in row order (rank 0's gather)
    std::vector<double> gradient;    ///< g_j at the last evaluation
    double gradient_lambda = 0;      ///< λ̃ of that evaluation
    bool gradient_fresh = false;
    double inner_tol = 0;
    std::uint32_t iterations_done = 0;
    std::uint64_t rounds_done = 0;
    std::uint64_t total_updates = 0;
    Evaluation last;
    bool converged = false;
    /// Shotgun, strads: the L in use (lowered by rollbacks; 0: TrainOptions' L) and the
    /// rollbacks so far.
    std::uint32_t parallel = 0;
    std::uint32_t rollbacks = 0;
};

/// One rank of a training run. Every method is collective (every rank calls it at the same
/// point) unless noted. Holds references to the runtime and the communicator. Not thread-safe.
class Trainer {
  public:
    /// `slice`: this rank's samples (e.g. slice_rows of the rows split_by_entries gives it),
    /// freed once standardised (move it in: the peak is then its standardised columns and the
    /// workers' parts, not those and the slice). Standardises over every rank, splits the slice
    /// over the runtime's workers, and measures λ_max at b = 0. Options are validated.
    Trainer(RawData slice, const TrainOptions& options, sched::Runtime& runtime,
            comm::Communicator& comm);
    ~Trainer();
    Trainer(const Trainer&) = delete;
    Trainer& operator=(const Trainer&) = delete;

    /// Iterations done since construction or the last set_lambda(); local.
    std::uint32_t iterations_done() const { return iterations_done_; }
    /// One iteration: a sweep of every coordinate (shotgun/strads: ceil(p / L) rounds, p
    /// updates), or, with active sets, of the working set and then of the active set until it
    /// settles. Record: updates, changed, rejected, pair_cache_hit_rate, rounds, handoffs
    /// (team calls), barrier_sleeps (region waits that blocked), worker times, and on
    /// several ranks comm_s (seconds in the rounds' collectives).
    train::Record iterate();
    /// Adds objective, objective_paper, gap, relative_gap, kkt, nonzeros, l1_norm (and on several
    /// ranks eval_comm_s, seconds in the evaluation's collectives); remembers
    /// whether the stopping rule holds (converged()). Shotgun and strads: when the objective
    /// rose above the last accepted evaluation's (or is not finite), the parallel updates
    /// diverged: the trainer returns to the state of that evaluation, halves L and goes on, and
    /// the record holds that evaluation, `rollback` = 1 and `parallel`, the new L (docs/lasso.md,
    /// "Parallel updates that cannot diverge"). ConfigError (the same on every rank) only if it
    /// rises at L = 1 or with cyclic (no parallel updates: not expected).
    void evaluate_record(train::Record& r);
    /// Shotgun, strads: the L the rounds use now (TrainOptions' L, halved by every rollback),
    /// and the rollbacks so far. Local.
    std::uint32_t parallel() const { return strads_.parallel; }
    std::uint32_t rollbacks() const { return rollbacks_; }
    /// The last evaluation, and whether it met the stopping rule. Local.
    const Evaluation& last_evaluation() const { return last_; }
    bool converged() const { return converged_; }

    /// Collective: the state, the residuals gathered on rank 0 (other ranks: empty residuals).
    TrainerState gather_state();
    /// Local: continues from `state` (of a run on the same data and options, any ranks x
    /// threads); `first_row`: the global index of this rank's first sample. InputError on a
    /// state of other shapes.
    void restore(const TrainerState& state, std::uint32_t first_row);

    /// A new λ, keeping the coefficients (a warm start on a path); the iteration count restarts.
    void set_lambda(double lambda);
    /// λ_max (y's units): the smallest λ whose solution is β = 0. Local.
    double lambda_max() const { return lambda_max_; }

    /// The standardised coefficients b (replicated; the model's β_std / σ_y). Local.
    const Coefficients& coefficients() const { return coefs_; }
    const Standardization& standardization() const { return standardization_; }
    std::uint32_t features() const { return static_cast<std::uint32_t>(shifts_.size()); }
    std::uint32_t samples() const { return samples_; }
    std::uint64_t total_updates() const { return total_updates_; }
    /// Row tiles over this rank's workers (TrainOptions::tile_rows). Local.
    std::size_t tiles() const;
    const TrainOptions& options() const { return options_; }

  private:
    struct Worker;
    /// Runs fn on every worker's part: on the workers, or, when the step touches fewer than
    /// options.inline_entries stored entries (`entries`, over the rank), on this thread part after
    /// part (a hand-off to the workers costs more than such a step; the result is the same bits).
    template <class Fn>
    void run(const Fn& fn, std::uint64_t entries);
    /// Whether stored entries are counted: they decide hand-offs to the workers only, and one
    /// worker has none (entries_of and filter return 0 then).
    bool counts_entries() const { return workers_.size() > 1; }
    /// Stored entries of the rank's columns `coords`; 0 unless counts_entries().
    std::uint64_t entries_of(std::span<const std::uint32_t> coords) const;
    void flush_residuals();
    void reduce(std::vector<core::ExactSum>& total);
    /// total = the workers' sums (w.sums), added exactly.
    void combine(std::vector<core::ExactSum>& total, std::size_t size);
    /// total_[t] = the workers' sums[t] for t in me's share of [0, size).
    void combine_range(Worker& me, std::size_t size);
    /// A pull step over every worker's share of a round: run() when the round is large, else on
    /// this thread, part after part, without a clock.
    template <class Fn>
    void run_pull(const Fn& fn, std::uint64_t entries);
    /// A round's push on one part: the pending residual updates, then x̃_jᵀq into me.sums.
    void push_part(Worker& me, std::span<const std::uint32_t> coords);
    /// A round over coords: the push (run()), then pull_round.
    void round(std::span<const std::uint32_t> coords);
    /// A round's pull on this thread: combine, reduce, soft-threshold, the sampler, counters.
    void pull_round(std::span<const std::uint32_t> coords);
    /// Several ranks, a round split between them: shares this rank's changes [first, last) of
    /// the round, their c_j δ_j and its largest d_j δ_j² (`largest`) in one allgather_blocks of
    /// their bit patterns, and applies the other ranks' (apply_pulled; remote_pull_ counts them).
    void exchange_pulled(std::size_t first, std::size_t last, double largest);
    /// What follows the workers' pull of coords (changes `deltas`), on one thread: the offset's
    /// changes in order, the round's counters, the sampler.
    void finish_pull(std::span<const std::uint32_t> coords, std::span<const double> deltas);
    /// A pass's draw of one round, and what follows its pull (parallel_pass).
    using RoundSchedule = std::function<std::vector<std::uint32_t>()>;
    using RoundDone =
        std::function<void(std::span<const std::uint32_t> coords, std::span<const double> deltas)>;
    /// Cyclic rounds over coords in order; returns max d_j δ_j² (standardised units).
    double sweep(std::span<const std::uint32_t> coords);
    /// Removes the coordinates with b_j = 0 from `set`, keeping the order. The active sweeps
    /// touch only their set, so filtering the last active set gives the working set's nonzeros.
    /// Returns the set's stored entries (this rank's).
    std::uint64_t keep_nonzero(std::vector<std::uint32_t>& set);
    /// out = the coordinates of `from` (of 0..p−1 when from is empty) that keep(j) accepts, in
    /// order, filtered by the workers a share each (run()); returns their stored entries (0
    /// unless counts_entries()).
    template <class Keep>
    std::uint64_t filter(std::span<const std::uint32_t> from, std::uint32_t p, const Keep& keep,
                         std::vector<std::uint32_t>& out);
    /// set = the coordinates the next iteration sweeps (or draws from) first: every one when the
    /// gradients of the last evaluation are stale or active sets are off, else those the strong
    /// rule keeps, filtered on the workers. Local; the same on every rank. Returns the set's
    /// stored entries on this rank.
    std::uint64_t working_set(std::vector<std::uint32_t>& set);
    /// The strong rule's bound on |g_j| for working_set.
    double strong_threshold() const;
    /// A cyclic iteration: the working set, then the active set until it settles.
    void iterate_cyclic();
    /// A shotgun/strads iteration: rounds over the working set, then over its nonzero
    /// coordinates until their largest change settles (as iterate_cyclic) or the iteration has
    /// made p updates.
    void iterate_parallel(std::uint32_t& rejected, std::uint64_t& rounds);
    /// Shotgun/strads rounds drawing from `set` (ascending coordinates; all p: the draws are the
    /// coordinates, and strads draws from sampler_, else from a sampler of the set's
    /// priorities) until they made |set| updates: ceil(|set| / L) rounds for shotgun, more for
    /// strads when its check keeps fewer than L; `rounds` counts them (the Rng streams).
    /// Returns max d_j δ_j².
    /// `set_entries`: the set's stored entries on this rank.
    double parallel_pass(std::span<const std::uint32_t> set, std::uint64_t set_entries,
                         std::uint32_t& rejected, std::uint64_t& rounds);
    /// Round k of a pass's draws (from 0); pure and callable from any thread.
    using RoundDraw = std::function<std::vector<std::uint32_t>(std::uint64_t k)>;
    /// `count` >= 1 shotgun rounds of parallel_pass in ONE team call (one rank, several
    /// workers; docs/lasso.md, "Rounds in one region"). The parts' rounds are drawn ahead (a
    /// share each); then, a round in two team steps: every part subtracts the last round's
    /// changes from its residuals and pushes, part 0 also finishes the last round's pull
    /// (offset, counters, `done`); then every part pulls its share.
    /// The same operations in the same order per row and per coordinate: the same bits as
    /// round() after round(). The last round's changes are left pending.
    void region_rounds(std::uint64_t count, const RoundDraw& draw, const RoundDone& done);
    /// Several ranks: the `count` rounds of `l` coordinates draw(0..count-1) gives, each rank
    /// drawing a share (over its workers) and one allgather sharing them; round k at k * l.
    std::vector<std::uint32_t> draw_on_ranks(std::uint64_t count, std::uint32_t l,
                                             const RoundDraw& draw);
    /// STRADS: L' candidates drawn from `sampler` (positions in `set`, or coordinates when
    /// `set` is empty), then the correlation check.
    std::vector<std::uint32_t> strads_schedule(Rng& rng, PrioritySampler& sampler,
                                               std::span<const std::uint32_t> set,
                                               std::uint32_t& rejected);
    /// x̃_aᵀx̃_b over every part of this rank (one rank only), cached.
    double pair_dot(std::uint32_t a, std::uint32_t b);
    /// Pushes an evaluation on the workers, reduces it, sets gradient_ (the workers split the
    /// coordinates) and returns the evaluation at options_.lambda.
    Evaluation evaluate_all();
    /// An evaluation's q_sum, rr and ry.
    using EvalTails = std::array<core::ExactSum, 3>;
    /// evaluate_all's end on several ranks, after the push (`tails`: this rank's sums; on
    /// return, every rank's): a reduce-scatter of the column sums (eval_sums_), this rank's
    /// columns' gradients and terms, and share_gradients.
    Evaluation evaluate_ranks(EvalTails& tails);
    /// Column j's x̃_jᵀq over the workers of this rank: their evaluation sums added (the one
    /// worker's as they are). Inline (trainer_internal.h): once a column in the evaluation.
    core::ExactSum column_total(std::size_t j) const;
    /// The terms of coordinates [lo, hi) (and their gradient_), total(j) being column j's total
    /// x̃_jᵀq, converted a chunk at a time.
    template <class Total>
    CoordinateStats chunked_stats(std::size_t lo, std::size_t hi, double q_total,
                                  const Total& total);
    /// Collective: every rank's gradients [first, last) (RankSums' blocks) into gradient_ and
    /// the coordinates' terms of every rank added (one allgather_blocks). `mine`: this rank's
    /// terms.
    CoordinateStats share_gradients(const CoordinateStats& mine, std::size_t first,
                                    std::size_t last);
    ProblemView problem() const;
    /// Shotgun, strads: remembers the state (b, last changes, offset, residuals; not the
    /// gradients) and `e`, its evaluation, as the point a rollback returns to. Cyclic: nothing
    /// (it cannot diverge). Nothing may be pending.
    void save_state(const Evaluation& e);
    /// Returns to the saved state (the sampler rebuilt from its changes) and halves L.
    void roll_back();

    TrainOptions options_;
    sched::Runtime& runtime_;
    sched::Team team_;  ///< on runtime_'s workers: hand-offs (run) and regions (region_rounds)
    comm::Communicator& comm_;
    std::uint32_t samples_ = 0;
    double target_sum_ = 0;
    Standardization standardization_;
    HugeVector<double> shifts_;  // read at random, as the columns (core/base/huge_pages.h)
    HugeVector<double> sq_norms_;
    std::vector<std::unique_ptr<Worker>> workers_;
    HugeVector<std::uint64_t> column_entries_;  ///< stored entries per column in this rank
    std::uint64_t slice_entries_ = 0;           ///< stored entries + rows of this rank
    sched::WorkerClocks clocks_;
    Coefficients coefs_;
    std::unique_ptr<PrioritySampler> sampler_;
    PairDotCache pair_cache_;  ///< strads: the correlation check's dots
    /// The last pull's coordinates and changes, not yet subtracted from the residuals.
    std::vector<std::uint32_t> pending_coords_;
    std::vector<double> pending_deltas_;
    std::uint64_t pending_entries_ = 0;         ///< stored entries of pending_coords_' columns
    std::vector<double> shift_deltas_;          ///< c_j δ_j of the last pull, for the offset
    double round_largest_ = 0;                  ///< max d_j δ_j² of the last pull
    PullStats remote_pull_;                     ///< the last pull's shares of the other ranks
    std::vector<std::int64_t> exchange_;        ///< exchange_pulled's buffer
    std::vector<std::size_t> exchange_counts_;  ///< and its blocks' lengths
    std::vector<core::ExactSum> total_;         ///< a round's reduced sums
    RankSums rank_sums_;                        ///< several ranks: a round's reduce-scatter
    /// Several ranks: the evaluation's reduce-scatter and allgather buffers, apart from the
    /// rounds' so that neither is regrown (and zeroed) at every evaluation.
    RankSums eval_sums_;
    HugeVector<std::int64_t> eval_exchange_;
    std::uint32_t changed_ = 0;  ///< coordinates changed in this iteration
    /// g_j = z_jᵀr/N (standardised) at the last evaluation, at λ̃ = gradient_lambda_; fresh while
    /// no update has followed it.
    HugeVector<double> gradient_;
    double gradient_lambda_ = 0;
    bool gradient_fresh_ = false;
    double inner_tol_ = 0;  ///< the active sweeps stop below this max d_j δ_j²
    double lambda_max_ = 0;
    std::uint32_t iterations_done_ = 0;
    std::uint64_t rounds_done_ = 0;
    std::uint64_t total_updates_ = 0;
    std::uint64_t handoffs_ = 0;        ///< team calls made (a region counts one)
    std::uint64_t barrier_sleeps_ = 0;  ///< region waits that blocked (sched::Team)
    /// Several ranks: seconds in the rounds' collectives in this iteration (comm_s), and in the
    /// last evaluation's (eval_comm_s): the transfers and the waits for the other ranks.
    double comm_s_ = 0;
    double eval_comm_s_ = 0;
    Evaluation last_;
    bool converged_ = false;
    /// The schedules' parameters in use: options_.strads with L lowered by rollbacks.
    StradsParams strads_;
    std::uint32_t rollbacks_ = 0;
    std::uint32_t bounded_ = 0;  ///< strads: candidates only the row-sum bound rejected (iteration)
    /// Shotgun, strads: the state at the last accepted evaluation (save_state); the residuals
    /// are each worker's (Worker::saved_residuals). Not the gradients: after a rollback the
    /// next iteration starts from every coordinate.
    struct Saved {
        HugeVector<double> b, last_delta;
        double offset = 0;
        double gradient_lambda = 0;
        double inner_tol = 0;
        Evaluation eval;
    };
    Saved saved_;
};

/// updates_processed, updates_per_s; headline objective.
train::RecordSchema record_schema();

/// The iterations of `rotor lasso train` (and of the Python package's Lasso.fit): iterate()
/// until t.converged() or t.options().max_iterations, evaluating every eval_every iterations and
/// at the last through `evaluate` (t.evaluate_record, which the CLI agrees across ranks); time_s
/// leaves the evaluations out and eval_s counts them; `lambda`, when given, is added to every
/// record. Each record goes to `reporter` (may be null), then `after_iteration` runs (may be
/// empty). Returns the last record, evaluated. Collective like iterate().
train::Record fit(Trainer& t, train::Reporter* reporter,
                  const std::function<void(train::Record&)>& evaluate,
                  std::optional<double> lambda = std::nullopt,
                  const std::function<void()>& after_iteration = {});

}  // namespace rotor::lasso
