// Training a matrix-factorization model on 1..N ranks (docs/mf.md, "Training"): the options of
// `rotor mf train`, what a run reports, and the Trainer every solver implements.
//
// Three solvers share the interface:
//   - ccd: CCD++ as STRADS push/pull (core/mf/ccd.h). Users (rows of W) are split over ranks
//     (assign_users) and, inside a rank, over the pinned workers; H is replicated; a column
//     update's partial sums are exact (core::ExactSum) and summed across workers and ranks, so any
//     thread and rank count gives bitwise the same model.
//   - sgd: block SGD (core/mf/sgd.h) on the dynamic block scheduler; across ranks W's rows stay
//     and H's column slices rotate on the two-slot ring pipeline under the HarpLDA+ timer.
//   - als: implicit feedback (--implicit): the Hu-Koren-Volinsky objective by ALS with CG inner
//     solves (core/mf/ials.h); W and H replicated, each rank solving a range of users, then of
//     items, and allgathering them.
// One process is the ranks = 1 case over a communicator of one rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/communicator.h"
#include "core/mf/ccd.h"
#include "core/mf/ials.h"
#include "core/mf/model_file.h"
#include "core/mf/objective.h"
#include "core/mf/ratings.h"
#include "core/mf/sgd.h"
#include "sched/runtime.h"
#include "sched/timer_control.h"
#include "train/record.h"
#include "train/trace.h"

namespace rotor::mf {

enum class Solver : std::uint8_t { kCcd, kSgd, kAls };

/// "ccd", "sgd" or "als".
std::string_view solver_name(Solver s);
/// The solver named `name`; ConfigError("--solver") otherwise.
Solver parse_solver(std::string_view name);

/// What `rotor mf train` trains and how. Plain struct; validate() checks it.
struct TrainOptions {
    Solver solver = Solver::kSgd;
    std::uint32_t rank = 64;    ///< K (--rank), 1..kMaxRank (64: docs/mf.md, "Defaults")
    ObjectiveParams objective;  ///< --lambda, --lambda-bias, --lambda-form, --no-bias
    std::uint32_t inner = 3;    ///< ccd: inner sweeps per rank-one update (--inner)
    double eta = 0.1;           ///< sgd: initial learning rate (--eta)
    std::uint32_t iterations = 20;
    std::uint64_t seed = 1;
    std::uint32_t eval_every = 1;
    /// sgd: diagonal rounds on a fixed grid, so that a seed gives the same model at any thread
    /// count (ccd always does).
    bool deterministic = false;
    /// sgd: grid side L per slice (0: max(ceil(sqrt(2) P), 8) for P threads; 16 with
    /// --deterministic).
    int blocks = 0;
    /// sgd on more than one rank: the HarpLDA+ timer stops each round together (--no-timer:
    /// every round runs to the end of its blocks).
    bool timer = true;
    sched::TimerParams timer_params;
    bool record_schedule = false;  ///< keep the block timeline (--trace)
    /// Implicit feedback (--implicit): the ratings are confidences, the objective Hu-Koren-
    /// Volinsky's (core/mf/ials.h), solved by als only; objective.bias is off and λ plain.
    bool implicit = false;
    double alpha = 5.0;            ///< als: c = 1 + α r (--alpha; docs/mf.md, "Implicit feedback")
    std::uint32_t cg_steps = 3;    ///< als: CG steps per row and half-step (--cg-steps)
    std::uint32_t ranking_k = 10;  ///< als with --test: k of the ranking metrics (--ranking)

    CcdParams ccd() const;
    SgdParams sgd() const;
    IalsParams ials() const;
    /// ConfigError naming the flag on any bad value.
    void validate(int ranks) const;
};

/// Held-out ratings in the training matrix's indices; a user >= N or an item >= M is one the
/// model never saw (predicted from μ and the known bias). Aligned arrays.
struct TestRatings {
    std::vector<std::uint32_t> users;
    std::vector<std::uint32_t> items;
    std::vector<float> values;

