// `rotor lasso train | path | predict | eval` through the real binary: scikit-learn's objective
// at its lambdas, bad input (exit 2, path:line:col, no model), predictions and metrics checked
// against the model file, the path, the model under mpiexec equal to one process's, and a run
// killed (SIGKILL) and resumed from its checkpoints equal to an uninterrupted one.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/lasso/dense_reader.h"
#include "core/lasso/model_file.h"
#include "tests/apps/mf/rotor_cli_util.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::apps {
namespace {

using testing::run_rotor;

const std::string kData = std::string(ROTOR_SOURCE_DIR) + "/tests/core/lasso/data/";

/// One line of the scikit-learn fixture (tests/core/lasso/data/reference.tsv).
struct Reference {
    std::string data;
    double lambda = 0;
    double objective = 0;
    std::uint32_t nonzeros = 0;
};

std::vector<Reference> references() {
    std::ifstream in(kData + "reference.tsv");
    std::vector<Reference> out;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream f(line);
        Reference r;
        f >> r.data >> r.lambda >> r.objective >> r.nonzeros;
        out.push_back(r);
    }
    return out;
}

/// The value of `key<TAB>value` lines of a command's output.
double value_of(const std::string& out, const std::string& key) {
    const std::size_t at = out.find(key + "\t");
    if (at == std::string::npos) return std::nan("");
    return std::stod(out.substr(at + key.size() + 1));
}

class LassoCli : public ::testing::Test {
  protected:
    rotor::testing::TempDir dir_;
    std::string path(const std::string& name) const { return dir_.file(name); }
};

TEST_F(LassoCli, TrainMatchesScikitLearnAtItsLambdas) {
    // scikit-learn's objective to 1e-10 with both the cyclic and the strads schedule.
    const std::vector<Reference> refs = references();
    ASSERT_EQ(refs.size(), 9u);
    for (const Reference& r : refs) {
        for (const std::string schedule : {"cyclic", "strads"}) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.17g", r.lambda);
            const auto res =
                run_rotor(dir_, "lasso train -q --data " + kData + r.data + " --lambda " + buf +
                                    " --tol 1e-13 --max-iterations 100000 --threads 2 --schedule " +
                                    schedule + " --parallel 2 --candidates 8 --rho 0.5 --out " +
                                    path("m.txt") + " --overwrite");
            ASSERT_EQ(res.code, 0) << res.err;
            const lasso::Model m = lasso::read_model(path("m.txt"));
            const std::string what = r.data + " " + buf + " " + schedule;
            EXPECT_LT(m.relative_gap, 1e-13) << what;
            EXPECT_NEAR(m.objective, r.objective, 1e-10 * r.objective) << what;
            EXPECT_EQ(m.nonzeros(), r.nonzeros) << what;
        }
    }
}

