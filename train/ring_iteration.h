// One iteration of a block model on a ring of ranks (HarpLDA+; docs/comm.md, "Ring pipeline"):
// the column state is cut into 2P slices, each cut into the same number of column groups of
// the rank's block grid; every rank computes on every slice once, with the dynamic block loop
// over that slice's columns, while the other held slice travels to the next rank. What LDA's
// word-topic slices (apps/lda/trainer_ring.cpp) and MF-SGD's H slices (apps/mf/sgd_ring.cpp)
// share: the model gives a block kernel per slice and how to pack and unpack a slice; the
// driver runs the rounds, the timer's budget, the straggler simulation, the polling that lets
// MPI move the slice in flight, and the per-worker accounting.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "comm/ring_pipeline.h"
#include "comm/wire.h"
#include "core/base/timer.h"
#include "sched/block_loop.h"
#include "sched/block_scheduler.h"
#include "sched/runtime.h"
#include "sched/timer_control.h"
#include "sched/worker_clock.h"
#include "train/record.h"

namespace rotor::train {

/// A model's part in a ring iteration. Every callback runs on the calling (driving) thread but
/// the kernels, which run on the Runtime's workers.
struct RingModel {
    /// The block-loop kernel for the blocks of `slice` (which this rank holds while its round
    /// runs): called once per round, before the round starts.
    std::function<sched::BlockKernel(int slice)> kernel_for;
    /// Packs `slice` into a message for the next rank; the rank no longer holds it afterwards.
    std::function<std::vector<std::byte>(int slice)> pack;
    /// Takes `slice` from a message of the previous rank; throws CommError when malformed.
    std::function<void(int slice, std::span<const std::byte> bytes)> unpack;
};

/// The RingModel of `model`, whose members `pack` and `unpack` (private ones too, named by the
/// model) pack and take a slice.
template <class M>
RingModel slice_ring_model(std::function<sched::BlockKernel(int slice)> kernel_for, M& model,
                           std::vector<std::byte> (M::*pack)(int),
                           void (M::*unpack)(int, std::span<const std::byte>)) {
    return {std::move(kernel_for), [&model, pack](int slice) { return (model.*pack)(slice); },
            [&model, unpack](int slice, std::span<const std::byte> bytes) {
                (model.*unpack)(slice, bytes);
            }};
}

/// How one ring iteration's rounds run.
struct RingIterationOptions {
    /// Columns of the rank's grid per slice: slice s is columns s·c .. s·c + c − 1.
    int cols_per_slice = 1;
    /// Round i of the iteration (0 .. 2P − 1, in the order the rounds run) picks its blocks with
    /// pick_seed followed by i (then the worker, DynamicLoopOptions::pick_seed).
    std::vector<std::uint64_t> pick_seed;
    /// > 0: every round stops after this many seconds (the HarpLDA+ timer); 0: none.
    double budget_s = 0;
    /// >= 1: this rank's workers simulate a straggler (DynamicLoopOptions::straggler_factor).
    double straggler_factor = 1;
    /// Record every block run (RingIteration::events), timed from `origin` when set.
    bool record = false;
    const Stopwatch* origin = nullptr;
};

/// The ring's timer: HarpLDA+'s budget (sched::TimerControl, tuned so that an iteration
/// processes between `low` and `high` of the work) with rotor's rule for when it cuts rounds. A
/// cut round costs where no rank is slow (each iteration does part of the work for the same
/// communication), so unless `always`, the rounds run untimed (to their ends) while the ranks'
/// predicted times for their work agree: after each iteration, the imbalance
/// (sched::rebalance_imbalance of every rank's units and measured speed) at most 1 + `tolerance`
/// makes the next iteration untimed, above it timed; when the timer comes back after untimed
/// iterations, the budget restarts at sched::budget_for_ratio's for a processed ratio halfway
/// between low and high. The first iteration is timed (no speeds yet). Every rank feeds it the
/// same allgathered numbers, so every rank decides the same. Not thread-safe.
class RingTimer {
  public:
    /// The tolerance of a model without its own (LDA uses --rebalance-tolerance, also 0.25).
    static constexpr double kDefaultTolerance = 0.25;

