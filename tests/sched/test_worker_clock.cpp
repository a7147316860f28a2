#include "sched/worker_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace rotor::sched {
namespace {

TEST(WorkerClock, SummarizeFormulas) {
    // compute {1, 3}, wall 4: effective = 4 / (2 * 4); mean 2, std 1; overhead mean(0.75, 0.25).
    const std::vector<double> compute{1.0, 3.0};
    const std::vector<double> wait{0.5, 0.0};
    const IterationTimes t = summarize_times(compute, wait, 4.0);
    EXPECT_DOUBLE_EQ(t.effective_ratio, 0.5);
    EXPECT_DOUBLE_EQ(t.load_cv, 0.5);
    EXPECT_DOUBLE_EQ(t.overhead_ratio, 0.5);
    EXPECT_EQ(t.other_s, (std::vector<double>{2.5, 1.0}));
}

TEST(WorkerClock, BalancedAndIdle) {
    const std::vector<double> same{2.0, 2.0, 2.0};
    const std::vector<double> none{0.0, 0.0, 0.0};
    const IterationTimes t = summarize_times(same, none, 2.0);
    EXPECT_DOUBLE_EQ(t.effective_ratio, 1.0);
    EXPECT_DOUBLE_EQ(t.load_cv, 0.0);
    EXPECT_DOUBLE_EQ(t.overhead_ratio, 0.0);
    const IterationTimes idle = summarize_times(none, same, 2.0);
    EXPECT_DOUBLE_EQ(idle.effective_ratio, 0.0);
    EXPECT_DOUBLE_EQ(idle.load_cv, 0.0);
    EXPECT_DOUBLE_EQ(idle.overhead_ratio, 1.0);
}

TEST(WorkerClock, AddsEachRoundsTimesToItsWorker) {
    WorkerClocks clocks(2);
    clocks.begin_iteration();
    for (int round = 0; round < 2; ++round)
        clocks.add(
            summarize_times(std::vector<double>{1.0, 2.0}, std::vector<double>{0.5, 0.25}, 3.0));
    EXPECT_DOUBLE_EQ(clocks.clock(0).compute_s, 2.0);
    EXPECT_DOUBLE_EQ(clocks.clock(1).compute_s, 4.0);
    EXPECT_DOUBLE_EQ(clocks.clock(0).wait_s, 1.0);
    EXPECT_DOUBLE_EQ(clocks.clock(1).wait_s, 0.5);
}

TEST(WorkerClock, ThreadsAccumulateTheirOwnClocks) {
    WorkerClocks clocks(2);
    clocks.begin_iteration();
    std::vector<std::thread> threads;
    for (int w = 0; w < 2; ++w) {
        threads.emplace_back([&clocks, w] {
            WorkerClock& c = clocks.clock(w);
            {
                PhaseTimer t(c, Phase::kCompute);
                std::this_thread::sleep_for(std::chrono::milliseconds(20 * (w + 1)));
            }
            PhaseTimer t(c, Phase::kWait);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        });
    }
    for (auto& t : threads) t.join();
    const IterationTimes t = clocks.end_iteration();
    EXPECT_GE(t.compute_s[0], 0.020);
    EXPECT_GE(t.compute_s[1], 0.040);
    EXPECT_GE(t.wait_s[0], 0.005);
    EXPECT_GE(t.wall_s, t.compute_s[1] + t.wait_s[1]);
    EXPECT_GT(t.load_cv, 0.0);
    EXPECT_GT(t.effective_ratio, 0.0);
    EXPECT_LE(t.effective_ratio, 1.0);
    clocks.begin_iteration();
    EXPECT_EQ(clocks.clock(1).compute_s, 0.0);
}

}  // namespace
}  // namespace rotor::sched