TEST_F(LassoCli, BadInputExitsTwoWithItsPositionAndWritesNoModel) {
    const std::string bad = dir_.write("bad.svm", "1 1:0.5 2:1\n2 3:1 2:4\n");
    const auto r =
        run_rotor(dir_, "lasso train --data " + bad + " --lambda 0.1 --out " + path("never.txt"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(bad + ":2:"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("never.txt")));
    const std::string csv = dir_.write("bad.csv", "a,b,y\n1,2,3\n4,,6\n");
    const auto c =
        run_rotor(dir_, "lasso train --data " + csv + " --lambda 0.1 --out " + path("never.txt"));
    EXPECT_EQ(c.code, 2);
    EXPECT_NE(c.err.find(csv + ":3:"), std::string::npos) << c.err;
    EXPECT_FALSE(std::filesystem::exists(path("never.txt")));
    const auto l = run_rotor(dir_, "lasso train --data " + csv + " --lambda -1 --out x");
    EXPECT_EQ(l.code, 3) << l.err;  // a ConfigError
    EXPECT_NE(l.err.find("--lambda"), std::string::npos) << l.err;
    const auto m = run_rotor(dir_, "lasso predict --model " + bad + " --data " + bad);
    EXPECT_EQ(m.code, 2);
    EXPECT_NE(m.err.find(bad + ":1:1"), std::string::npos) << m.err;
}

// The rules every model's train follows (docs/reliability.md, theme 4): --out is new, or an
// earlier model replaced with --overwrite only (it was replaced silently, and so was any file);
// its directory must exist; path's --models too; a resumed run says where it starts; a total
// below what the checkpoint has done is refused saying how many it has.
TEST_F(LassoCli, OutputsAndResumeFollowTheUsersIntent) {
    const std::string train =
        "lasso train --data " + kData + "sparse.svm --lambda 0.05 --threads 1 ";
    ASSERT_EQ(run_rotor(dir_, train + "-q --checkpoint-every 1 --max-iterations 3 --tol 0 --out " +
                                  path("m.txt"))
                  .code,
              0);
    auto r = run_rotor(dir_, train + "-q --out " + path("m.txt"));
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("give --overwrite"), std::string::npos) << r.err;
    EXPECT_EQ(run_rotor(dir_, train + "-q --overwrite --out " + path("m.txt")).code, 0);
    const std::string notes = dir_.write("notes.txt", "my notes\n");
    r = run_rotor(dir_, train + "-q --overwrite --out " + notes);
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("not an output of rotor"), std::string::npos) << r.err;
    EXPECT_EQ(rotor::testing::read_all(notes), "my notes\n");
    EXPECT_EQ(run_rotor(dir_, train + "-q --out " + path("no/m.txt")).code, 3);
    const std::string path_cmd = "lasso path --data " + kData + "sparse.svm --n-lambdas 2 -q ";
    EXPECT_EQ(
        run_rotor(dir_, path_cmd + "--out " + path("p.tsv") + " --models " + path("no/ms")).code,
        3);
    EXPECT_FALSE(std::filesystem::exists(path("no")));
    ASSERT_EQ(run_rotor(dir_, path_cmd + "--out " + path("p.tsv")).code, 0);
    EXPECT_EQ(run_rotor(dir_, path_cmd + "--out " + path("p.tsv")).code, 3);
    EXPECT_EQ(run_rotor(dir_, path_cmd + "--out " + path("p.tsv") + " --overwrite").code, 0);

    r = run_rotor(dir_, train + "--max-iterations 4 --tol 0 --resume " + path("m.txt.checkpoint") +
                            " --out " + path("m4.txt"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("rotor: resumed " + path("m.txt.checkpoint") + " at iteration 3"),
              std::string::npos)
        << r.out;
    r = run_rotor(dir_, train + "--max-iterations 2 --resume " + path("m.txt.checkpoint") +
                            " --out " + path("m2.txt"));
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("--max-iterations: is 2 but"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("already has 3 iterations"), std::string::npos) << r.err;
}