    RingTimer(const sched::TimerParams& params, bool always, double tolerance);
    /// The next iteration's round budget (RingIterationOptions::budget_s), 0: untimed.
    double round_budget() const noexcept { return timed_ ? control_.budget() : 0.0; }
    /// The tuned budget, untimed iterations or not (> 0): what a checkpoint keeps.
    double budget() const noexcept { return control_.budget(); }
    /// After an iteration whose rounds ran under `budget_s` (0: untimed, which teaches the budget
    /// nothing), with the allreduced processed ratio `ratio` in [0, 1]: updates the budget and
    /// decides the next iteration from every rank's `units` and `speeds` (units per compute
    /// second; 0 where unknown, which keeps the timer on), over `rounds` rounds an iteration.
    void after_iteration(double budget_s, double ratio, std::span<const std::uint64_t> units,
                         std::span<const double> speeds, int rounds);

  private:
    sched::TimerControl control_;
    bool always_;
    double tolerance_;
    bool timed_ = true;
};

/// What one ring iteration did on this rank.
struct RingIteration {
    std::vector<std::uint64_t> units;          ///< per worker, over every round
    sched::IterationTimes times;               ///< the rank's workers over the iteration
    double compute_s = 0;                      ///< wall seconds inside the rounds' block loops
    comm::RingStats ring;                      ///< the rotation's time and traffic
    std::vector<sched::ScheduleEvent> events;  ///< when recording: every block run, in order

    /// The units of every worker of this rank.
    std::uint64_t total_units() const;
};

/// What one rank says about itself after a ring iteration; every rank's, allgathered, make the
/// iteration's record (add_ring_ranks), the same on every rank.
struct RingRankTimes {
    double iteration_s = 0;      ///< the iteration's wall seconds on this rank
    double compute_s = 0;        ///< inside the rounds' block loops (RingIteration::compute_s)
    double comm_s = 0;           ///< packing, unpacking, posting, collectives
    double wait_s = 0;           ///< blocked waiting for a slice to arrive
    double effective_ratio = 0;  ///< of the rank's workers (IterationTimes)
    double load_cv = 0;          ///< of the rank's workers (IterationTimes)
    double overhead_ratio = 0;   ///< 1 − compute_s / iteration_s
    double processed_ratio = 1;  ///< the rank's units processed / its units
    double units = 0;            ///< the rank's units (RingTimer's speeds; not in the record)
};

/// Wire encoding (comm/wire.h), for comm::allgather: the nine doubles in field order.
void wire_encode(comm::WireWriter& w, const RingRankTimes& t);
void wire_decode(comm::WireReader& r, RingRankTimes& t);

/// Sets r's timing fields from every rank's part: iteration_s the slowest rank's,
/// effective_ratio, load_cv and overhead_ratio the ranks' means; then the ring's keys: values
/// `ranks`, `compute_s`, `comm_s`, `wait_s` (means over ranks), `rank_load_cv` (std / mean of
/// the ranks' compute seconds), `timer_budget_s`; arrays `rank_processed_ratio`,
/// `rank_compute_s`, `rank_comm_s`, `rank_wait_s`, `rank_overhead_ratio` (one value a rank).
/// The model sets its own values before or after (they keep the order they are set in).
void add_ring_ranks(Record& r, std::span<const RingRankTimes> ranks, double budget_s);

/// Runs one iteration: comm::RingPipeline over the 2P slices, each compute one
/// sched::run_dynamic_loop over the held slice's columns (BlockScheduler::reset_columns), with
/// the workers under a helper thread while this thread polls the transfer in flight. Collective
/// (every rank of `comm` calls it with the same slice layout); called from the driving thread.
/// Exceptions of the kernels, pack and unpack propagate as RingPipeline::run's do.
RingIteration run_ring_iteration(comm::Communicator& comm, sched::Runtime& runtime,
                                 sched::BlockScheduler& scheduler,
                                 const RingIterationOptions& options, const RingModel& model);

}  // namespace rotor::train
