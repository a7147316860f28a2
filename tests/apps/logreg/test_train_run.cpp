// `rotor logreg train` as a tool (apps/logreg/train_run.cpp), through the real binary: the
// metrics file, evaluations that leave τ = 0 bitwise, --tol, checkpoints resumed bitwise after
// kill -9, conflicting flags refused by name, --max-memory, --simulate-straggler, the binary
// form, and parts read by each rank giving the model of one process.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/base/rng.h"
#include "core/logreg/model_file.h"
#include "tests/apps/kill_resume.h"
#include "tests/apps/mf/rotor_cli_util.h"
#include "tests/core/io/temp_dir.h"
#include "tests/core/logreg/logreg_test_util.h"

namespace rotor::apps {
namespace {

namespace fs = std::filesystem;
using testing::run_rotor;

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class LogregTrainRun : public ::testing::Test {
  protected:
    void SetUp() override {
        const logreg::Examples ex = logreg::testing::synthetic_examples(600, 80, 6, 17);
        std::string text;
        for (std::size_t i = 0; i < ex.size(); ++i) {
            text += ex.labels[i] > 0 ? "+1" : "-1";
            for (std::size_t e = 0; e < ex.keys_of(i).size(); ++e)
                text += fmt::format(" {}:{:.17g}", ex.keys_of(i)[e], ex.values_of(i)[e]);
            text += i % 7 == 3 ? "  # a comment\n\n" : "\n";  // blank lines shift line numbers
        }
        data_ = dir_.write("train.svm", text);
    }
    std::string path(const std::string& name) const { return dir_.file(name); }
    testing::CommandResult train(const std::string& extra) {
        const bool total = extra.find("--iterations") != std::string::npos;
        return run_rotor(dir_, "logreg train --data " + data_ + flags_ +
                                   (total ? "" : " --iterations 80") + extra);
    }

    rotor::testing::TempDir dir_;
    std::string data_;
    const std::string flags_ = " --lambda 0.5 --blocks 4 --curvature local -q";
};

std::vector<nlohmann::json> records(const std::string& path) {
    std::vector<nlohmann::json> out;
    std::istringstream in(read_text(path));
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
}

TEST_F(LogregTrainRun, MetricsEveryEvaluationAndTheModelUnchangedByThem) {
    ASSERT_EQ(train(" --out " + path("plain.txt")).code, 0);
    const auto r = train(" --out " + path("m.txt") + " --eval-every 12 --metrics " +
                         path("m.jsonl") + " --test " + data_);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_text(path("m.txt")), read_text(path("plain.txt")));  // τ = 0: segments bitwise
    const auto recs = records(path("m.jsonl"));
    ASSERT_EQ(recs.size(), 7u);  // 12, 24, ..., 72 and 80
    EXPECT_EQ(recs.back()["iter"], 80);
    double previous = 1e300;
    for (const auto& j : recs) {
        for (const char* k :
             {"time_s", "objective", "loss", "nonzeros", "kkt_violation", "examples_per_s",
              "test_logloss", "test_auc", "test_accuracy", "server_bytes", "worker_bytes"})
            EXPECT_TRUE(j.contains(k)) << k;
        EXPECT_LE(j["objective"].get<double>(), previous);  // local curvature: descends here
        previous = j["objective"];
    }
    // One process is both server and worker: the bytes it sends itself grow with the iterations.
    EXPECT_GT(recs.back()["worker_bytes"].get<double>(),
              recs.front()["worker_bytes"].get<double>());
    EXPECT_GT(recs.back()["server_bytes"].get<double>(),
              recs.front()["server_bytes"].get<double>());
    EXPECT_EQ(recs.back()["objective"].get<double>(), logreg::read_model(path("m.txt")).objective);
    EXPECT_LT(recs.back()["kkt_violation"].get<double>(),
              recs.front()["kkt_violation"].get<double>());
    EXPECT_GT(recs.back()["test_auc"].get<double>(), 0.7);
}

// The rules every model's train follows (docs/reliability.md, theme 4): --out is new, or an
// earlier model replaced with --overwrite only (it was replaced silently, and so was any file);
// its directory must exist; a resumed run says where it starts; a total below what the
// checkpoint has done is refused saying how many it has.
TEST_F(LogregTrainRun, OutputsAndResumeFollowTheUsersIntent) {
    ASSERT_EQ(train(" --iterations 20 --checkpoint-every 10 --out " + path("m.txt")).code, 0);
    auto r = train(" --out " + path("m.txt"));
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("give --overwrite"), std::string::npos) << r.err;
    EXPECT_EQ(train(" --overwrite --out " + path("m.txt")).code, 0);
    const std::string notes = dir_.write("notes.txt", "my notes\n");
    EXPECT_EQ(train(" --overwrite --out " + notes).code, 3);
    EXPECT_EQ(read_text(notes), "my notes\n");
    EXPECT_EQ(train(" --out " + path("no/m.txt")).code, 3);
    EXPECT_EQ(train(" --out " + path("m2.txt") + " --stats " + path("no/s.json")).code, 3);
    EXPECT_FALSE(fs::exists(path("no")));
    const std::string ck = path("m.txt.checkpoint");
    r = run_rotor(dir_, "logreg train --data " + data_ + " --iterations 30 --resume " + ck +
                            " --out " + path("m30.txt"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("rotor: resumed " + ck + " at iteration 20"), std::string::npos) << r.out;
    r = run_rotor(dir_, "logreg train --data " + data_ + " --iterations 10 --resume " + ck +
                            " --out " + path("m10.txt"));
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("already has 20 iterations"), std::string::npos) << r.err;
    // A resumed run continues the run that wrote its --out: it writes it in place without
    // --overwrite (which it needed); a file that is not rotor's is still never replaced.
    r = run_rotor(dir_, "logreg train --data " + data_ + " --iterations 30 -q --resume " + ck +
                            " --out " + path("m.txt"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_text(path("m.txt")), read_text(path("m30.txt")));
    r = run_rotor(dir_, "logreg train --data " + data_ + " --iterations 30 -q --resume " + ck +
                            " --out " + notes);
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_EQ(read_text(notes), "my notes\n");
}

// --filters all stacks every filter in the documented order (it was refused: "unknown filter
// 'all'"), the same as naming them.
TEST_F(LogregTrainRun, FiltersAllStacksEveryFilter) {
    const auto r = train(" --filters all --stats " + path("s.json") + " --out " + path("all.txt"));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto stats = nlohmann::json::parse(read_text(path("s.json")));
    std::vector<std::string> names;
    for (const auto& f : stats.at("filters")) names.push_back(f.at("name"));
    EXPECT_EQ(names, (std::vector<std::string>{"kkt", "sigmod", "skip", "keycache", "zstd"}));
    ASSERT_EQ(train(" --filters kkt,sigmod,skip,keycache,zstd --out " + path("named.txt")).code, 0);
    EXPECT_EQ(read_text(path("all.txt")), read_text(path("named.txt")));
}

// One rule for every output (docs/reliability.md): the file size limited (as a full disk) while
// the metrics are written, the model and --stats are written whole and the run ends with exit 4
// naming the metrics file and the model (it failed the run and left no model); the file keeps
// its whole records.
TEST_F(LogregTrainRun, AFullDiskForTheMetricsKeepsTheModelAndNamesTheFile) {
    const std::string cmd = "sh -c \"trap '' XFSZ; ulimit -f 64; exec " ROTOR_BINARY_DIR
                            "/apps/rotor logreg train --data " +
                            data_ + flags_ + " --iterations 300 --tol 0 --eval-every 1 --metrics " +
                            path("m.jsonl") + " --stats " + path("s.json") + " --out " +
                            path("m.txt") + "\" 2>" + path("err.txt");
    const int status = std::system(cmd.c_str());
    const std::string err = read_text(path("err.txt"));
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 4) << err;
    EXPECT_NE(err.find("rotor: error: cannot write " + path("m.jsonl")), std::string::npos) << err;
    EXPECT_NE(err.find("; the model was written to " + path("m.txt")), std::string::npos) << err;
    EXPECT_EQ(logreg::read_model(path("m.txt")).iterations, 300U);
    EXPECT_TRUE(fs::exists(path("s.json")));
    const auto records = rotor::testing::metrics_lines(path("m.jsonl"));
    ASSERT_GT(records.size(), 0u);
    EXPECT_LT(records.size(), 300u);
    for (std::size_t i = 0; i < records.size(); ++i) EXPECT_EQ(records[i].first, i + 1);
}

