// apps/rica: the trainer on in-process ranks and threads, and `rotor rica` through the binary.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "apps/rica/cli.h"
#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "core/io/whole_file.h"
#include "core/rica/model_file.h"
#include "tests/apps/mf/rotor_cli_util.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::rica {
namespace {

using apps::testing::run_rotor;
using rotor::testing::TempDir;

/// Observations with a sparse structure: n rows of dimension p, each a few random sources
/// mixed by a fixed matrix (what ICA finds), written as TSV.
std::string write_data(const TempDir& dir, const std::string& name, std::size_t n, std::size_t p,
                       std::uint64_t seed) {
    const std::vector<double> mix = initial_rows(seed, 0, p, p, 1);
    const std::vector<double> src = initial_rows(seed + 1, 0, n, p, 1);
    std::string text;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t k = 0; k < p; ++k) {
            double v = 0;
            for (std::size_t j = 0; j < p; ++j) {
                const double s = src[i * p + j];
                v += mix[k * p + j] * (std::fabs(s) > 1.2 ? s : 0.0);
            }
            text += fmt::format("{}{:.6g}", k == 0 ? "" : "\t", v);
        }
        text += '\n';
    }
    return dir.write(name, text);
}

/// A model file's text without its time_s line and CRC line (the training seconds differ from
/// run to run; everything else must be the same bytes).
std::string without_time(const std::string& text) {
    std::string out;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = text.find('\n', at);
        const std::string line = text.substr(at, end - at);
        if (!line.starts_with("time_s ") && !line.starts_with("crc32 ")) out += line + '\n';
        at = end == std::string::npos ? text.size() : end + 1;
    }
    return out;
}

class RicaTrain : public ::testing::Test {
  protected:
    void SetUp() override { data_ = write_data(dir_, "x.tsv", 300, 6, 7); }

    /// Trains on `ranks` in-process ranks; returns the model file's text.
    std::string train(int ranks, int servers, int threads, const std::string& delay,
                      const std::string& name, const std::string& solver = "prox",
                      std::size_t components = 10, const std::string& straggler = "") {
        comm::run_ranks(ranks, [&](comm::Communicator& c) {
            TrainFlags f;
            f.data = data_;
            f.out = dir_.file(name);
            f.quiet = true;
            f.servers = servers;
            f.delay = delay;
            f.solver = solver;
            f.iterations = 12;
            f.eval_every = 5;
            f.tol = 0;
            f.options.components = components;
            f.options.lambda = 0.5;
            f.options.block_rows = 3;
            f.options.threads = threads;
            f.straggler = straggler;
            run_train(f, c);
        });
        return without_time(core::read_whole_file(dir_.file(name)));
    }

    TempDir dir_;
    std::string data_;
};

TEST_F(RicaTrain, TheSameWForAnyThreadsWorkersAndServersAtDelayZero) {
    const std::string one = train(1, 0, 1, "0", "one.txt");
    EXPECT_EQ(train(1, 0, 2, "0", "threads.txt"), one);
    EXPECT_EQ(train(3, 1, 2, "0", "servers1.txt"), one);
    EXPECT_EQ(train(2, 0, 1, "0", "both.txt"), one);
    // A worker slowed 50×: its row blocks move to the other at segment boundaries, exactly.
    EXPECT_EQ(train(3, 1, 1, "0", "moved.txt", "prox", 10, "2:50"), one);
    const Model m = read_model(dir_.file("one.txt"));
    EXPECT_EQ(m.iterations, 12U);
    EXPECT_EQ(m.w.size(), 60U);
}

TEST_F(RicaTrain, OneWorkerAdmmIsTheSameForAnyThreadsAndDescends) {
    const std::string one = train(1, 0, 1, "0", "admm1.txt", "admm");
    EXPECT_EQ(train(1, 0, 2, "0", "admm2.txt", "admm"), one);
    EXPECT_EQ(train(2, 1, 2, "0", "admm-server.txt", "auto"), one);  // 1 worker: auto is admm
    // ℓp = 2400 spans two chunks of the W step's vectors (2048 entries): the team shares the
    // L-BFGS's passes too.
    const std::string wide = train(1, 0, 1, "0", "wide1.txt", "admm", 400);
    EXPECT_EQ(train(1, 0, 2, "0", "wide2.txt", "admm", 400), wide);
    train(1, 0, 1, "0", "prox.txt");  // the same 12 steps of the paper's solver
    EXPECT_LT(read_model(dir_.file("admm1.txt")).objective,
              read_model(dir_.file("prox.txt")).objective);
}

