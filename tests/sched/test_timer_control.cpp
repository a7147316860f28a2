#include "sched/timer_control.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/base/error.h"

namespace rotor::sched {
namespace {

TEST(TimerControl, DoublesHalvesOrKeeps) {
    TimerParams p;
    p.initial_s = 2.0;
    TimerControl t(p);
    EXPECT_DOUBLE_EQ(t.budget(), 2.0);
    EXPECT_DOUBLE_EQ(t.update(0.1), 4.0);  // R < 0.4
    EXPECT_DOUBLE_EQ(t.update(0.39), 8.0);
    EXPECT_DOUBLE_EQ(t.update(0.4), 8.0);  // boundaries keep the budget
    EXPECT_DOUBLE_EQ(t.update(0.6), 8.0);
    EXPECT_DOUBLE_EQ(t.update(0.8), 8.0);
    EXPECT_DOUBLE_EQ(t.update(0.81), 4.0);  // R > 0.8
    EXPECT_DOUBLE_EQ(t.update(1.0), 2.0);
}

TEST(TimerControl, ClampsToBounds) {
    TimerParams p;
    p.initial_s = 1.0;
    p.min_s = 0.25;
    p.max_s = 3.0;
    TimerControl t(p);
    EXPECT_DOUBLE_EQ(t.update(1.0), 0.5);
    EXPECT_DOUBLE_EQ(t.update(1.0), 0.25);
    EXPECT_DOUBLE_EQ(t.update(1.0), 0.25);
    EXPECT_DOUBLE_EQ(t.update(0.0), 0.5);
    EXPECT_DOUBLE_EQ(t.update(0.0), 1.0);
    EXPECT_DOUBLE_EQ(t.update(0.0), 2.0);
    EXPECT_DOUBLE_EQ(t.update(0.0), 3.0);
}

TEST(TimerControl, ValidateNamesTheKey) {
    auto key_of = [](TimerParams p) {
        try {
            p.validate();
        } catch (const ConfigError& e) {
            return e.key();
        }
        return std::string();
    };
    TimerParams p;
    EXPECT_EQ(key_of(p), "");
    p.low = 0.9;
    EXPECT_EQ(key_of(p), "timer.high");
    p = {};
    p.low = 0;
    EXPECT_EQ(key_of(p), "timer.low");
    p = {};
    p.initial_s = -1;
    EXPECT_EQ(key_of(p), "timer.initial_s");
    p = {};
    p.max_s = 1e-4;
    EXPECT_EQ(key_of(p), "timer.max_s");
    TimerControl t(TimerParams{});
    EXPECT_THROW(t.update(1.5), ConfigError);
    EXPECT_THROW(t.update(-0.1), ConfigError);
}

TEST(StopFlag, SeenByAnotherThread) {
    StopFlag flag;
    EXPECT_FALSE(flag.requested());
    std::atomic<long> spins{0};
    std::thread worker([&] {
        while (!flag.requested()) spins.fetch_add(1, std::memory_order_relaxed);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    flag.request();
    worker.join();
    EXPECT_TRUE(flag.requested());
    flag.clear();
    EXPECT_FALSE(flag.requested());
}

TEST(TimerControl, ResetClampsTheBudget) {
    TimerControl t({.initial_s = 1.0, .low = 0.4, .high = 0.8, .min_s = 0.01, .max_s = 10});
    EXPECT_EQ(t.reset(0.25), 0.25);
    EXPECT_EQ(t.budget(), 0.25);
    EXPECT_EQ(t.update(0.9), 0.125);  // the rule goes on from the reset budget
    EXPECT_EQ(t.reset(1e-6), 0.01);
    EXPECT_EQ(t.reset(1e6), 10.0);
}

TEST(BudgetForRatio, SolvesForTheProcessedRatio) {
    // Equal ranks: 1,000 units each at 100 units/s over 4 rounds: a round's work takes 2.5 s, so
    // half of it processes half.
    const std::vector<std::uint64_t> even{1000, 1000};
    EXPECT_NEAR(budget_for_ratio(even, std::vector<double>{100, 100}, 4, 0.5), 1.25, 1e-9);
    EXPECT_NEAR(budget_for_ratio(even, std::vector<double>{100, 100}, 4, 1.0), 2.5, 1e-9);
    // A rank 4x slower: at budget b the fast rank processes min(400b, 1000), the slow one 100b;
    // 60% of 2,000 = 1,200 = 500b until the fast rank is done at b = 2.5.
    EXPECT_NEAR(budget_for_ratio(even, std::vector<double>{100, 25}, 4, 0.6), 2.4, 1e-9);
    // 80% = 1,600: the fast rank done (1,000) and the slow one 600 = 100b: b = 6.
    EXPECT_NEAR(budget_for_ratio(even, std::vector<double>{100, 25}, 4, 0.8), 6.0, 1e-9);
    // Nothing to measure: 0.
    EXPECT_EQ(budget_for_ratio(even, std::vector<double>{100, 0}, 4, 0.5), 0.0);
    EXPECT_EQ(budget_for_ratio(std::vector<std::uint64_t>{0, 0}, std::vector<double>{1, 1}, 4, 0.5),
              0.0);
    EXPECT_THROW(budget_for_ratio(even, std::vector<double>{1}, 4, 0.5), ConfigError);
    EXPECT_THROW(budget_for_ratio(even, std::vector<double>{1, 1}, 0, 0.5), ConfigError);
    EXPECT_THROW(budget_for_ratio(even, std::vector<double>{1, 1}, 4, 0.0), ConfigError);
}

TEST(StopTimer, FiresAfterItsDelay) {
    StopFlag flag;
    const auto start = std::chrono::steady_clock::now();
    StopTimer timer(0.03, [&] { flag.request(); });
    while (!flag.requested()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(30));
    EXPECT_TRUE(timer.cancel());
}

TEST(StopTimer, CancelPreventsFiring) {
    StopFlag flag;
    {
        StopTimer timer(10.0, [&] { flag.request(); });
        EXPECT_FALSE(timer.cancel());
    }
    EXPECT_FALSE(flag.requested());
}

}  // namespace
}  // namespace rotor::sched
