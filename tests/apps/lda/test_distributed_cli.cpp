// `mpiexec -n P rotor lda train` with --heldout, --optimize-alpha and --trace, through the real
// binary on real files (docs/distributed.md). This test is a plain process: it starts mpiexec
// itself, for P = 2 and 3 (ctest passes the environment that lets Open MPI run as root and
// oversubscribe).
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

const std::string kRotor = ROTOR_BINARY_DIR "/apps/rotor";
const std::string kMpiexec = ROTOR_MPIEXEC;
const std::string kTrain = ROTOR_SOURCE_DIR "/data/tiny/train/docword.txt.gz";
const std::string kHeldout = ROTOR_SOURCE_DIR "/data/tiny/heldout/docword.txt.gz";

struct Outcome {
    int code;
    std::string out;  // stdout and stderr
};

Outcome run(const std::string& cmd) {
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    std::string out;
    char buf[4096];
    while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    const int status = pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

Outcome mpi_train(int ranks, const std::string& args) {
    return run(kMpiexec + " -n " + std::to_string(ranks) + " --oversubscribe " + kRotor +
               " lda train " + args);
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
    return n;
}

class DistributedCli : public ::testing::TestWithParam<int> {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("rotor-dist-cli-" + std::to_string(::getpid()) + "-" + std::to_string(GetParam()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    fs::path dir_;
};

// --heldout: the held-out numbers of the last evaluation equal `rotor lda eval` on the saved
// model (same fold-in settings and seed). --optimize-alpha 4 updates α at iteration 4 only, so
// the model's α is the one the last evaluation (iteration 6) used.
TEST_P(DistributedCli, HeldoutEqualsEvalOfSavedModelAndAlphaIsSaved) {
    const int ranks = GetParam();
    constexpr int kTopics = 8;
    const Outcome r = mpi_train(ranks, "--corpus " + kTrain + " --heldout " + kHeldout +
                                           " -k 8 -n 6 --eval-every 3 --optimize-alpha 4"
                                           " --threads 1 --metrics " +
                                           path("m.jsonl") + " --out " + path("model"));
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(count(r.out, "rotor: model written to"), 1u) << r.out;

    std::ifstream metrics(path("m.jsonl"));
    std::string line;
    std::map<int, nlohmann::json> records;
    while (std::getline(metrics, line)) {
        const auto j = nlohmann::json::parse(line);
        records[j.at("iter").get<int>()] = j;
    }
    ASSERT_EQ(records.size(), 6u);
    for (int iter : {3, 6}) {
        const auto& j = records.at(iter);
        EXPECT_EQ(j.at("ranks").get<int>(), ranks);
        ASSERT_TRUE(j.contains("heldout_perplexity")) << j.dump();
        EXPECT_GT(j.at("heldout_perplexity").get<double>(), 1.0);
        EXPECT_LT(j.at("heldout_loglik_per_token").get<double>(), 0.0);
    }
    EXPECT_FALSE(records.at(4).contains("heldout_perplexity"));

    const Outcome e = run(kRotor + " lda eval --model " + path("model") + " --corpus " + kHeldout +
                          " --threads 2");
    ASSERT_EQ(e.code, 0) << e.out;
    const auto json_start = e.out.find('{');
    ASSERT_NE(json_start, std::string::npos) << e.out;
    const auto eval = nlohmann::json::parse(e.out.substr(json_start));
    const double trained = records.at(6).at("heldout_loglik_per_token").get<double>();
    const double saved = eval.at("heldout_loglik_per_token").get<double>();
    EXPECT_NEAR(trained, saved, 1e-9 * std::abs(saved))
        << "training " << trained << ", eval " << saved;
    EXPECT_NEAR(records.at(6).at("heldout_perplexity").get<double>(),
                eval.at("heldout_perplexity").get<double>(),
                1e-9 * eval.at("heldout_perplexity").get<double>());

    std::ifstream params(path("model/params.json"));
    const auto p = nlohmann::json::parse(params);
    const auto alpha = p.at("alpha").get<std::vector<double>>();
    ASSERT_EQ(alpha.size(), static_cast<std::size_t>(kTopics));
    EXPECT_NE(*std::min_element(alpha.begin(), alpha.end()),
              *std::max_element(alpha.begin(), alpha.end()))
        << "alpha was not optimised";
    for (double a : alpha) EXPECT_GT(a, 0.0);
}

// --trace: one Chrome trace, one process per rank, with every rank's block runs.
TEST_P(DistributedCli, TraceHasOneProcessPerRank) {
    const int ranks = GetParam();
    const Outcome r =
        mpi_train(ranks, "--corpus " + kTrain + " -k 6 -n 3 --threads 2 --no-timer -q --trace " +
                             path("t.json") + " --out " + path("model"));
    ASSERT_EQ(r.code, 0) << r.out;
    std::ifstream trace(path("t.json"));
    const auto t = nlohmann::json::parse(trace);
    std::vector<int> blocks(ranks, 0);
    std::vector<int> named(ranks, 0);
    for (const auto& e : t.at("traceEvents")) {
        const int pid = e.at("pid").get<int>();
        ASSERT_GE(pid, 0);
        ASSERT_LT(pid, ranks);
        if (e.at("ph") == "X") {
            ++blocks[pid];
            const int iter = e.at("args").at("iter").get<int>();
            EXPECT_GE(iter, 1);
            EXPECT_LE(iter, 3);
            EXPECT_GE(e.at("tid").get<int>(), 0);
            EXPECT_LT(e.at("tid").get<int>(), 2);
        }
        if (e.at("ph") == "M" && e.at("name") == "process_name") {
            EXPECT_EQ(e.at("args").at("name").get<std::string>(), "rank " + std::to_string(pid));
            ++named[pid];
        }
    }
    for (int q = 0; q < ranks; ++q) {
        EXPECT_GT(blocks[q], 0) << "rank " << q;
        EXPECT_EQ(named[q], 1) << "rank " << q;
    }
}

// Checkpoints are not supported with more than one rank yet: a clear error, printed once.
TEST_P(DistributedCli, CheckpointsAreRefusedClearly) {
    const Outcome r = mpi_train(GetParam(), "--corpus " + kTrain + " -k 4 -n 2 --threads 1" +
                                                " --checkpoint-every 1 --out " + path("model"));
    EXPECT_NE(r.code, 0) << r.out;
    EXPECT_EQ(count(r.out, "--checkpoint-every"), 1u) << r.out;
    EXPECT_FALSE(fs::exists(path("model")));
}

INSTANTIATE_TEST_SUITE_P(Ranks, DistributedCli, ::testing::Values(2, 3));

}  // namespace
