#include "sched/runtime.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "core/base/error.h"
#include "sched/block_grid.h"
#include "sched/block_scheduler.h"

namespace rotor::sched {
namespace {

using namespace std::chrono_literals;

/// Spins until `count` reaches `target` or 5 s pass; true when reached. Proves that `target`
/// workers were running at the same time.
bool rendezvous(std::atomic<int>& count, int target) {
    count.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (count.load() < target) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::yield();
    }
    return true;
}

class RuntimeThreads : public ::testing::TestWithParam<int> {};

TEST_P(RuntimeThreads, RunsEveryWorkerConcurrentlyOnItsOwnThread) {
    const int p = GetParam();
    Runtime rt(p, PinMode::kNone);
    EXPECT_EQ(rt.threads(), p);
    for (int round = 0; round < 3; ++round) {
        std::vector<std::atomic<int>> calls(static_cast<std::size_t>(p));
        std::atomic<int> arrived{0};
        std::atomic<int> failed{0};
        rt.run_workers([&](int w) {
            ++calls[static_cast<std::size_t>(w)];
            if (!rendezvous(arrived, p)) ++failed;
        });
        EXPECT_EQ(failed.load(), 0) << "workers did not run concurrently";
        for (auto& c : calls) EXPECT_EQ(c.load(), 1);
        const auto runs = rt.last_runs();
        std::set<std::thread::id> threads;
        for (int w = 0; w < p; ++w) {
            EXPECT_EQ(runs[static_cast<std::size_t>(w)].worker, w);
            threads.insert(runs[static_cast<std::size_t>(w)].thread);
        }
        EXPECT_EQ(threads.size(), static_cast<std::size_t>(p));
        EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u) << "the caller ran a worker";
    }
}

INSTANTIATE_TEST_SUITE_P(Threads, RuntimeThreads, ::testing::Values(1, 2, 3, 4, 8));

TEST(Runtime, ExceptionsPropagateAfterAllWorkersFinish) {
    Runtime rt(4, PinMode::kNone);
    std::atomic<int> finished{0};
    try {
        rt.run_workers([&](int w) {
            if (w == 2) throw InputError("corpus.txt", 3, 1, "bad token");
            if (w == 3) throw ConfigError("k", "too small");
            std::this_thread::sleep_for(10ms);
            ++finished;
        });
        FAIL() << "no exception";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("corpus.txt:3:1"), std::string::npos);
    }
    EXPECT_EQ(finished.load(), 2);
    // The runtime stays usable.
    std::atomic<int> calls{0};
    rt.run_workers([&](int) { ++calls; });
    EXPECT_EQ(calls.load(), 4);
}

// kAuto pins only a run that fills the CPUs the calling thread may use; fewer workers are left
// to the OS, unbound (not every one on PU 0 as the compact plan would put them).
TEST(Runtime, AutoPinsOnlyWhenTheWorkersFillTheAllowedCpus) {
    cpu_set_t allowed;
    ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
    const int cpus = CPU_COUNT(&allowed);
    if (cpus < 2) GTEST_SKIP() << "one CPU allowed";
    {
        Runtime rt(1, PinMode::kAuto);
        EXPECT_EQ(rt.pin_mode(), PinMode::kNone);
        EXPECT_NE(rt.status().find("1 worker on " + std::to_string(cpus) + " allowed CPUs"),
                  std::string::npos)
            << rt.status();
        rt.run_workers([&](int) {
            cpu_set_t mine;
            ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
            EXPECT_EQ(CPU_COUNT(&mine), cpus);  // not bound to one PU
        });
    }
    Runtime full(cpus, PinMode::kAuto);
    EXPECT_NE(full.pin_mode(), PinMode::kAuto);  // resolved
    if (full.pin_mode() == PinMode::kNone)
        EXPECT_NE(full.status().find("pinning disabled"), std::string::npos) << full.status();
    else
        EXPECT_EQ(full.pin_mode(), PinMode::kPu) << full.status();
}

TEST(Runtime, PinsWorkersToTheirPus) {
    Runtime rt(2, PinMode::kPu);
    if (rt.pin_mode() != PinMode::kPu) GTEST_SKIP() << rt.status();
    EXPECT_NE(rt.status().find("pinned"), std::string::npos) << rt.status();
    std::vector<int> cpus(2, -1);
    for (int round = 0; round < 3; ++round) {
        std::atomic<int> arrived{0};
        rt.run_workers([&](int w) {
            // Both workers run at once, so they occupy two arena slots.
            if (!rendezvous(arrived, 2)) return;
            std::this_thread::sleep_for(2ms);  // give the kernel a chance to migrate us
            cpus[static_cast<std::size_t>(w)] = sched_getcpu();
        });
        ASSERT_EQ(arrived.load(), 2) << "workers did not run concurrently";
        std::set<int> pinned;
        for (const WorkerRun& r : rt.last_runs()) {
            ASSERT_GE(r.pinned_pu, 0) << "worker " << r.worker << " not pinned";
            EXPECT_EQ(r.cpu, r.pinned_pu);
            EXPECT_EQ(cpus[static_cast<std::size_t>(r.worker)], r.pinned_pu);
            pinned.insert(r.pinned_pu);
            // The PU belongs to the worker's planned NUMA node.
            EXPECT_EQ(r.numa_node,
                      rt.placement().slots[static_cast<std::size_t>(r.worker)].numa_node);
        }
        // Concurrent workers are pinned to different PUs of the plan.
        EXPECT_EQ(pinned.size(), 2u);
        for (int pu : pinned) {
            bool in_plan = false;
            for (const Slot& s : rt.placement().slots)
                in_plan |= static_cast<int>(s.pu_os_index) == pu;
            EXPECT_TRUE(in_plan) << pu;
        }
    }
    EXPECT_EQ(rt.pin_failures(), 0);
    EXPECT_GE(rt.pin_count(), 2);
}

