// The common train flags: registered once, parsed into the struct, with the resolved values.
#include "train/common_flags.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <thread>
#include <vector>

#include "core/base/error.h"
#include "sched/block_grid.h"

namespace rotor::train {
namespace {

void parse(CLI::App& app, std::vector<std::string> args) {
    std::reverse(args.begin(), args.end());
    app.parse(args);
}

TEST(CommonFlags, ParsesAndResolves) {
    CLI::App app;
    CommonTrainFlags f;
    f.iterations = 30;
    add_common_train_flags(app, f, "epochs");
    parse(app, {"--out", "m", "-n", "50", "--threads", "3", "--seed", "9", "--checkpoint-every",
                "5", "--quiet", "--no-pin", "--eval-every", "2"});
    EXPECT_EQ(f.out, "m");
    EXPECT_EQ(f.iterations, 50u);
    EXPECT_TRUE(f.iterations_set);
    EXPECT_EQ(f.resolved_threads(), 3);
    EXPECT_EQ(f.seed, 9u);
    EXPECT_EQ(f.eval_every, 2u);
    EXPECT_TRUE(f.quiet);
    EXPECT_EQ(f.pin_mode(), sched::PinMode::kNone);
    EXPECT_EQ(f.resolved_checkpoint_dir(), "m.checkpoint");
    EXPECT_NE(app.help().find("Number of epochs in all"), std::string::npos);
}

TEST(CommonFlags, DefaultsAndErrors) {
    CLI::App app;
    CommonTrainFlags f;
    add_common_train_flags(app, f);
    parse(app, {"--out", "m"});
    EXPECT_FALSE(f.iterations_set);
    EXPECT_EQ(f.iterations, 100u);
    EXPECT_EQ(f.pin_mode(), sched::PinMode::kAuto);
    EXPECT_EQ(f.resolved_checkpoint_dir(), "");  // no checkpoints
    EXPECT_EQ(f.resolved_threads(),
              std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
    f.threads = -1;
    EXPECT_THROW(f.resolved_threads(), ConfigError);
    CLI::App missing;
    CommonTrainFlags g;
    add_common_train_flags(missing, g);
    EXPECT_THROW(parse(missing, {"--threads", "2"}), CLI::RequiredError);
}

}  // namespace
}  // namespace rotor::train

namespace rotor::train {
namespace {

TEST(CommonFlags, WarnsWhenThreadsExceedTheProcessors) {
    const int cpus = sched::available_cpus();
    EXPECT_EQ(CommonTrainFlags::oversubscription_warning(cpus), "");
    EXPECT_EQ(CommonTrainFlags::oversubscription_warning(1), "");
    const std::string w = CommonTrainFlags::oversubscription_warning(cpus + 1);
    EXPECT_EQ(w.rfind("rotor: warning: " + std::to_string(cpus + 1) + " worker threads on " +
                          std::to_string(cpus) + " processor",
                      0),
              0u)
        << w;
    const std::string ranks = CommonTrainFlags::oversubscription_warning(cpus, 2);
    if (cpus == static_cast<int>(std::thread::hardware_concurrency())) {
        EXPECT_NE(ranks.find("(2 ranks on this host)"), std::string::npos) << ranks;
    }
}

TEST(CommonFlags, RanksBoundToTheirOwnCoresCountOnlyTheirThreads) {
    // Two ranks on a 2-processor host, unbound: each sees both processors, and 2 threads each
    // are 4 workers on 2.
    EXPECT_EQ(CommonTrainFlags::oversubscription_warning(1, 2, 2, 2), "");
    const std::string shared = CommonTrainFlags::oversubscription_warning(2, 2, 2, 2);
    EXPECT_EQ(shared.rfind("rotor: warning: 4 worker threads (2 ranks on this host) on 2 "
                           "processors",
                           0),
              0u)
        << shared;
    // mpiexec bound each rank to one core: one thread each is right, two take turns.
    EXPECT_EQ(CommonTrainFlags::oversubscription_warning(1, 2, 1, 2), "");
    const std::string bound = CommonTrainFlags::oversubscription_warning(2, 2, 1, 2);
    EXPECT_EQ(bound.rfind("rotor: warning: 2 worker threads on 1 processor:", 0), 0u) << bound;
    EXPECT_NE(bound.find("no faster than --threads 1"), std::string::npos) << bound;
}

TEST(CommonFlags, EveryRankMustHaveWork) {
    EXPECT_NO_THROW(check_work_per_rank(3, 3, "documents"));
    EXPECT_NO_THROW(check_work_per_rank(0, 3, "documents"));  // empty: refused elsewhere
    EXPECT_NO_THROW(check_work_per_rank(1, 1, "documents"));
    try {
        check_work_per_rank(2, 3, "documents");
        FAIL() << "accepted";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "mpiexec -n");
        EXPECT_EQ(std::string(e.what()),
                  "mpiexec -n: 3 ranks share 2 documents: a rank would have none; run at most 2 "
                  "ranks");
    }
}

TEST(CommonFlags, AbsolutePathIsNormal) {
    EXPECT_EQ(absolute_path("/a/./b/../c"), "/a/c");
    EXPECT_EQ(absolute_path("x/y"), (std::filesystem::current_path() / "x/y").string());
}

}  // namespace
}  // namespace rotor::train