// More threads than processors: said once, as lda and mf train do (it was silent).
TEST_F(LassoCli, ThreadsBeyondTheProcessorsAreWarnedOnce) {
    const auto r =
        run_rotor(dir_, "lasso train -q --data " + kData +
                            "sparse.svm --lambda 0.05 --threads 256 --out " + path("m.txt"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("rotor: warning: 256 worker threads on "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("rotor: warning:"), r.err.rfind("rotor: warning:")) << r.err;
}

TEST_F(LassoCli, DivergenceIsAnErrorNotAModel) {
    // diabetes' columns are correlated: 8 parallel updates with no correlation check diverge.
    const auto r =
        run_rotor(dir_, "lasso train --data " + kData +
                            "diabetes.csv --lambda 0.1 "
                            "--schedule shotgun --parallel 8 --max-iterations 2000 --out " +
                            path("never.txt"));
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("diverged"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("never.txt")));
}

TEST_F(LassoCli, PredictAndEvalAgreeWithTheModel) {
    const std::string data = kData + "diabetes.csv";
    ASSERT_EQ(
        run_rotor(dir_, "lasso train -q --data " + data + " --lambda 1 --out " + path("m.txt"))
            .code,
        0);
    const lasso::Model m = lasso::read_model(path("m.txt"));
    const lasso::RawData raw = lasso::read_dense(data);
    const auto p = run_rotor(dir_, "lasso predict -m " + path("m.txt") + " --data " + data +
                                       " --out " + path("pred.txt"));
    ASSERT_EQ(p.code, 0) << p.err;
    std::ifstream in(path("pred.txt"));
    double sse = 0, sst = 0, mean = 0;
    for (double y : raw.targets) mean += y / raw.samples();
    for (std::uint32_t i = 0; i < raw.samples(); ++i) {
        double got = 0;
        ASSERT_TRUE(in >> got) << i;
        double want = m.intercept;
        for (std::uint32_t j = 0; j < m.features; ++j)
            want += m.beta[j] * raw.values[raw.row_offsets[i] + j];
        EXPECT_NEAR(got, want, 1e-9 * (1 + std::fabs(want))) << i;
        sse += (raw.targets[i] - want) * (raw.targets[i] - want);
        sst += (raw.targets[i] - mean) * (raw.targets[i] - mean);
    }
    const auto e = run_rotor(dir_, "lasso eval -m " + path("m.txt") + " --data " + data);
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(value_of(e.out, "samples"), 442);
    EXPECT_NEAR(value_of(e.out, "mse"), sse / 442, 1e-8 * sse / 442);
    EXPECT_NEAR(value_of(e.out, "r2"), 1 - sse / sst, 1e-8);
    // Around 0.5 on diabetes, as scikit-learn's Lasso there.
    EXPECT_GT(value_of(e.out, "r2"), 0.45);
    // A csv with other columns is refused.
    const std::string other = dir_.write("other.csv", "a,b\n1,2\n");
    EXPECT_EQ(run_rotor(dir_, "lasso eval -m " + path("m.txt") + " --data " + other).code, 2);
}

TEST_F(LassoCli, PathFromLambdaMaxDown) {
    const auto r = run_rotor(dir_, "lasso path --data " + kData + "sparse.svm" +
                                       " --n-lambdas 6 --eps 0.01 --tol 1e-10 --out " +
                                       path("path.tsv") + " --models " + path("models"));
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream in(path("path.tsv"));
    std::string line;
    std::vector<std::vector<std::string>> rows;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#' || line.rfind("lambda", 0) == 0) continue;
        std::vector<std::string> f;
        std::istringstream s(line);
        for (std::string x; std::getline(s, x, '\t');) f.push_back(x);
        rows.push_back(f);
    }
    ASSERT_EQ(rows.size(), 6u);
    EXPECT_EQ(rows[0][4], "0");  // nonzeros at lambda_max
    for (std::size_t k = 1; k < rows.size(); ++k) {
        EXPECT_LT(std::stod(rows[k][0]), std::stod(rows[k - 1][0]));
        EXPECT_LT(std::stod(rows[k][1]), std::stod(rows[k - 1][1]));  // objective falls with λ
        EXPECT_LT(std::stod(rows[k][2]), 1e-10);
    }
    EXPECT_NEAR(std::stod(rows[5][0]), 0.01 * std::stod(rows[0][0]), 1e-12);
    const lasso::Model last = lasso::read_model(path("models") + "/model-005.txt");
    EXPECT_EQ(std::to_string(last.nonzeros()), rows[5][4]);
}

/// A sparse regression set in LIBSVM: n samples, p features, ~density of them set, y from 20
/// planted coefficients plus noise.
void write_sparse_set(const std::string& path, int n, int p, double density, std::uint64_t seed) {
    Rng rng(seed);
    std::ofstream out(path);
    for (int i = 0; i < n; ++i) {
        std::string line;
        double y = 0;
        for (int j = 0; j < p; ++j) {
            if (!(rng.uniform() < density)) continue;
            const double v = 1 + std::floor(5 * rng.uniform());
            if (j % (p / 20) == 0) y += v * (1 + j % 3);
            line += " " + std::to_string(j + 1) + ":" + std::to_string(static_cast<int>(v));
        }
        out << y + rng.uniform() << line << "\n";
    }
}

extern "C" char** environ;

pid_t spawn(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
    return pid;
}

