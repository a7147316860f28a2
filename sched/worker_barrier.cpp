#include "sched/worker_barrier.h"

#include "core/base/error.h"

namespace rotor::sched {
namespace {

/// Pauses (about 50 µs) before a waiter sleeps in atomic::wait. No yields in between: on a
/// machine shared with other work, each yield can hand the core to another process for a whole
/// time slice, while a sleeper is woken by its partner's arrival (docs/BENCHMARKS.md, Lasso,
/// "One region a pass", has the runs with and without yields).
constexpr int kSpins = 1 << 10;

inline void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

}  // namespace

WorkerBarrier::WorkerBarrier(int parties) : parties_(parties) {
    if (parties < 1) throw ConfigError("parties", "a barrier needs at least one party");
}

bool WorkerBarrier::arrive_and_wait() noexcept {
    if (broken()) return false;
    const std::uint32_t gen = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
        // The last arrival: nobody else touches arrived_ until the generation moves on.
        arrived_.store(0, std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_release);
        generation_.notify_all();
        return !broken();
    }
    for (int spin = 0; generation_.load(std::memory_order_acquire) == gen; ++spin) {
        if (spin < kSpins) {
            pause();
        } else {
            sleeps_.fetch_add(1, std::memory_order_relaxed);
            generation_.wait(gen, std::memory_order_acquire);
        }
    }
    return !broken();
}

void WorkerBarrier::break_barrier() noexcept {
    broken_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
}

}  // namespace rotor::sched