    /// The ratings of a file read against the training maps (read_ratings with maps given).
    static TestRatings from(const Ratings& test);
    std::uint64_t size() const { return values.size(); }
};

/// A run's state for a checkpoint, whole on rank 0 (gather_state) and on every rank for
/// restore. Enough to continue exactly where the run stopped.
struct TrainerState {
    std::uint32_t iterations_done = 0;
    /// The model so far (users/items maps left empty: the CLI keeps them).
    Model model;
    /// sgd: the AdaGrad accumulators of W's rows, H's rows, b and c (core/mf/sgd.h); empty for
    /// ccd.
    std::vector<float> w_gsum, h_gsum, b_gsum, c_gsum;
    /// ccd: the running residual of every training rating, in the training matrix's CSR order
    /// (recomputing them from W and H would round differently from the uninterrupted run);
    /// empty for sgd.
    std::vector<float> residuals;
    /// sgd across ranks: the timer's next budget (0: no timer).
    double timer_budget = 0;
};

/// The objects a trainer is built over; they must outlive it.
struct TrainerInputs {
    const Ratings& train;
    const TestRatings* test = nullptr;  ///< may be null: no test RMSE
    const TrainOptions& options;
    sched::Runtime& runtime;
    comm::Communicator& comm;  ///< one rank for a single process
    /// Null, or `train` itself when its owner lets the trainer release the matrix as it copies it
    /// (sgd: the values behind its blocks' fill, and the items too when gives_seen_items(), so
    /// that the owner must then read nothing of the matrix but its shape and offsets; building
    /// the trainer then holds 8 bytes a rating, not 16); ccd and als ignore it.
    Ratings* releasable = nullptr;
};

/// One training run's rank: its users' ratings and W rows, and its share of H. Every method is
/// collective (every rank calls it at the same point) unless noted. Satisfies train::Driver.
class Trainer {
  public:
    virtual ~Trainer() = default;

    /// Iterations (epochs) done so far; local.
    virtual std::uint32_t iterations_done() const = 0;
    /// One iteration over every rating: processed (ratings), per-worker times, ratios.
    virtual train::Record iterate() = 0;
    /// `sweeps` >= 1 iterations back to back: returns the last one's record and hands the others
    /// to on_sweep as each completes (possibly from a worker thread), so that train::
    /// run_iterations runs the iterations between sync points without a barrier (SpanDriver).
    /// By default iterate() `sweeps` times.
    virtual train::Record iterate_span(std::uint32_t sweeps,
                                       const std::function<void(train::Record&)>& on_sweep);
    /// Adds train_rmse, objective (the whole f of core/mf/objective.h) and, with a test set,
    /// test_rmse and test_mae.
    virtual void evaluate_record(train::Record& r) = 0;
    /// The model, whole on rank 0 (an empty Model elsewhere); maps left empty.
    virtual Model gather_model() = 0;
    /// The state, whole on rank 0 (empty elsewhere).
    virtual TrainerState gather_state() = 0;
    /// Continues from `state` (given whole on every rank, possibly written by another number of
    /// ranks or threads): each rank takes its part. InputError when it does not fit the ratings
    /// or the options.
    virtual void restore(const TrainerState& state) = 0;
    /// With record_schedule: every rank's block runs, on rank 0 (empty elsewhere). By default (a
    /// solver without blocks: ccd, als) every rank's timeline is empty.
    virtual std::vector<std::vector<train::BlockRun>> gather_schedule() {
        if (rank_ != 0) return {};
        return std::vector<std::vector<train::BlockRun>>(static_cast<std::size_t>(ranks_));
    }
    /// Whether release_seen_items() gives each user's items (fixed when the trainer is built):
    /// then its owner needs no copy of the matrix while it trains.
    virtual bool gives_seen_items() const { return false; }
    /// After the last iteration: each user's items (CSR offsets over every user, items
    /// increasing within a user; what Ratings::take_user_items gives), rebuilt from the
    /// trainer's own copy of the ratings, which it releases first: the trainer cannot iterate
    /// again. Only when gives_seen_items(); local.
    virtual std::pair<std::vector<std::uint64_t>, std::vector<ItemId>> release_seen_items();

    int rank() const { return rank_; }

  protected:
    Trainer(int rank, int ranks) : rank_(rank), ranks_(ranks) {}

  private:
    int rank_ = 0;
    int ranks_ = 1;
};

std::unique_ptr<Trainer> make_ccd_trainer(const TrainerInputs& in);
std::unique_ptr<Trainer> make_sgd_trainer(const TrainerInputs& in);
std::unique_ptr<Trainer> make_als_trainer(const TrainerInputs& in);
/// The trainer of in.options.solver; validates the options.
std::unique_ptr<Trainer> make_trainer(const TrainerInputs& in);

/// Peak bytes one rank of `ranks` (each with `threads` workers) needs to train on `train`, the
/// ratings read included: the memory plan's estimate (train::check_memory).
std::uint64_t estimate_memory(const Ratings& train, const TrainOptions& options, int ranks,
                              int threads);

/// For a trainer on P > 1 ranks whose collectives allocate, fill and free message buffers of up
/// to `bytes` every round: from here such allocations come from the heap, and up to four of them
/// stay there when freed. `mf train` maps every allocation of 128 KiB or more afresh
/// (apps/mf/cli.cpp), so each round would fault every page of them in again (SGD's ring: 8,000
/// faults a rank an iteration at 21.2M ratings; CCD's reduce-scatters: Open MPI's temporary
/// buffers). A no-op without glibc.
void keep_messages_in_heap(std::size_t bytes);

/// ratings_processed, ratings_per_s; headline test_rmse when there is a test set, else
/// train_rmse; implicit: test_ndcg_at_k, else the objective.
train::RecordSchema record_schema(bool has_test, bool implicit = false);

}  // namespace rotor::mf
