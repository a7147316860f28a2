// `rotor logreg train | predict | eval` through the real binary: a model that fits (its objective
// that of the sequential BlockProx), predictions and metrics consistent with the model file, bad
// input (exit 2, path:line:col, no model), and under mpiexec -n 3 (one server and two workers, or
// every rank both) the model byte for byte that of one process; under mpiexec -n 4 (2 servers)
// with the lossless filters keycache,zstd the same model with fewer bytes in --stats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/logreg/block_prox.h"
#include "core/logreg/metrics.h"
#include "core/logreg/model_file.h"
#include "tests/apps/mf/rotor_cli_util.h"
#include "tests/core/io/temp_dir.h"
#include "tests/core/logreg/logreg_test_util.h"

namespace rotor::apps {
namespace {

using testing::run_rotor;

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class LogregCli : public ::testing::Test {
  protected:
    void SetUp() override {
        examples_ = logreg::testing::synthetic_examples(300, 50, 6, 31);
        std::string text;
        for (std::size_t i = 0; i < examples_.size(); ++i) {
            text += examples_.labels[i] > 0 ? "+1" : "0";  // 0/1 labels as written by many tools
            for (std::size_t e = 0; e < examples_.keys_of(i).size(); ++e) {
                text +=
                    fmt::format(" {}:{:.17g}", examples_.keys_of(i)[e], examples_.values_of(i)[e]);
            }
            text += "\n";
        }
        data_ = dir_.write("train.svm", text);
    }
    std::string path(const std::string& name) const { return dir_.file(name); }

    rotor::testing::TempDir dir_;
    logreg::Examples examples_;
    std::string data_;
    const std::string flags_ = " --lambda 0.5 --blocks 3 --iterations 60 --curvature local -q";
};

TEST_F(LogregCli, TrainPredictEvalAgreeWithTheReference) {
    const auto res =
        run_rotor(dir_, "logreg train --data " + data_ + flags_ + " --out " + path("m.txt"));
    ASSERT_EQ(res.code, 0) << res.err;
    const logreg::Model m = logreg::read_model(path("m.txt"));
    std::vector<logreg::Shard> parts{logreg::Shard(examples_, true)};
    logreg::BlockProxOptions o;
    o.lambda = 0.5;
    o.blocks = 3;
    o.curvature = logreg::Curvature::kLocal;
    logreg::BlockProx reference(parts, o);
    for (std::uint64_t t = 0; t < 60; ++t) reference.step(t);
    EXPECT_EQ(m.objective, reference.evaluate().objective);
    EXPECT_EQ(m.iterations, 60u);
    EXPECT_GT(m.keys.size(), 3u);

    const auto pred = run_rotor(dir_, "logreg predict -m " + path("m.txt") + " -d " + data_);
    ASSERT_EQ(pred.code, 0) << pred.err;
    std::istringstream lines(pred.out);
    std::vector<double> margins;
    for (double p; lines >> p;) margins.push_back(std::log(p / (1 - p)));
    ASSERT_EQ(margins.size(), examples_.size());
    for (std::size_t i = 0; i < margins.size(); ++i) {
        EXPECT_NEAR(margins[i], m.margin(examples_.keys_of(i), examples_.values_of(i)), 1e-9);
    }
    const logreg::Metrics want = logreg::compute_metrics(margins, examples_.labels);
    const auto eval = run_rotor(dir_, "logreg eval -m " + path("m.txt") + " -d " + data_);
    ASSERT_EQ(eval.code, 0) << eval.err;
    EXPECT_NE(eval.out.find(fmt::format("auc\t{:.10g}", want.auc)), std::string::npos) << eval.out;
    EXPECT_GT(want.auc, 0.7);
}

TEST_F(LogregCli, BadInputExitsTwoNamingTheLineAndWritesNoModel) {
    const std::string bad = dir_.write("bad.svm", "1 3:1\n2 4:1\n");
    const auto res =
        run_rotor(dir_, "logreg train --data " + bad + flags_ + " --out " + path("m.txt"));
    EXPECT_EQ(res.code, 2);
    EXPECT_NE(res.err.find(bad + ":2:1: label \"2\" is not +1, -1 or 0"), std::string::npos)
        << res.err;
    EXPECT_FALSE(std::ifstream(path("m.txt")).good());
    const auto delay = run_rotor(
        dir_, "logreg train --data " + data_ + flags_ + " --delay soon --out " + path("m.txt"));
    EXPECT_NE(delay.code, 0);
    EXPECT_NE(delay.err.find("--delay"), std::string::npos) << delay.err;
}

// --threads as every model's: 0 (the default) every core; any number the same model.
TEST_F(LogregCli, ThreadsGiveTheSameModelByteForByteAndMaxStepIsChecked) {
    const std::string args = "logreg train --data " + data_ + flags_;
    ASSERT_EQ(run_rotor(dir_, args + " --threads 1 --out " + path("t1.txt")).code, 0);
    for (const std::string threads : {"2", "3", "0"}) {
        const auto res = run_rotor(
            dir_, args + " --threads " + threads + " --overwrite --out " + path("tn.txt"));
        ASSERT_EQ(res.code, 0) << res.err;
        EXPECT_EQ(read_text(path("tn.txt")), read_text(path("t1.txt"))) << threads << " threads";
    }
    const auto negative = run_rotor(dir_, args + " --threads -1 --out " + path("t0.txt"));
    EXPECT_EQ(negative.code, 3);
    EXPECT_NE(negative.err.find("--threads"), std::string::npos) << negative.err;
    EXPECT_FALSE(std::filesystem::exists(path("t0.txt")));
    const auto step = run_rotor(dir_, args + " --max-step -1 --out " + path("t0.txt"));
    EXPECT_NE(step.code, 0);
    EXPECT_NE(step.err.find("--max-step"), std::string::npos) << step.err;
}

#ifdef ROTOR_MPIEXEC
TEST_F(LogregCli, UnderMpiexecTheModelEqualsOneProcessByteForByte) {
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    ::setenv("OMPI_MCA_mpi_yield_when_idle", "1", 1);
    const std::string args = " logreg train --data " + data_ + flags_;
    ASSERT_EQ(run_rotor(dir_, args + " --out " + path("one.txt")).code, 0);
    const std::string one = read_text(path("one.txt"));
    EXPECT_FALSE(one.empty());
    for (const std::string servers : {"1", "0"}) {
        const std::string out = path("three-" + servers + ".txt");
        const std::string cmd = std::string(ROTOR_MPIEXEC) + " -n 3 --oversubscribe " +
                                ROTOR_BINARY_DIR "/apps/rotor" + args + " --servers " + servers +
                                " --out " + out + " > " + path("mpi.out") + " 2>&1";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << read_text(path("mpi.out"));
        EXPECT_EQ(read_text(out), one) << "--servers " << servers;
    }
}

/// The number after `"name":` in a --stats file.
std::uint64_t stat_of(const std::string& json, const std::string& name) {
    const std::size_t at = json.find("\"" + name + "\":");
    if (at == std::string::npos) return 0;
    return std::stoull(json.substr(at + name.size() + 3));
}

TEST_F(LogregCli, UnderMpiexecLosslessFiltersKeepTheModelAndSendFewerBytes) {
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    ::setenv("OMPI_MCA_mpi_yield_when_idle", "1", 1);
    const std::string args = " logreg train --data " + data_ + flags_;
    ASSERT_EQ(run_rotor(dir_, args + " --out " + path("one.txt")).code, 0);
    std::uint64_t plain_workers = 0, plain_servers = 0;
    for (const std::string filters : {"none", "keycache,zstd"}) {
        const std::string cmd = std::string(ROTOR_MPIEXEC) + " -n 4 --oversubscribe " +
                                ROTOR_BINARY_DIR "/apps/rotor" + args + " --servers 2 --filters " +
                                filters + " --stats " + path("stats.json") + " --overwrite --out " +
                                path("four.txt") + " > " + path("mpi.out") + " 2>&1";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << read_text(path("mpi.out"));
        EXPECT_EQ(read_text(path("four.txt")), read_text(path("one.txt"))) << filters;
        const std::string stats = read_text(path("stats.json"));
        const std::uint64_t workers = stat_of(stats, "worker_bytes");
        const std::uint64_t servers = stat_of(stats, "server_bytes");
        EXPECT_GT(workers, 0u) << stats;
        EXPECT_GT(servers, 0u) << stats;
        if (filters == "none") {
            plain_workers = workers;
            plain_servers = servers;
            EXPECT_EQ(stats.find("keycache"), std::string::npos);
        } else {
            // Answers of random w barely compress: the servers may gain a flag byte a message.
            EXPECT_LT(workers, plain_workers) << stats;
            EXPECT_LT(workers + servers, plain_workers + plain_servers) << stats;
            EXPECT_NE(stats.find("\"name\":\"zstd\""), std::string::npos) << stats;
        }
    }
}

/// The number after "objective " in a model file.
double objective_in(const std::string& model) {
    const std::size_t at = model.find("\nobjective ");
    return at == std::string::npos ? NAN : std::stod(model.substr(at + 11));
}

TEST_F(LogregCli, UnderMpiexecDelayPushesFloat32AndConvergesDeterministicPushesTheLimbs) {
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    ::setenv("OMPI_MCA_mpi_yield_when_idle", "1", 1);
    const std::string args = " logreg train --data " + data_ + " --lambda 0.5";
    ASSERT_EQ(run_rotor(dir_, args + " --tol 1e-8 -q --out " + path("best.txt")).code, 0);
    const double best = objective_in(read_text(path("best.txt")));
    ASSERT_TRUE(std::isfinite(best));
    std::uint64_t exact_workers = 0;
    for (const std::string extra :
         {" --filters none --deterministic", " --filters none", " --filters all"}) {
        const std::string cmd =
            std::string(ROTOR_MPIEXEC) + " -n 3 --oversubscribe " + ROTOR_BINARY_DIR "/apps/rotor" +
            args + " --delay 2 --servers 1 --overwrite --stats " + path("stats.json") + extra +
            " --out " + path("three.txt") + " > " + path("mpi.out") + " 2>&1";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << read_text(path("mpi.out"));
        const std::string out = read_text(path("mpi.out"));
        const bool exact = extra.find("deterministic") != std::string::npos;
        EXPECT_NE(out.find(exact ? "pushes exact" : "pushes float32"), std::string::npos) << out;
        EXPECT_NE(out.find("rotor: converged after"), std::string::npos) << out;
        const double f = objective_in(read_text(path("three.txt")));
        EXPECT_LT(f, best * (1 + 1e-3)) << extra;
        EXPECT_GE(f, best * (1 - 1e-9)) << extra;
        const std::uint64_t workers = stat_of(read_text(path("stats.json")), "worker_bytes");
        if (exact) {
            exact_workers = workers;
        } else if (extra == " --filters none") {
            EXPECT_LT(2 * workers, exact_workers);  // 8 bytes a key pushed instead of 64
        }
    }
}
#endif

}  // namespace
}  // namespace rotor::apps
