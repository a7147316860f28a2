// Throughput of BlockScheduler::acquire/release under contention: P threads share one scheduler
// with L = ceil(sqrt(2) P) and hold each block for no time (the worst case for the lock).
// Blocks are released as not completed so the round never ends; items/s counts acquire+release
// pairs over all threads.
#include <benchmark/benchmark.h>

#include <memory>

#include "sched/block_grid.h"
#include "sched/block_scheduler.h"

namespace rotor::sched {
namespace {

std::unique_ptr<BlockScheduler> g_scheduler;

void BM_AcquireRelease(benchmark::State& state) {
    if (state.thread_index() == 0) {
        g_scheduler = std::make_unique<BlockScheduler>(default_grid_side(state.threads()));
        g_scheduler->reset();
    }
    // Google Benchmark starts the timed loop of all threads together, after this setup.
    Rng rng = Rng::from({7, static_cast<std::uint64_t>(state.thread_index())});
    for (auto _ : state) {
        auto b = g_scheduler->acquire(rng);
        benchmark::DoNotOptimize(b);
        g_scheduler->release(*b, false);
    }
    state.SetItemsProcessed(state.iterations());
    state.counters["L"] =
        benchmark::Counter(default_grid_side(state.threads()), benchmark::Counter::kAvgThreads);
}
BENCHMARK(BM_AcquireRelease)
    ->Threads(1)
    ->Threads(2)
    ->Threads(4)
    ->Threads(8)
    ->Threads(16)
    ->UseRealTime();

/// One full round on one thread: reset + L*L acquire/release pairs (the per-iteration cost).
void BM_FullRound(benchmark::State& state) {
    const int l = static_cast<int>(state.range(0));
    BlockScheduler s(l);
    Rng rng(1);
    for (auto _ : state) {
        s.reset();
        while (auto b = s.acquire(rng)) s.release(*b, true);
    }
    state.SetItemsProcessed(state.iterations() * l * l);
}
BENCHMARK(BM_FullRound)->Arg(3)->Arg(6)->Arg(12)->Arg(23)->Arg(46)->Arg(91);

}  // namespace
}  // namespace rotor::sched