TEST_F(RicaTrain, DelayedPullsStillDescend) {
    train(1, 0, 1, "0", "start.txt");  // the objective after 12 steps at τ = 0
    const Model fresh = read_model(dir_.file("start.txt"));
    train(3, 1, 1, "2", "delayed.txt");
    const Model delayed = read_model(dir_.file("delayed.txt"));
    // W0's objective, from a run of no steps.
    comm::run_ranks(1, [&](comm::Communicator& c) {
        TrainFlags f;
        f.data = data_;
        f.out = dir_.file("zero.txt");
        f.quiet = true;
        f.iterations = 0;
        f.options.components = 10;
        f.options.lambda = 0.5;
        run_train(f, c);
    });
    const double start = read_model(dir_.file("zero.txt")).objective;
    EXPECT_LT(fresh.objective, start);
    EXPECT_LT(delayed.objective, start);
}

TEST(RicaRebalance, PlansContiguousBlocksBySpeed) {
    const std::vector<std::size_t> even{0, 4, 8};
    // Worker 1 at a quarter of worker 0's speed: 80% of the 128 rows (6.4 blocks of 16) to worker
    // 0.
    EXPECT_EQ(plan_blocks(even, std::vector<double>{4.0, 1.0}, 128, 16, 0.25),
              (std::vector<std::size_t>{0, 6, 8}));
    // Within the tolerance, or a speed unknown: no change.
    EXPECT_EQ(plan_blocks(even, std::vector<double>{1.1, 1.0}, 128, 16, 0.25), even);
    EXPECT_EQ(plan_blocks(even, std::vector<double>{1.0, 0.0}, 128, 16, 0.25), even);
    // Every worker keeps a block; the last block shorter (10 rows of 4 blocks of 3).
    EXPECT_EQ(plan_blocks(std::vector<std::size_t>{0, 1, 2, 4}, std::vector<double>{1, 1, 1000}, 10,
                          3, 0.25),
              (std::vector<std::size_t>{0, 1, 2, 4}));
    EXPECT_EQ(plan_blocks(std::vector<std::size_t>{0, 2, 3, 4}, std::vector<double>{1, 1, 1000}, 10,
                          3, 0.25),
              (std::vector<std::size_t>{0, 1, 2, 4}));
    // A row limit holds worker 0 at 64 rows.
    EXPECT_EQ(plan_blocks(even, std::vector<double>{4.0, 1.0}, 128, 16, 0.25, 64), even);
}

class RicaCli : public ::testing::Test {
  protected:
    void SetUp() override { data_ = write_data(dir_, "x.tsv", 200, 5, 3); }
    std::string path(const std::string& name) const { return dir_.file(name); }
    TempDir dir_;
    std::string data_;
    const std::string flags_ = " --components 8 --lambda 0.5 --eval-every 5 -q";
};

