// The worker team on the oneTBB runtime (run under ThreadSanitizer, label tsan): every share of
// every step runs once, a step sees everything the previous one wrote, failures stop the call,
// and a worker held off its core steps aside while the call still completes.
#include "sched/team.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/base/error.h"

namespace rotor::sched {
namespace {

using namespace std::chrono_literals;

// Every share of every step runs once, on 1..3 workers.
TEST(Team, EveryShareOfEveryStepRunsOnce) {
    for (const int threads : {1, 2, 3}) {
        Runtime rt(threads, PinMode::kNone);
        Team team(rt);
        ASSERT_EQ(team.size(), threads);
        constexpr std::size_t kSteps = 400;
        std::vector<std::atomic<int>> runs(kSteps * static_cast<std::size_t>(threads));
        const TeamRun r = team.run_steps(kSteps, [&](std::size_t step, int share) {
            ++runs[step * static_cast<std::size_t>(threads) + static_cast<std::size_t>(share)];
        });
        for (const auto& n : runs) ASSERT_EQ(n.load(), 1);
        EXPECT_EQ(r.wait_s.size(), static_cast<std::size_t>(threads));
        // One worker: the calling thread runs it all. Several: a new team's first call hands
        // off (nothing measured yet).
        EXPECT_EQ(r.solo, threads == 1);
        EXPECT_EQ(r.by_caller, threads == 1 ? kSteps : 0u);
    }
}

// Steps alternate: one writes its share's slot (plain writes), the next reads every slot. A step
// starts only after the previous one, and sees all of its writes.
TEST(Team, WritesOfAStepAreSeenByTheNext) {
    constexpr int kThreads = 3;
    Runtime rt(kThreads, PinMode::kNone);
    Team team(rt);
    std::vector<std::size_t> slots(kThreads, 0);
    std::atomic<int> mismatches{0};
    constexpr std::size_t kSteps = 600;
    team.run_steps(kSteps, [&](std::size_t step, int share) {
        if (step % 2 == 0) {
            slots[static_cast<std::size_t>(share)] = step + static_cast<std::size_t>(share);
            return;
        }
        for (int u = 0; u < kThreads; ++u) {
            if (slots[static_cast<std::size_t>(u)] != step - 1 + static_cast<std::size_t>(u))
                ++mismatches;
        }
    });
    EXPECT_EQ(mismatches.load(), 0);
}

// run(): one step, the caller taking shares too; many calls in a row.
TEST(Team, RunCoversEveryShareOnceAndTheCallerHelps) {
    constexpr int kThreads = 2;
    Runtime rt(kThreads, PinMode::kNone);
    Team team(rt);
    std::vector<int> counts(kThreads, 0);  // plain: each share is one writer per call
    std::uint64_t by_caller = 0;
    constexpr int kCalls = 300;
    for (int call = 0; call < kCalls; ++call) {
        const TeamRun r = team.run([&](int share) { ++counts[static_cast<std::size_t>(share)]; });
        by_caller += r.by_caller;
    }
    for (const int c : counts) EXPECT_EQ(c, kCalls);
    EXPECT_LE(by_caller, static_cast<std::uint64_t>(kCalls * kThreads));
}

// A share that throws: the call rethrows the lowest (step, share)'s exception once every share
// running has returned, and no later step starts.
TEST(Team, AFailureStopsTheCallAndIsRethrown) {
    constexpr int kThreads = 2;
    Runtime rt(kThreads, PinMode::kNone);
    Team team(rt);
    std::atomic<int> after{0};
    try {
        team.run_steps(10, [&](std::size_t step, int share) {
            if (step > 3) ++after;
            if (step == 3 && share == 1) throw InputError("x", "share 1 of step 3");
            if (step == 3 && share == 0) throw SystemError("share 0 of step 3");
        });
        FAIL() << "no exception";
    } catch (const SystemError& e) {
        EXPECT_NE(std::string(e.what()).find("share 0 of step 3"), std::string::npos);
    }
    EXPECT_EQ(after.load(), 0);
    EXPECT_THROW(team.run([](int share) {
        if (share == 1) throw InputError("x", "run");
    }),
                 InputError);
    // The team is usable after a failure.
    std::atomic<int> n{0};
    team.run_steps(5, [&](std::size_t, int) { ++n; });
    EXPECT_EQ(n.load(), 5 * kThreads);
}

// A share that keeps its thread off the CPU (here: asleep, as a descheduled thread would be)
// while its teammate blocks waiting for it: that worker steps aside, the other takes every share,
// and the call completes. The last worker never steps aside.
TEST(Team, AWorkerHeldOffItsCoreStepsAside) {
    constexpr int kThreads = 2;
    Runtime rt(kThreads, PinMode::kNone);
    Team team(rt);
    std::atomic<int> runs{0};
    const TeamRun r = team.run_steps(12, [&](std::size_t step, int share) {
        if (step < 6 && share == 1) std::this_thread::sleep_for(5ms);
        ++runs;
    });
    EXPECT_EQ(runs.load(), 12 * kThreads);
    EXPECT_GE(r.sleeps, 1u);
    EXPECT_EQ(r.benched, 1u);
    EXPECT_EQ(team.benched(), 1u);
    // run(): the caller takes the shares the worker standing aside leaves.
    std::atomic<int> run_shares{0};
    team.run([&](int) { ++run_shares; });
    EXPECT_EQ(run_shares.load(), kThreads);
}

// Steps that do next to nothing: the hand-offs cost more than they buy, so once a window of
// calls is measured the calling thread runs them alone (every share still once), for
// Team::kSoloFor; then one call hands off again (a new window), and a second window in a row
// that does not pay sends the team alone again.
TEST(Team, HandOffsThatDoNotPayGoSoloAndAreTriedAgain) {
    constexpr int kThreads = 2;
    Runtime rt(kThreads, PinMode::kNone);
    Team team(rt);
    std::vector<int> counts(kThreads, 0);            // plain: one writer per share and call
    std::chrono::steady_clock::duration longest{0};  // the longest call
    const auto calls_until_solo = [&] {
        int calls = 0;
        const auto give_up = std::chrono::steady_clock::now() + 10s;
        for (;;) {
            ++calls;
            const auto start = std::chrono::steady_clock::now();
            const TeamRun r = team.run_steps(
                3, [&](std::size_t, int share) { ++counts[static_cast<std::size_t>(share)]; });
            longest = std::max(longest, std::chrono::steady_clock::now() - start);
            if (r.solo) {
                EXPECT_EQ(r.by_caller, 3u * kThreads);
                return calls;
            }
            if (std::chrono::steady_clock::now() > give_up) return -1;
        }
    };
    const int first = calls_until_solo();
    ASSERT_GT(first, 1);  // the first call of a team hands off
    EXPECT_EQ(team.unpaid_windows(), 1u);
    // Alone for kSoloFor: the next calls too.
    const auto solo_start = std::chrono::steady_clock::now();
    const TeamRun alone = team.run([&](int share) { ++counts[static_cast<std::size_t>(share)]; });
    if (std::chrono::steady_clock::now() - solo_start < Team::kSoloFor / 2) {
        EXPECT_TRUE(alone.solo);
    }
    // Alone for kSoloFor, or for Team::kSoloCalls of the window's calls when they were slow (a
    // loaded machine): the longest call bounds their mean.
    std::this_thread::sleep_for(
        std::max<std::chrono::steady_clock::duration>(Team::kSoloFor, Team::kSoloCalls * longest) +
        20ms);
    const int second = calls_until_solo();
    ASSERT_GT(second, 1);  // tried again: the workers took the first call after the time alone
    EXPECT_EQ(team.unpaid_windows(), 2u);
    const int calls = first + 1 + second;
    for (const int c : counts) EXPECT_EQ(c, 3 * calls - 2);  // run() is one step, not three
    EXPECT_GE(team.solo_calls(), 3u);
}

// A window of long calls that do not pay (shares that sleep: no work) sends the team alone for
// at least Team::kSoloCalls of those calls, not for kSoloFor: a probe every kSoloFor would hand
// off every other long call.
TEST(Team, AloneAfterLongCallsForSeveralOfThem) {
    Runtime rt(2, PinMode::kNone);
    Team team(rt);
    constexpr auto kNap = 25ms;  // a call of at least 25 ms: a window (Team::kWindow) by itself
    static_assert(kNap >= Team::kWindow && Team::kSoloCalls * kNap > 2 * Team::kSoloFor);
    const TeamRun first =
        team.run_steps(1, [&](std::size_t, int) { std::this_thread::sleep_for(kNap); });
    ASSERT_FALSE(first.solo);
    EXPECT_EQ(team.unpaid_windows(), 1u);
    std::this_thread::sleep_for(Team::kSoloFor + 50ms);  // past kSoloFor, within 16 calls' time
    int shares = 0;  // plain: alone, only the calling thread runs them
    const TeamRun later = team.run_steps(1, [&](std::size_t, int) { ++shares; });
    EXPECT_TRUE(later.solo);
    EXPECT_EQ(shares, 2);
}

// run(body, alone): while the team hands off, body runs for every share and alone never; while
// it runs alone (stay_alone_for, or a team of one worker), the calling thread runs alone() once
// and body for no share.
TEST(Team, AloneRunsTheStepAsOneShareWhileTheTeamIsAlone) {
    for (const int threads : {1, 2, 3}) {
        Runtime rt(threads, PinMode::kNone);
        Team team(rt);
        std::vector<std::atomic<int>> counts(static_cast<std::size_t>(threads));
        int alone = 0;  // plain: only the calling thread runs alone()
        const std::thread::id caller = std::this_thread::get_id();
        const auto call = [&] {
            return team.run([&](int share) { ++counts[static_cast<std::size_t>(share)]; },
                            [&] {
                                EXPECT_EQ(std::this_thread::get_id(), caller);
                                ++alone;
                            });
        };
        const TeamRun handed = call();  // a new team's first call: no worker stands aside
        if (threads == 1) {
            EXPECT_TRUE(handed.solo);
            EXPECT_EQ(alone, 1);
            EXPECT_EQ(counts[0].load(), 0);
            continue;
        }
        EXPECT_FALSE(handed.solo);
        EXPECT_EQ(alone, 0);
        for (const auto& c : counts) EXPECT_EQ(c.load(), 1);
        team.stay_alone_for(std::chrono::hours(1));
        for (int i = 0; i < 3; ++i) {
            const TeamRun r = call();
            EXPECT_TRUE(r.solo);
            EXPECT_EQ(r.by_caller, static_cast<std::uint64_t>(threads));
        }
        EXPECT_EQ(alone, 3);
        for (const auto& c : counts) EXPECT_EQ(c.load(), 1);
        EXPECT_GE(team.solo_calls(), 3u);
        // Handed off again (unless a worker stepped aside meanwhile, on a loaded machine).
        team.stay_alone_for(std::chrono::seconds(0));
        const bool solo = call().solo;
        EXPECT_EQ(alone, solo ? 4 : 3);
        for (const auto& c : counts) EXPECT_EQ(c.load(), solo ? 1 : 2);
    }
}

}  // namespace
}  // namespace rotor::sched
