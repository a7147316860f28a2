#include "train/ring_iteration.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <numeric>

#include "sched/rebalance.h"

namespace rotor::train {
namespace {

/// How often the driving thread lets MPI progress a rotation while the workers compute.
constexpr auto kProgressPeriod = std::chrono::microseconds(500);

double mean_of(const std::vector<double>& v) {
    return v.empty() ? 0.0
                     : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

template <class T, class F>
void ring_rank_fields(T& t, F&& field) {
    field(t.iteration_s);
    field(t.compute_s);
    field(t.comm_s);
    field(t.wait_s);
    field(t.effective_ratio);
    field(t.load_cv);
    field(t.overhead_ratio);
    field(t.processed_ratio);
    field(t.units);
}

}  // namespace

void wire_encode(comm::WireWriter& w, const RingRankTimes& t) {
    ring_rank_fields(t, [&](const double& x) { w.put(x); });
}

void wire_decode(comm::WireReader& r, RingRankTimes& t) {
    ring_rank_fields(t, [&](double& x) { r.get(x); });
}

void add_ring_ranks(Record& r, std::span<const RingRankTimes> ranks, double budget_s) {
    std::vector<double> ratio, compute, comm, wait, overhead, effective, load;
    r.iteration_s = 0;
    for (const RingRankTimes& t : ranks) {
        r.iteration_s = std::max(r.iteration_s, t.iteration_s);
        ratio.push_back(t.processed_ratio);
        compute.push_back(t.compute_s);
        comm.push_back(t.comm_s);
        wait.push_back(t.wait_s);
        overhead.push_back(t.overhead_ratio);
        effective.push_back(t.effective_ratio);
        load.push_back(t.load_cv);
    }
    r.effective_ratio = mean_of(effective);
    r.load_cv = mean_of(load);
    r.overhead_ratio = mean_of(overhead);
    r.set("ranks", static_cast<double>(ranks.size()));
    r.set("compute_s", mean_of(compute));
    r.set("comm_s", mean_of(comm));
    r.set("wait_s", mean_of(wait));
    r.set("rank_load_cv", sched::population_cv(compute));
    r.set("timer_budget_s", budget_s);
    r.set_array("rank_processed_ratio", std::move(ratio));
    r.set_array("rank_compute_s", std::move(compute));
    r.set_array("rank_comm_s", std::move(comm));
    r.set_array("rank_wait_s", std::move(wait));
    r.set_array("rank_overhead_ratio", std::move(overhead));
}

RingTimer::RingTimer(const sched::TimerParams& params, bool always, double tolerance)
    : control_(params), always_(always), tolerance_(tolerance) {}

void RingTimer::after_iteration(double budget_s, double ratio, std::span<const std::uint64_t> units,
                                std::span<const double> speeds, int rounds) {
    if (budget_s > 0) control_.update(std::clamp(ratio, 0.0, 1.0));
    if (always_) return;
    const bool measured = std::all_of(speeds.begin(), speeds.end(), [](double s) { return s > 0; });
    const bool was_timed = timed_;
    timed_ = !measured || sched::rebalance_imbalance(units, speeds) > 1 + tolerance_;
    if (timed_ && !was_timed) {
        const sched::TimerParams& p = control_.params();
        const double b = sched::budget_for_ratio(units, speeds, rounds, (p.low + p.high) / 2);
        if (b > 0) control_.reset(b);
    }
}

std::uint64_t RingIteration::total_units() const {
    return std::accumulate(units.begin(), units.end(), std::uint64_t{0});
}

RingIteration run_ring_iteration(comm::Communicator& comm, sched::Runtime& runtime,
                                 sched::BlockScheduler& scheduler,
                                 const RingIterationOptions& options, const RingModel& model) {
    RingIteration out;
    out.units.assign(static_cast<std::size_t>(runtime.threads()), 0);
    sched::WorkerClocks clocks(runtime.threads());
    clocks.begin_iteration();
    std::uint64_t round = 0;
    const auto compute = [&](int slice, comm::RingProgress& in_flight) {
        std::vector<int> cols(static_cast<std::size_t>(options.cols_per_slice));
        std::iota(cols.begin(), cols.end(), slice * options.cols_per_slice);
        scheduler.reset_columns(cols);
        const sched::BlockKernel kernel = model.kernel_for(slice);
        sched::DynamicLoopOptions loop;
        loop.pick_seed = options.pick_seed;
        loop.pick_seed.push_back(round++);
        // A timer stops the round: the kernels end between units, the blocks stay not done and
        // their other units wait for a later visit.
        loop.budget_s = options.budget_s;
        loop.straggler_factor = options.straggler_factor;
        loop.record = options.record;
        loop.origin = options.origin;
        if (in_flight.active()) {
            // MPI progresses only inside MPI calls, and only this thread may call MPI: the
            // workers run under a helper thread while this one polls the rotation in flight.
            loop.poll = [&in_flight, arrived = false]() mutable {
                if (!arrived) arrived = in_flight();
            };
            loop.poll_period = kProgressPeriod;
        }
        sched::LoopResult result = sched::run_dynamic_loop(runtime, scheduler, loop, kernel);
        out.compute_s += result.times.wall_s;
        for (std::size_t w = 0; w < result.units.size(); ++w) out.units[w] += result.units[w];
        clocks.add(result.times);
        out.events.insert(out.events.end(), std::make_move_iterator(result.events.begin()),
                          std::make_move_iterator(result.events.end()));
    };
    comm::RingPipeline ring(comm);
    out.ring = ring.run({.compute = compute, .pack = model.pack, .unpack = model.unpack});
    out.times = clocks.end_iteration();
    return out;
}

}  // namespace rotor::train
