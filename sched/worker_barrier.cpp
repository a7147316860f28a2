#include "sched/worker_barrier.h"

#include <chrono>

#include "core/base/error.h"

namespace rotor::sched {
namespace {

/// How long a waiter spins (pause instructions) before it sleeps in atomic::wait. Measured in
/// time, not in pauses: a pause takes 9 ns on the machine of docs/BENCHMARKS.md (more on others),
/// so 2^10 pauses were 10 µs there and nearly every meeting of a Lasso round slept (258 sleeps in
/// ~250 meetings an iteration). No yields in between: on a machine shared with other work, each
/// yield can hand the core to another process for a whole time slice, while a sleeper is woken
/// by its partner's arrival (the benchmark log,
/// `git show b26f669:docs/BENCHMARKS.md`, Lasso, "One region a pass").
constexpr auto kSpinFor = std::chrono::microseconds(100);

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
    const auto until = std::chrono::steady_clock::now() + kSpinFor;
    for (std::uint32_t spin = 1; generation_.load(std::memory_order_acquire) == gen; ++spin) {
        if (spin % 64 != 0 || std::chrono::steady_clock::now() < until) {
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