// More threads than processors: said once, as lda and mf train do (it was silent).
TEST_F(LogregTrainRun, ThreadsBeyondTheProcessorsAreWarnedOnce) {
    const auto r = train(" --threads 256 --out " + path("m.txt"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("rotor: warning: 256 worker threads on "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("rotor: warning:"), r.err.rfind("rotor: warning:")) << r.err;
}

// The stopping rule (docs/logreg.md, "Stopping"): the first evaluation whose min-norm
// subgradient is <= tol times its value at w = 0 ends the run, and the run says so on stdout
// and in its metrics; the record before it did not meet the rule.
TEST_F(LogregTrainRun, TolStopsAtTheFirstEvaluationMeetingTheRule) {
    const auto r = run_rotor(dir_, "logreg train --data " + data_ +
                                       " --lambda 0.5 --blocks 4 --curvature local --iterations "
                                       "4000 --eval-every 20 --tol 0.01 --metrics " +
                                       path("t.jsonl") + " --out " + path("t.txt"));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto recs = records(path("t.jsonl"));
    ASSERT_GE(recs.size(), 2u);
    EXPECT_LT(recs.back()["iter"].get<int>(), 4000);
    EXPECT_LE(recs.back()["subgradient_ratio"].get<double>(), 0.01);
    EXPECT_EQ(recs.back()["converged"].get<int>(), 1);
    EXPECT_GT(recs.end()[-2]["subgradient_ratio"].get<double>(), 0.01);
    EXPECT_EQ(recs.end()[-2]["converged"].get<int>(), 0);
    EXPECT_EQ(logreg::read_model(path("t.txt")).iterations, recs.back()["iter"].get<int>());
    EXPECT_NE(r.out.find("rotor: converged after " +
                         std::to_string(recs.back()["iter"].get<int>()) + " iterations"),
              std::string::npos)
        << r.out;
    // Progress on stdout (train::TerminalReporter), a line per evaluation; nothing on stderr.
    EXPECT_NE(
        r.out.find(" " + std::to_string(recs.back()["iter"].get<int>()) + "/4000  objective "),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("examples/s"), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "");
}

// An explicit --iterations is a cap: honoured, and the run says it stopped there unconverged
// (before, 100 iterations ended far from the optimum without a word); a --time-limit likewise.
TEST_F(LogregTrainRun, TheCapIsHonouredAndReportedAsNotConverged) {
    auto r =
        run_rotor(dir_, "logreg train --data " + data_ +
                            " --lambda 0.5 --solver prox --iterations 7 --out " + path("c.txt"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(logreg::read_model(path("c.txt")).iterations, 7U);
    EXPECT_NE(r.out.find("rotor: NOT converged: stopped after 7 iterations"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("iteration cap --iterations 7 reached"), std::string::npos) << r.out;
    r = run_rotor(dir_, "logreg train --data " + data_ +
                            " --lambda 0.5 --blocks 4 --tol 1e-12 --eval-every 4 "
                            "--time-limit 1e-9 --out " +
                            path("t.txt"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(logreg::read_model(path("t.txt")).iterations, 4U);
    EXPECT_NE(r.out.find("--time-limit 1e-09 s reached"), std::string::npos) << r.out;
    // The default solver in one process (newton): the cap counts Newton iterations.
    r = run_rotor(dir_, "logreg train --data " + data_ + " --lambda 0.5 --iterations 1 --out " +
                            path("n.txt"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("solver newton"), std::string::npos) << r.out;
    EXPECT_EQ(logreg::read_model(path("n.txt")).iterations, 1U);
    EXPECT_NE(r.out.find("rotor: NOT converged: stopped after 1 Newton iterations, iteration cap "
                         "--iterations 1 reached"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("iter 1/1  objective "), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "");
    r = run_rotor(dir_, "logreg train --data " + data_ + " --lambda 0.5 --iterations 1 -q --out " +
                            path("n.txt") + " --overwrite");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "");  // --quiet: no progress, no closing lines
    const std::pair<const char*, const char*> bads[] = {
        {" --tol -1", "--tol"},
        {" --tol 1", "--tol"},
        {" --time-limit -2", "--time-limit"},
        {" --solver newton --blocks 4", "--blocks: applies to --solver prox only"},
        {" --solver newton --delay 2", "--delay: applies to --solver prox only"},
        {" --solver bfgs", "--solver"}};
    for (const auto& [bad, said] : bads) {
        r = run_rotor(dir_, "logreg train --data " + data_ + " --lambda 0.5" + bad + " --out " +
                                path("bad.txt"));
        EXPECT_EQ(r.code, 3) << bad << r.err;
        EXPECT_NE(r.err.find(said), std::string::npos) << bad << r.err;
        EXPECT_FALSE(fs::exists(path("bad.txt")));
    }
}

// kill -9 at random moments, resumed each time: the model of the uninterrupted run, byte for
// byte, and its metrics: the records a killed run made are on disk, and the resumed runs append
// (those past the checkpoint dropped), so the file holds one record per evaluation. A resumed run
// writes its --out in place, without --overwrite.
TEST_F(LogregTrainRun, KilledAndResumedRunEqualsUninterruptedRun) {
    const std::vector<std::string> base = {ROTOR_BINARY_DIR "/apps/rotor",
                                           "logreg",
                                           "train",
                                           "--data",
                                           data_,
                                           "--lambda",
                                           "0.5",
                                           "--blocks",
                                           "4",
                                           "--iterations",
                                           "3000",
                                           "--curvature",
                                           "local",
                                           "--eval-every",
                                           "50",
                                           "-q"};
    auto straight = base;
    straight.insert(straight.end(),
                    {"--out", path("straight.txt"), "--metrics", path("straight.jsonl")});
    rotor::testing::KillResumePlan plan;
    plan.run_ms = rotor::testing::timed_run_ms(straight);
    ASSERT_GT(plan.run_ms, 0);
    const std::string ck = path("ck");
    plan.args = base;
    plan.args.insert(plan.args.end(), {"--checkpoint-every", "50", "--checkpoint-dir", ck, "--out",
                                       path("resumed.txt"), "--metrics", path("resumed.jsonl")});
    plan.checkpoint = ck;
    plan.outputs = {path("resumed.txt"), path("resumed.jsonl")};
    plan.min_share = 0.2;
    plan.span_share = 0.5;
    plan.after_kill = [&] {
        rotor::testing::expect_records_through_checkpoint(path("resumed.jsonl"), ck, 50);
    };
    const auto outcome = rotor::testing::kill_and_resume(plan);
    ASSERT_EQ(outcome.kills, 3)
        << "the run was too fast to be interrupted: the test proves nothing";
    ASSERT_EQ(outcome.last_exit, 0);
    EXPECT_EQ(read_text(path("resumed.txt")), read_text(path("straight.txt")));
    rotor::testing::expect_same_records(path("straight.jsonl"), path("resumed.jsonl"), "objective");
}

TEST_F(LogregTrainRun, ResumeRefusesConflictingFlagsByNameAndOtherData) {
    ASSERT_EQ(train(" --iterations 40 --checkpoint-every 20 --out " + path("a.txt")).code, 0);
    const std::string ck = path("a.txt.checkpoint");
    ASSERT_TRUE(fs::exists(ck + "/state.json"));
    for (const std::string flag : {"--lambda 0.25", "--blocks 5", "--seed 9", "--delay 2"}) {
        const auto r =
            run_rotor(dir_, "logreg train --data " + data_ + " " + flag +
                                " --iterations 60 -q --resume " + ck + " --out " + path("b.txt"));
        EXPECT_EQ(r.code, 3) << flag;
        EXPECT_NE(r.err.find(flag.substr(0, flag.find(' '))), std::string::npos) << r.err;
    }
    const std::string other = dir_.write("other.svm", "1 1:1\n-1 2:1\n");
    const auto r =
        run_rotor(dir_, "logreg train --data " + other + " --iterations 60 -q --resume " + ck +
                            " --out " + path("b.txt"));
    EXPECT_EQ(r.code, 3);
    EXPECT_NE(r.err.find("other data"), std::string::npos) << r.err;
    // The same flags and a larger total continue: 40 then 20 more equals 60 straight.
    ASSERT_EQ(train(" --iterations 60 --out " + path("s60.txt")).code, 0);
    ASSERT_EQ(train(" --iterations 60 --resume " + ck + " --out " + path("r60.txt")).code, 0);
    EXPECT_EQ(read_text(path("r60.txt")), read_text(path("s60.txt")));
}

TEST_F(LogregTrainRun, MaxMemoryRefusedBeforeLoadingAndStragglerChecked) {
    const auto r = train(" --max-memory 1M --out " + path("m.txt"));
    EXPECT_EQ(r.code, 3);
    EXPECT_NE(r.err.find("--max-memory"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("m.txt")));
    for (const std::string bad : {"1", "0:0.5", "x:2", "0:2:3", "5:2"}) {
        const auto s = train(" --simulate-straggler " + bad + " --out " + path("s.txt"));
        EXPECT_EQ(s.code, 3) << bad;
        EXPECT_NE(s.err.find("--simulate-straggler"), std::string::npos) << s.err;
    }
    ASSERT_EQ(train(" --out " + path("plain.txt")).code, 0);
    const auto slow = train(" --simulate-straggler 0:2 --out " + path("slow.txt"));
    ASSERT_EQ(slow.code, 0) << slow.err;
    EXPECT_EQ(read_text(path("slow.txt")), read_text(path("plain.txt")));  // slower, same model
}

TEST_F(LogregTrainRun, BinaryFormTrainsTheSameModel) {
    const auto b = run_rotor(dir_, "logreg build -q --data " + data_ + " --out " + path("t.bin"));
    ASSERT_EQ(b.code, 0) << b.err;
    ASSERT_EQ(train(" --out " + path("text.txt")).code, 0);
    const auto r = run_rotor(dir_, "logreg train --data " + path("t.bin") + flags_ +
                                       " --iterations 80 --out " + path("bin.txt"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_text(path("bin.txt")), read_text(path("text.txt")));
    const auto e1 = run_rotor(dir_, "logreg eval -m " + path("bin.txt") + " -d " + path("t.bin"));
    const auto e2 = run_rotor(dir_, "logreg eval -m " + path("bin.txt") + " -d " + data_);
    ASSERT_EQ(e1.code, 0) << e1.err;
    EXPECT_EQ(e1.out, e2.out);
}

#ifdef ROTOR_MPIEXEC
std::string mpiexec(int ranks) {
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    ::setenv("OMPI_MCA_mpi_yield_when_idle", "1", 1);
    return std::string(ROTOR_MPIEXEC) + " -n " + std::to_string(ranks) +
           " --oversubscribe " ROTOR_BINARY_DIR "/apps/rotor";
}

int system_quiet(const std::string& cmd, const std::string& log) {
    return std::system((cmd + " > " + log + " 2>&1").c_str());
}

// Parts read by each worker (byte ranges, or rows of the binary form) give the model of one
// process that read everything; a checkpoint of 3 ranks resumes on 4 and on 1.
TEST_F(LogregTrainRun, PartsPerRankGiveOneProcessModelAndResumeAcrossRankCounts) {
    ASSERT_EQ(train(" --out " + path("one.txt")).code, 0);
    ASSERT_EQ(run_rotor(dir_, "logreg build -q --data " + data_ + " --out " + path("t.bin")).code,
              0);
    for (const std::string& input : {data_, path("t.bin")}) {
        const std::string out = path("four.txt");
        ASSERT_EQ(system_quiet(mpiexec(4) + " logreg train --data " + input + flags_ +
                                   " --iterations 80 --servers 1 --overwrite --out " + out,
                               path("mpi.log")),
                  0)
            << read_text(path("mpi.log"));
        EXPECT_EQ(read_text(out), read_text(path("one.txt"))) << input;
    }
    const std::string ck = path("ck3");
    ASSERT_EQ(system_quiet(mpiexec(3) + " logreg train --data " + data_ + flags_ +
                               " --iterations 40 --checkpoint-every 40 --checkpoint-dir " + ck +
                               " --out " + path("half.txt"),
                           path("mpi.log")),
              0)
        << read_text(path("mpi.log"));
    ASSERT_EQ(
        system_quiet(mpiexec(4) + " logreg train --data " + data_ + flags_ +
                         " --iterations 80 --servers 2 --resume " + ck + " --out " + path("r4.txt"),
                     path("mpi.log")),
        0)
        << read_text(path("mpi.log"));
    EXPECT_EQ(read_text(path("r4.txt")), read_text(path("one.txt")));
    // Resumed at its end on 4 ranks: nothing to run, the same model.
    ASSERT_EQ(system_quiet(mpiexec(4) + " logreg train --data " + data_ + flags_ +
                               " --iterations 40 --servers 2 --resume " + ck + " --out " +
                               path("end4.txt"),
                           path("mpi.log")),
              0)
        << read_text(path("mpi.log"));
    EXPECT_EQ(read_text(path("end4.txt")), read_text(path("half.txt")));
    ASSERT_EQ(train(" --resume " + ck + " --out " + path("r1.txt")).code, 0);
    EXPECT_EQ(read_text(path("r1.txt")), read_text(path("one.txt")));
}

// Every rank reads the block file: 3 ranks give one process's model with the same groups.
TEST_F(LogregTrainRun, BlockFileUnderMpiexecGivesOneProcessModel) {
    std::string text;
    for (std::uint64_t k = 0; k < 40; ++k)  // synthetic_examples' keys
        text += fmt::format("{}\tg{}\n", (k + 1) * 0x9E3779B97F4A7C1ULL, k % 4);
    const std::string with = " --block-file " + dir_.write("g.blocks", text);
    ASSERT_EQ(train(with + " --out " + path("one.txt")).code, 0);
    ASSERT_EQ(system_quiet(mpiexec(3) + " logreg train --data " + data_ + flags_ + with +
                               " --iterations 80 --servers 1 --out " + path("three.txt"),
                           path("mpi.log")),
              0)
        << read_text(path("mpi.log"));
    EXPECT_EQ(read_text(path("three.txt")), read_text(path("one.txt")));
}

// A bad line in the last rank's part is reported with its line number in the whole file.
TEST_F(LogregTrainRun, AnErrorInALaterPartNamesItsLineInTheFile) {
    std::string text = read_text(data_);
    const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    text += "1 5:1 3:1\n";
    const std::string bad = dir_.write("bad.svm", text);
    const auto code = system_quiet(mpiexec(3) + " logreg train --data " + bad + flags_ +
                                       " --iterations 80 --out " + path("x.txt"),
                                   path("mpi.log"));
    EXPECT_NE(code, 0);
    EXPECT_NE(read_text(path("mpi.log"))
                  .find(fmt::format("{}:{}:7: feature key 3 does not increase", bad, lines + 1)),
              std::string::npos)
        << read_text(path("mpi.log"));
}
#endif

TEST_F(LogregTrainRun, BlockFileGroupsAreModelDefiningAndItsErrorsNameTheLine) {
    std::string text, other;
    for (std::uint64_t k = 0; k < 40; ++k) {  // synthetic_examples' keys
        const std::uint64_t key = (k + 1) * 0x9E3779B97F4A7C1ULL;
        text += fmt::format("{}\tg{}\n", key, k % 4);
        other += fmt::format("{}\tg{}\n", key, k % 3);
    }
    const std::string groups = dir_.write("g.blocks", text), moved = dir_.write("o.blocks", other);
    const std::string with = " --block-file " + groups;
    ASSERT_EQ(train(with + " --iterations 40 --checkpoint-every 20 --out " + path("a.txt")).code,
              0);
    ASSERT_EQ(train(" --iterations 40 --out " + path("h.txt")).code, 0);
    EXPECT_NE(read_text(path("a.txt")), read_text(path("h.txt")));
    const std::string ck = path("a.txt.checkpoint");
    for (const std::string& flag : {std::string(), " --block-file " + moved}) {
        const auto r = train(flag + " --iterations 60 --resume " + ck + " --out " + path("b.txt"));
        EXPECT_EQ(r.code, 3) << flag;
        EXPECT_NE(r.err.find("--block-file"), std::string::npos) << r.err;
    }
    ASSERT_EQ(train(with + " --iterations 60 --out " + path("s60.txt")).code, 0);
    ASSERT_EQ(train(with + " --iterations 60 --resume " + ck + " --out " + path("r60.txt")).code,
              0);
    EXPECT_EQ(read_text(path("r60.txt")), read_text(path("s60.txt")));
    const std::string bad = dir_.write("bad.blocks", "1\ta\n2 b\n");
    const auto r = train(" --block-file " + bad + " --out " + path("c.txt"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(bad + ":2:1: expected key<TAB>group"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("c.txt")));
}

}  // namespace
}  // namespace rotor::apps
