#include "train/ring_iteration.h"

#include <chrono>
#include <iterator>
#include <numeric>

namespace rotor::train {
namespace {

/// How often the driving thread lets MPI progress a rotation while the workers compute.
constexpr auto kProgressPeriod = std::chrono::microseconds(500);

}  // namespace

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