int wait_exit(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F(LassoCli, KilledAndResumedRunEqualsUninterruptedRun) {
    write_sparse_set(path("big.svm"), 6000, 1500, 0.02, 11);
    const std::string rotor = ROTOR_BINARY_DIR "/apps/rotor";
    const std::vector<std::string> base = {
        rotor, "lasso", "train", "--data", path("big.svm"), "--lambda", "0.01", "--schedule",
        "strads", "--tol", "0", "--max-iterations", "60", "--threads", "2", "-q",
        // Full sweeps: 60 iterations long enough to be killed between checkpoints (with active
        // sets strads settles in a fraction of the time, and the kills fell before the first).
        "--no-active-set"};
    auto straight = base;
    straight.insert(straight.end(), {"--out", path("straight.txt")});
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(wait_exit(spawn(straight)), 0);
    const double run_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const std::string ck = path("ck");
    auto args = base;
    args.insert(args.end(),
                {"--checkpoint-every", "1", "--checkpoint-dir", ck, "--out", path("resumed.txt"),
                 "--overwrite"});  // a run killed after writing its model leaves it to replace
    Rng rng(7);
    int kills = 0, resumed = 0;
    double scale = 1.0;
    for (int attempt = 0; attempt < 40; ++attempt) {
        auto a = args;
        if (std::filesystem::exists(ck + "/state.json")) {
            a.insert(a.end(), {"--resume", ck});
            ++resumed;
        }
        const pid_t pid = spawn(a);
        if (kills >= 3) {
            ASSERT_EQ(wait_exit(pid), 0);
            break;
        }
        const double ms = run_ms * scale * (0.2 + 0.6 * rng.uniform());
        std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(ms * 1000)));
        ::kill(pid, SIGKILL);
        const int code = wait_exit(pid);
        if (code == 128 + SIGKILL) {
            ++kills;
            continue;
        }
        ASSERT_EQ(code, 0);
        std::filesystem::remove_all(ck);  // it finished first: start over with shorter delays
        std::filesystem::remove_all(path("resumed.txt"));
        kills = 0;
        resumed = 0;
        scale /= 2;
    }
    ASSERT_EQ(kills, 3) << "the run was too fast to be interrupted: the test proves nothing";
    EXPECT_GE(resumed, 1);
    EXPECT_EQ(rotor::testing::read_all(path("straight.txt")),
              rotor::testing::read_all(path("resumed.txt")));
    // A model-defining flag that disagrees with the checkpoint is refused by name.
    const auto r =
        run_rotor(dir_, "lasso train --data " + path("big.svm") + " --lambda 0.02 --resume " + ck +
                            " --out " + path("other.txt"));
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.err.find("--lambda"), std::string::npos) << r.err;
}

#ifdef ROTOR_MPIEXEC
TEST_F(LassoCli, UnderMpiexecTheModelEqualsOneProcessByteForByte) {
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    ::setenv("OMPI_MCA_mpi_yield_when_idle", "1", 1);
    // strads: one rank computes the pair dots the scan reaches, two push the missing ones;
    // cyclic: active sets decided from reduced gradients.
    for (const std::string schedule :
         {"strads --parallel 4 --candidates 16 --rho 0.5", "cyclic --tol 1e-9"}) {
        const std::string args = " lasso train -q --data " + kData +
                                 "wide.svm --lambda 0.05 --max-iterations 30 --schedule " +
                                 schedule + " --threads ";
        ASSERT_EQ(run_rotor(dir_, args + "1 --overwrite --out " + path("one.txt")).code, 0);
        const std::string cmd = std::string(ROTOR_MPIEXEC) + " -n 2 --oversubscribe " +
                                ROTOR_BINARY_DIR "/apps/rotor" + args + "2 --overwrite --out " +
                                path("two.txt") + " > " + path("mpi.out") + " 2>&1";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << schedule;
        std::ifstream a(path("one.txt")), b(path("two.txt"));
        std::stringstream sa, sb;
        sa << a.rdbuf();
        sb << b.rdbuf();
        EXPECT_FALSE(sa.str().empty());
        EXPECT_EQ(sa.str(), sb.str()) << schedule;
    }
}
#endif

}  // namespace
}  // namespace rotor::apps
