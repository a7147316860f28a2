// `rotor lasso train | path | predict | eval` through the real binary: scikit-learn's objective
// at its lambdas, bad input (exit 2, path:line:col, no model), predictions and metrics checked
// against the model file, the path, the model under mpiexec equal to one process's (from text
// and from the binary form, which each rank copies only its samples of), and a run killed
// (SIGKILL) and resumed from its checkpoints equal to an uninterrupted one.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/lasso/dense_reader.h"
#include "core/lasso/model_file.h"
#include "tests/apps/kill_resume.h"
#include "tests/apps/mf/rotor_cli_util.h"
#include "tests/core/io/binary_file_util.h"
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
    // A resumed run continues the run that wrote its --out: it writes it in place without
    // --overwrite (which it needed); a file that is not rotor's is still never replaced.
    r = run_rotor(dir_, train + "-q --max-iterations 4 --tol 0 --resume " +
                            path("m.txt.checkpoint") + " --out " + path("m.txt"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(rotor::testing::read_all(path("m.txt")), rotor::testing::read_all(path("m4.txt")));
    r = run_rotor(dir_, train + "-q --max-iterations 4 --tol 0 --resume " +
                            path("m.txt.checkpoint") + " --out " + notes);
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_EQ(rotor::testing::read_all(notes), "my notes\n");
}

// One rule for every output (docs/reliability.md): the file size limited (as a full disk) while
// the metrics are written, the model is written whole and the run ends with exit 4 naming the
// metrics file and the model (it failed the run and left no model); the file keeps its whole
// records.
TEST_F(LassoCli, AFullDiskForTheMetricsKeepsTheModelAndNamesTheFile) {
    const std::string cmd = "sh -c \"trap '' XFSZ; ulimit -f 64; exec " ROTOR_BINARY_DIR
                            "/apps/rotor lasso train -q --data " +
                            kData + "sparse.svm --lambda 0.0001 --stop kkt --threads 1 --tol 0" +
                            " --max-iterations 150 --metrics " + path("m.jsonl") + " --out " +
                            path("m.txt") + "\" 2>" + path("err.txt");
    const int status = std::system(cmd.c_str());
    const std::string err = rotor::testing::read_all(path("err.txt"));
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 4) << err;
    EXPECT_NE(err.find("rotor: error: cannot write " + path("m.jsonl")), std::string::npos) << err;
    EXPECT_NE(err.find("; the model was written to " + path("m.txt")), std::string::npos) << err;
    EXPECT_EQ(lasso::read_model(path("m.txt")).iterations, 150U);
    const auto records = rotor::testing::metrics_lines(path("m.jsonl"));
    ASSERT_GT(records.size(), 0u);
    EXPECT_LT(records.size(), 150u);
    for (std::size_t i = 0; i < records.size(); ++i) EXPECT_EQ(records[i].first, i + 1);
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

// diabetes' columns are correlated (s1 and s2 at 0.90): 8 or more parallel updates with no
// correlation check diverge. They used to stop the run ("the objective diverged ... lower
// --parallel"); now the run goes back to its last evaluation, halves --parallel, says so, and
// reaches scikit-learn's objective (the fixture's, 0.01 λ_max) at L = 4, 16 and 64 on 1 and 2
// threads, shotgun and strads alike.
TEST_F(LassoCli, DivergingRoundsAreUndoneAndTheRunReachesScikitLearn) {
    const Reference ref = references()[2];
    ASSERT_EQ(ref.data, "diabetes.csv");
    char lambda[64];
    std::snprintf(lambda, sizeof lambda, "%.17g", ref.lambda);
    for (const std::string schedule : {"shotgun", "strads"}) {
        for (const std::string l : {"4", "16", "64"}) {
            for (const std::string threads : {"1", "2"}) {
                const std::string what = schedule + " -L " + l + " --threads " + threads;
                const auto r = run_rotor(
                    dir_, "lasso train --data " + kData + "diabetes.csv --lambda " + lambda +
                              " --schedule " + schedule + " --parallel " + l + " --threads " +
                              threads + " --tol 1e-10 --max-iterations 5000 --metrics " +
                              path("m.jsonl") + " --out " + path("m.txt") + " --overwrite");
                ASSERT_EQ(r.code, 0) << what << r.err;
                const lasso::Model m = lasso::read_model(path("m.txt"));
                EXPECT_NEAR(m.objective, ref.objective, 1e-6 * ref.objective) << what;
                EXPECT_EQ(m.nonzeros(), ref.nonzeros) << what;
                const bool rolled =
                    r.out.find("rotor: the parallel updates diverged") != std::string::npos;
                // Shotgun at L >= 8 (min(L, 10 features)) rolls back; strads' rounds never need
                // to; L = 4 with shotgun may.
                if (schedule == "shotgun" && l != "4") {
                    EXPECT_TRUE(rolled) << what << r.out;
                }
                if (schedule == "strads") {
                    EXPECT_FALSE(rolled) << what << r.out;
                }
                std::ifstream in(path("m.jsonl"));
                std::string all((std::istreambuf_iterator<char>(in)), {});
                EXPECT_EQ(all.find("\"rollback\":1") != std::string::npos, rolled) << what;
            }
        }
    }
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

TEST_F(LassoCli, TheBinaryFormTrainsTheSameModelAndIsCheckedOnReading) {
    // build, then train on the text and on the binary form: byte-identical models (sparse, 2
    // threads; dense, with its header, for eval's column check).
    for (const std::string data : {"sparse.svm", "diabetes.csv"}) {
        const auto b =
            run_rotor(dir_, "lasso build --data " + kData + data + " --out " + path("d.bin"));
        ASSERT_EQ(b.code, 0) << b.err;
        EXPECT_NE(b.out.find("written to"), std::string::npos) << b.out;
        for (const std::string& in : {kData + data, path("d.bin")}) {
            const auto r = run_rotor(dir_, "lasso train -q --data " + in +
                                               " --lambda 0.5 --threads 2 --overwrite --out " +
                                               path(in == path("d.bin") ? "bin.txt" : "text.txt"));
            ASSERT_EQ(r.code, 0) << r.err;
        }
        EXPECT_EQ(rotor::testing::read_all(path("bin.txt")),
                  rotor::testing::read_all(path("text.txt")))
            << data;
        const auto e =
            run_rotor(dir_, "lasso eval -m " + path("text.txt") + " --data " + path("d.bin"));
        ASSERT_EQ(e.code, 0) << e.err;
    }
    // A corrupt binary file: exit 2 naming it, and no model.
    std::string bytes = rotor::testing::read_all(path("d.bin"));
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 1);
    const std::string bad = dir_.write("bad.bin", bytes);
    const auto r =
        run_rotor(dir_, "lasso train -q --data " + bad + " --lambda 1 --out " + path("no.txt"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(bad + ": CRC-32 mismatch"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("no.txt")));
    // --target belongs to csv: a configuration error.
    EXPECT_EQ(run_rotor(dir_, "lasso train -q --data " + path("d.bin") +
                                  " --target y --lambda 1 --out " + path("no.txt"))
                  .code,
              3);
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

TEST_F(LassoCli, KilledAndResumedRunEqualsUninterruptedRun) {
    write_sparse_set(path("big.svm"), 6000, 1500, 0.02, 11);
    const std::string rotor = ROTOR_BINARY_DIR "/apps/rotor";
    // Full sweeps, and active sets (whose working set and gradient the checkpoint carries; at
    // a smaller lambda, so that the run outlasts its first checkpoints).
    for (const std::string flags : {"--lambda 0.01 --max-iterations 60 --no-active-set",
                                    "--lambda 0.003 --max-iterations 400"}) {
        SCOPED_TRACE(flags);
        // No --overwrite: a resumed run writes its --out in place (a killed run may have).
        std::vector<std::string> base = {rotor,        "lasso",  "train", "--data", path("big.svm"),
                                         "--schedule", "strads", "--tol", "0",      "--threads",
                                         "2",          "-q"};
        std::istringstream words(flags);
        for (std::string w; words >> w;) base.push_back(w);
        auto straight = base;
        straight.insert(straight.end(), {"--out", path("straight.txt"), "--overwrite", "--metrics",
                                         path("straight.jsonl")});
        rotor::testing::KillResumePlan plan;
        plan.run_ms = rotor::testing::timed_run_ms(straight);
        ASSERT_GT(plan.run_ms, 0);
        plan.checkpoint = path("ck");
        rotor::testing::remove_with_leftovers(plan.checkpoint);
        rotor::testing::remove_with_leftovers(path("resumed.jsonl"));
        plan.args = base;
        plan.args.insert(plan.args.end(),
                         {"--checkpoint-every", "1", "--checkpoint-dir", plan.checkpoint, "--out",
                          path("resumed.txt"), "--metrics", path("resumed.jsonl")});
        plan.outputs = {path("resumed.txt"), path("resumed.jsonl")};
        plan.span_share = 0.6;
        plan.after_kill = [&] {
            rotor::testing::expect_records_through_checkpoint(path("resumed.jsonl"),
                                                              plan.checkpoint);
        };
        const auto outcome = rotor::testing::kill_and_resume(plan);
        ASSERT_EQ(outcome.kills, 3)
            << "the run was too fast to be interrupted: the test proves nothing";
        ASSERT_EQ(outcome.last_exit, 0);
        EXPECT_GE(outcome.resumed, 1);
        EXPECT_EQ(rotor::testing::read_all(path("straight.txt")),
                  rotor::testing::read_all(path("resumed.txt")));
        // One record per iteration, the killed runs' and the resumed ones', as the straight run's.
        rotor::testing::expect_same_records(path("straight.jsonl"), path("resumed.jsonl"),
                                            "objective");
        std::filesystem::remove(path("resumed.txt"));
    }
    const std::string ck = path("ck");
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

/// `cmd` through the shell; its exit code (-1 when it did not exit normally).
int exit_code_of(const std::string& cmd) {
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(LassoCli, UnderMpiexecRanksCopyOnlyTheirSamplesOfTheBinaryForm) {
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    ::setenv("OMPI_MCA_mpi_yield_when_idle", "1", 1);
    const std::string text = kData + "wide.svm", bin = path("wide.bin");
    ASSERT_EQ(run_rotor(dir_, "lasso build --data " + text + " --out " + bin).code, 0);
    const std::string mpi =
        std::string(ROTOR_MPIEXEC) + " -n 2 --oversubscribe " + ROTOR_BINARY_DIR "/apps/rotor";
    const std::string train =
        " lasso train -q --lambda 0.05 --schedule shotgun --parallel 4 "
        "--tol 0 --overwrite --data ";
    // 2 ranks on the binary form (each maps it and copies its half) against 1 process on the
    // text, and a checkpoint the 2 ranks wrote resumed by 1 process from the text: the data
    // fingerprint taken from the mapped arrays is the text's, and the model is the same bytes.
    ASSERT_EQ(run_rotor(dir_, train + text + " --max-iterations 6 --out " + path("one.txt")).code,
              0);
    ASSERT_EQ(exit_code_of(mpi + train + bin + " --max-iterations 6 --out " + path("two.txt") +
                           " > " + path("mpi.out") + " 2>&1"),
              0)
        << rotor::testing::read_all(path("mpi.out"));
    EXPECT_EQ(rotor::testing::read_all(path("two.txt")), rotor::testing::read_all(path("one.txt")));
    const std::string ck = path("ck");
    ASSERT_EQ(exit_code_of(mpi + train + bin + " --max-iterations 3 --checkpoint-every 1 " +
                           "--checkpoint-dir " + ck + " --out " + path("three.txt") + " > " +
                           path("mpi.out") + " 2>&1"),
              0)
        << rotor::testing::read_all(path("mpi.out"));
    const auto resumed = run_rotor(dir_, train + text + " --max-iterations 6 --resume " + ck +
                                             " --out " + path("resumed.txt"));
    ASSERT_EQ(resumed.code, 0) << resumed.err;
    EXPECT_EQ(rotor::testing::read_all(path("resumed.txt")),
              rotor::testing::read_all(path("one.txt")));
    // A value that is not finite in the last sample (rank 1's half), behind a good CRC: rank 1
    // finds it when it copies its rows, every rank exits 2 with its message, and no model.
    std::string bytes = rotor::testing::read_all(bin);
    std::uint64_t samples = 0, entries = 0;
    std::memcpy(&samples, bytes.data() + 16, 8);
    std::memcpy(&entries, bytes.data() + 32, 8);
    const std::size_t last_value =
        64 + (samples + 1) * 8 + (entries * 4 + 7) / 8 * 8 + (entries - 1) * 8;
    const double nan = std::nan("");
    const std::string bad =
        dir_.write("bad.bin", rotor::testing::patched(bytes, last_value, &nan, 8));
    EXPECT_EQ(exit_code_of(mpi + train + bad + " --out " + path("no.txt") + " > " +
                           path("mpi.out") + " 2>&1"),
              2);
    const std::string err = rotor::testing::read_all(path("mpi.out"));
    EXPECT_NE(err.find(bad + ": sample " + std::to_string(samples) + ": the value of column"),
              std::string::npos)
        << err;
    EXPECT_FALSE(std::filesystem::exists(path("no.txt")));
}
#endif

}  // namespace
}  // namespace rotor::apps