TEST_F(RicaCli, BadInputNamesFileAndLineAndWritesNothing) {
    const std::string bad = dir_.write("bad.tsv", "1\t2\t3\n4\t5\t6\n7\tx\t9\n");
    auto r = run_rotor(
        dir_, "rica train --data " + bad + flags_ + " --iterations 20 --out " + path("m.txt"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("bad.tsv:3:3"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("m.txt")));
    const std::string ragged = dir_.write("ragged.csv", "1,2\n3\n");
    r = run_rotor(
        dir_, "rica train --data " + ragged + flags_ + " --iterations 20 --out " + path("m.txt"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("ragged.csv:2:"), std::string::npos) << r.err;
    r = run_rotor(dir_, "rica train --data " + data_ + flags_ +
                            " --iterations 20 --lambda -1 --out " + path("m.txt"));
    EXPECT_EQ(r.code, 3);
    EXPECT_NE(r.err.find("--lambda"), std::string::npos) << r.err;
    r = run_rotor(dir_, "rica train --data " + data_ + flags_ +
                            " --iterations 20 --solver lbfgs --out " + path("m.txt"));
    EXPECT_EQ(r.code, 3);
    EXPECT_NE(r.err.find("--solver"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("m.txt")));
}

TEST_F(RicaCli, TrainTransformEvalAndResume) {
    auto r = run_rotor(dir_, "rica train --data " + data_ + flags_ + " --iterations 20 --out " +
                                 path("m.txt") + " --metrics " + path("m.jsonl") +
                                 " --checkpoint-every 10");
    ASSERT_EQ(r.code, 0) << r.err;
    const Model m = read_model(path("m.txt"));
    // transform: W x, one row per observation.
    r = run_rotor(dir_, "rica transform --model " + path("m.txt") + " --data " + data_);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 200);
    // eval on the training data reports the training objective.
    r = run_rotor(dir_, "rica eval --model " + path("m.txt") + " --data " + data_);
    ASSERT_EQ(r.code, 0) << r.err;
    const std::size_t at = r.out.find("objective\t");
    ASSERT_NE(at, std::string::npos) << r.out;
    EXPECT_NEAR(std::stod(r.out.substr(at + 10)), m.objective, 1e-6 * m.objective);
    // The checkpoint (written at 10 and at the end), resumed to 30: a model of the same shape and
    // descent.
    const Model c = read_model(path("m.txt.checkpoint"));
    EXPECT_EQ(c.iterations, 20U);
    EXPECT_EQ(c.metric.size(), 8U);
    r = run_rotor(dir_, "rica train --data " + data_ + flags_ + " --iterations 30 --out " +
                            path("m.txt") + " --resume " + path("m.txt.checkpoint"));
    ASSERT_EQ(r.code, 0) << r.err;
    const Model resumed = read_model(path("m.txt"));
    EXPECT_EQ(resumed.iterations, 30U);
    EXPECT_LT(resumed.objective, m.objective);
    // A total below the checkpoint's 20 steps is refused by name, the model left as it was.
    r = run_rotor(dir_, "rica train --data " + data_ + flags_ + " --iterations 15 --out " +
                            path("m.txt") + " --resume " + path("m.txt.checkpoint"));
    EXPECT_EQ(r.code, 3);
    EXPECT_NE(r.err.find("--iterations: is 15 but"), std::string::npos) << r.err;
    EXPECT_EQ(read_model(path("m.txt")).iterations, 30U);
    // A model of another dimension is refused by transform.
    const std::string wide = dir_.write("wide.tsv", "1\t2\t3\t4\t5\t6\n");
    r = run_rotor(dir_, "rica transform --model " + path("m.txt") + " --data " + wide);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("wide.tsv:1:1"), std::string::npos) << r.err;
}

#ifdef ROTOR_MPIEXEC
TEST_F(RicaCli, UnderMpiexecTheModelEqualsOneProcessByteForByte) {
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    ::setenv("OMPI_MCA_mpi_yield_when_idle", "1", 1);
    const std::string args =
        " rica train --data " + data_ + flags_ + " --iterations 20 --block-rows 3 --solver prox";
    ASSERT_EQ(run_rotor(dir_, args + " --out " + path("one.txt")).code, 0);
    const std::string one = without_time(core::read_whole_file(path("one.txt")));
    const std::string cmd = std::string(ROTOR_MPIEXEC) + " -n 3 --oversubscribe " +
                            ROTOR_BINARY_DIR "/apps/rotor" + args + " --servers 1 --out " +
                            path("three.txt") + " > " + path("mpi.out") + " 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << core::read_whole_file(path("mpi.out"));
    EXPECT_EQ(without_time(core::read_whole_file(path("three.txt"))), one);
    // With the worker on rank 2 slowed 50×, rows move to the other worker; the bytes stay.
    const std::string slow = std::string(ROTOR_MPIEXEC) + " -n 3 --oversubscribe " +
                             ROTOR_BINARY_DIR "/apps/rotor rica train --data " + data_ +
                             " --components 8 --lambda 0.5 --eval-every 5 --iterations 20" +
                             " --block-rows 3 --servers 1 --simulate-straggler 2:50 --out " +
                             path("moved.txt") + " > " + path("moved.out") + " 2>&1";
    ASSERT_EQ(std::system(slow.c_str()), 0) << core::read_whole_file(path("moved.out"));
    EXPECT_NE(core::read_whole_file(path("moved.out")).find("rebalanced after iteration"),
              std::string::npos)
        << core::read_whole_file(path("moved.out"));
    EXPECT_EQ(without_time(core::read_whole_file(path("moved.txt"))), one);
}
#endif

}  // namespace
}  // namespace rotor::rica