TEST(Runtime, NumaNodeModeUsesConstraintsOrBinds) {
    Runtime rt(2, PinMode::kNumaNode);
    if (rt.pin_mode() == PinMode::kNone) GTEST_SKIP() << rt.status();
    EXPECT_NE(rt.status().find("NUMA nodes"), std::string::npos) << rt.status();
    std::atomic<int> calls{0};
    rt.run_workers([&](int) { ++calls; });
    EXPECT_EQ(calls.load(), 2);
}

TEST(Runtime, FallsBackWhenTheProcessIsRestricted) {
    cpu_set_t original;
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(original), &original), 0);
    if (CPU_COUNT(&original) < 2) GTEST_SKIP() << "needs two CPUs to restrict to one";
    int first = 0;
    while (!CPU_ISSET(first, &original)) ++first;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
    std::string status;
    PinMode mode = PinMode::kPu;
    {
        Runtime rt(2, PinMode::kPu);  // plans on all cores, like mpiexec --bind-to core would
        status = rt.status();
        mode = rt.pin_mode();
    }
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(original), &original), 0);
    EXPECT_EQ(mode, PinMode::kNone);
    EXPECT_NE(status.find("pinning disabled"), std::string::npos) << status;
}

TEST(Runtime, OneArenaPerNodeOfASyntheticPlan) {
    const Topology t = Topology::synthetic("package:2 numa:1 core:2 pu:1");
    Runtime rt(plan_placement(t, 4, Policy::kSpread), PinMode::kPu);
    EXPECT_EQ(rt.pin_mode(), PinMode::kNone);
    EXPECT_NE(rt.status().find("2 arenas"), std::string::npos) << rt.status();
    EXPECT_NE(rt.status().find("not planned on this machine"), std::string::npos) << rt.status();
    std::atomic<int> arrived{0};
    std::atomic<int> failed{0};
    rt.run_workers([&](int) {
        if (!rendezvous(arrived, 4)) ++failed;
    });
    EXPECT_EQ(failed.load(), 0);
    for (const WorkerRun& r : rt.last_runs()) {
        EXPECT_EQ(r.numa_node, r.worker % 2);  // spread: workers alternate nodes
        EXPECT_GE(r.arena_slot, 0);
        EXPECT_LT(r.arena_slot, 2);
        EXPECT_EQ(r.pinned_pu, -1);
    }
}

TEST(Runtime, ParallelForCoversTheRangeOnce) {
    const Topology t = Topology::synthetic("package:2 numa:1 core:2 pu:1");
    Runtime rt(plan_placement(t, 3), PinMode::kNone);
    constexpr std::int64_t kN = 100003;
    std::vector<std::atomic<int>> hits(kN);
    rt.parallel_for(0, kN, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t i = lo; i < hi; ++i) ++hits[static_cast<std::size_t>(i)];
    });
    for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
    rt.parallel_for(5, 5, [](std::int64_t, std::int64_t) { FAIL() << "empty range"; });
    EXPECT_THROW(rt.parallel_for(0, 1000,
                                 [](std::int64_t lo, std::int64_t hi) {
                                     if (lo <= 500 && 500 < hi) throw SystemError("boom");
                                 }),
                 SystemError);
}

TEST(Runtime, DrivesTheBlockSchedulerWithoutConflicts) {
    constexpr int kThreads = 3;
    Runtime rt(kThreads, PinMode::kPu);
    const int l = default_grid_side(kThreads);
    BlockScheduler s(l);
    std::vector<std::atomic<int>> row_busy(static_cast<std::size_t>(l));
    std::vector<std::atomic<int>> col_busy(static_cast<std::size_t>(l));
    std::vector<std::atomic<int>> done(static_cast<std::size_t>(l * l));
    std::atomic<int> violations{0};
    for (int it = 0; it < 10; ++it) {
        s.reset();
        rt.run_workers([&](int w) {
            Rng rng = Rng::from({1, static_cast<std::uint64_t>(it), static_cast<std::uint64_t>(w)});
            while (auto b = s.acquire(rng, w)) {
                if (row_busy[static_cast<std::size_t>(b->row)].fetch_add(1) != 0) ++violations;
                if (col_busy[static_cast<std::size_t>(b->col)].fetch_add(1) != 0) ++violations;
                std::this_thread::sleep_for(std::chrono::microseconds(rng.below(50)));
                ++done[static_cast<std::size_t>(b->row * l + b->col)];
                row_busy[static_cast<std::size_t>(b->row)].fetch_sub(1);
                col_busy[static_cast<std::size_t>(b->col)].fetch_sub(1);
                s.release(*b, true);
            }
        });
    }
    EXPECT_EQ(violations.load(), 0);
    for (const auto& d : done) EXPECT_EQ(d.load(), 10);
}

}  // namespace
}  // namespace rotor::sched
