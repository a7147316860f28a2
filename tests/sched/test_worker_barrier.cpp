// The workers' barrier on plain std::threads, so that ThreadSanitizer sees every synchronization.
#include "sched/worker_barrier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/base/error.h"

namespace rotor::sched {
namespace {

using namespace std::chrono_literals;

TEST(WorkerBarrier, RejectsNoParties) {
    EXPECT_THROW(WorkerBarrier(0), ConfigError);
    EXPECT_THROW(WorkerBarrier(-2), ConfigError);
}

TEST(WorkerBarrier, OnePartyNeverWaits) {
    WorkerBarrier b(1);
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(b.arrive_and_wait());
    EXPECT_EQ(b.parties(), 1);
    EXPECT_EQ(b.sleeps(), 0u);
}

// Phases: in phase k every thread writes its own slot (plain, non-atomic writes), meets the
// others, and reads every slot: each must hold phase k's value. A second barrier keeps the next
// phase's writes from overtaking the reads.
TEST(WorkerBarrier, EveryWriteBeforeAnArrivalIsSeenAfterIt) {
    constexpr int kThreads = 3;
    constexpr int kPhases = 300;
    WorkerBarrier b(kThreads);
    std::vector<int> slots(kThreads, -1);
    std::atomic<int> mismatches{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t) {
        pool.emplace_back([&, t] {
            for (int k = 0; k < kPhases; ++k) {
                slots[static_cast<std::size_t>(t)] = k * kThreads + t;
                ASSERT_TRUE(b.arrive_and_wait());
                for (int u = 0; u < kThreads; ++u) {
                    if (slots[static_cast<std::size_t>(u)] != k * kThreads + u) ++mismatches;
                }
                ASSERT_TRUE(b.arrive_and_wait());
            }
        });
    }
    for (auto& th : pool) th.join();
    EXPECT_EQ(mismatches.load(), 0);
    EXPECT_FALSE(b.broken());
}

// A late partner (longer than the spinning and yielding) puts the waiter to sleep; it still
// wakes when the partner arrives.
TEST(WorkerBarrier, ALatePartnerWakesASleeper) {
    WorkerBarrier b(2);
    std::thread late([&] {
        std::this_thread::sleep_for(200ms);
        EXPECT_TRUE(b.arrive_and_wait());
    });
    EXPECT_TRUE(b.arrive_and_wait());
    late.join();
    EXPECT_GE(b.sleeps(), 1u);
}

// A failing worker breaks the barrier: the waiters return false, and so does every later wait.
TEST(WorkerBarrier, BreakingReleasesEveryWaiter) {
    constexpr int kThreads = 3;
    WorkerBarrier b(kThreads + 1);  // one party never arrives
    std::atomic<int> released{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t) {
        pool.emplace_back([&] {
            if (!b.arrive_and_wait()) ++released;
        });
    }
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(released.load(), 0);
    b.break_barrier();
    for (auto& th : pool) th.join();
    EXPECT_EQ(released.load(), kThreads);
    EXPECT_TRUE(b.broken());
    EXPECT_FALSE(b.arrive_and_wait());
}

}  // namespace
}  // namespace rotor::sched
