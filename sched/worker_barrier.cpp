#include "sched/worker_barrier.h"

#include <thread>

#include "core/base/error.h"

namespace rotor::sched {
namespace {

constexpr int kSpins = 1 << 10;  // pauses (about 50 µs), then
constexpr int kYields = 1 << 8;  // yields, then a sleep in atomic::wait

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
        } else if (spin < kSpins + kYields) {
            std::this_thread::yield();
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
