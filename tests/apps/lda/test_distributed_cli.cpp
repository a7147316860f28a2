// `mpiexec -n P rotor lda train` with --heldout, --optimize-alpha, --trace, --checkpoint-every and
// --resume, through the real binary on real files (docs/distributed.md). This test is a plain
// process: it starts mpiexec itself, for P = 2 and 3 (ctest passes the environment that lets
// Open MPI run as root and oversubscribe).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/corpus/corpus.h"
#include "core/lda/model.h"

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

    // --coherence-top (default 10) under MPI: the last evaluation's mean equals `rotor lda
    // coherence` on the saved model (its last line: "mean<TAB>value", four decimals).
    for (int iter : {3, 6}) ASSERT_TRUE(records.at(iter).contains("coherence_umass")) << iter;
    const Outcome c = run(kRotor + " lda coherence --model " + path("model") + " --corpus " +
                          kTrain + " --top 10");
    ASSERT_EQ(c.code, 0) << c.out;
    const std::string tag = "\nmean\t";
    const auto at = c.out.find(tag);
    ASSERT_NE(at, std::string::npos) << c.out;
    EXPECT_NEAR(records.at(6).at("coherence_umass").get<double>(),
                std::stod(c.out.substr(at + tag.size())), 0.00006)
        << c.out;

    std::ifstream params(path("model/params.json"));
    const auto p = nlohmann::json::parse(params);
    const auto alpha = p.at("alpha").get<std::vector<double>>();
    ASSERT_EQ(alpha.size(), static_cast<std::size_t>(kTopics));
    EXPECT_NE(*std::min_element(alpha.begin(), alpha.end()),
              *std::max_element(alpha.begin(), alpha.end()))
        << "alpha was not optimised";
    for (double a : alpha) EXPECT_GT(a, 0.0);
}

// --max-memory is checked per rank before anything big is allocated: every rank refuses alike,
// the message is printed once, the exit is non-zero and no model is written.
TEST_P(DistributedCli, MaxMemoryIsCheckedPerRank) {
    const int ranks = GetParam();
    const Outcome r =
        // 70K holds the corpus while it is read (1K is refused then, naming the file's line) but
        // not a rank's share of the run.
        mpi_train(ranks, "--corpus " + kTrain + " -k 4 -n 2 --threads 1 --max-memory 70K --out " +
                             path("model"));
    EXPECT_NE(r.code, 0) << r.out;
    EXPECT_EQ(count(r.out, "each rank needs about"), 1u) << r.out;
    EXPECT_EQ(count(r.out, "--max-memory"), 2u) << r.out;  // the key and the advice
    EXPECT_FALSE(fs::exists(path("model")));
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

nlohmann::json read_json(const std::string& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

std::map<int, nlohmann::json> read_metrics(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::map<int, nlohmann::json> records;
    while (std::getline(in, line)) {
        const auto j = nlohmann::json::parse(line);
        records[j.at("iter").get<int>()] = j;
    }
    return records;
}

/// The counts of a saved model are consistent with the corpus: word rows sum to the words'
/// frequencies, doc rows to the docs' lengths, columns to the topic totals.
void expect_consistent_model(const std::string& dir) {
    const rotor::lda::LdaModel m = rotor::lda::load_model(dir);
    const rotor::core::LoadedCorpus c = rotor::core::load_corpus(kTrain, "");
    ASSERT_EQ(m.word_topic.rows(), c.corpus.num_words());
    ASSERT_EQ(m.doc_topic.rows(), c.corpus.num_docs());
    const auto freq = c.corpus.word_frequencies();
    std::vector<std::int64_t> col(m.info.num_topics, 0);
    std::size_t bad_words = 0;
    for (std::uint32_t w = 0; w < c.corpus.num_words(); ++w) {
        std::int64_t sum = 0;
        for (auto i = m.word_topic.offsets[w]; i < m.word_topic.offsets[w + 1]; ++i) {
            sum += m.word_topic.counts[i];
            col[m.word_topic.topics[i]] += m.word_topic.counts[i];
        }
        bad_words += sum != static_cast<std::int64_t>(freq[w]);
    }
    EXPECT_EQ(bad_words, 0u);
    for (std::uint32_t k = 0; k < m.info.num_topics; ++k)
        EXPECT_EQ(col[k], static_cast<std::int64_t>(m.topic_totals[k])) << "topic " << k;
    std::size_t bad_docs = 0;
    for (std::uint32_t d = 0; d < c.corpus.num_docs(); ++d) {
        std::uint64_t sum = 0;
        for (auto i = m.doc_topic.offsets[d]; i < m.doc_topic.offsets[d + 1]; ++i)
            sum += m.doc_topic.counts[i];
        bad_docs += sum != c.corpus.doc_length(d);
    }
    EXPECT_EQ(bad_docs, 0u);
}

/// `rotor: resumed DIR at iteration N (loglik X)`: X, or NaN when the line is missing.
double resumed_loglik(const std::string& out, int iteration) {
    const std::string mark = "at iteration " + std::to_string(iteration) + " (loglik ";
    const auto pos = out.find(mark);
    if (pos == std::string::npos) return std::nan("");
    return std::stod(out.substr(pos + mark.size()));
}

// --checkpoint-every 2 on a 2-iteration run checkpoints its last iteration (one part per rank,
// the manifest written last). Resumed with a larger --iterations (and another --threads: the
// grid comes from the checkpoint), the run starts from exactly the saved state (its
// log-likelihood is the one the first run recorded at iteration 2), reports iterations 3 and 4
// only, and reaches the model of an uninterrupted 4-iteration run (the same tokens sampled).
TEST_P(DistributedCli, ResumedRunStartsFromTheCheckpointedState) {
    const int ranks = GetParam();
    const std::string common = "--corpus " + kTrain + " -k 6 --no-timer --eval-every 2";
    const Outcome r = mpi_train(ranks, common + " -n 2 --threads 1 --checkpoint-every 2" +
                                           " --checkpoint-dir " + path("ck") + " --metrics " +
                                           path("m1.jsonl") + " --out " + path("model1"));
    ASSERT_EQ(r.code, 0) << r.out;
    const auto state = read_json(path("ck/state.json"));
    EXPECT_EQ(state.at("format").get<std::string>(), "rotor-lda-checkpoint");
    EXPECT_EQ(state.at("ranks").get<int>(), ranks);
    EXPECT_EQ(state.at("iterations_done").get<int>(), 2);
    EXPECT_EQ(state.at("iterations").get<int>(), 2);
    ASSERT_EQ(state.at("parts").size(), static_cast<std::size_t>(ranks));
    for (const auto& part : state.at("parts")) {
        const std::string file = path("ck/" + part.at("file").get<std::string>());
        ASSERT_TRUE(fs::exists(file)) << file;
        EXPECT_EQ(fs::file_size(file), part.at("bytes").get<std::uint64_t>());
    }
    for (const auto& e : fs::directory_iterator(dir_))
        EXPECT_EQ(e.path().filename().string().find("ck."), std::string::npos)
            << "left behind: " << e.path();
    expect_consistent_model(path("model1"));
    const auto first = read_metrics(path("m1.jsonl"));
    ASSERT_EQ(first.size(), 2u);
    const double ll2 = first.at(2).at("loglik").get<double>();
    const Outcome u = mpi_train(ranks, common + " -n 4 --threads 1 -q --metrics " +
                                           path("m0.jsonl") + " --out " + path("model0"));
    ASSERT_EQ(u.code, 0) << u.out;
    const auto straight = read_metrics(path("m0.jsonl"));
    ASSERT_EQ(straight.size(), 4u);

    const Outcome s = mpi_train(ranks, "--corpus " + kTrain + " --resume " + path("ck") +
                                           " -n 4 --threads 2 --metrics " + path("m2.jsonl") +
                                           " --out " + path("model2"));
    ASSERT_EQ(s.code, 0) << s.out;
    EXPECT_EQ(count(s.out, "rotor: resumed"), 1u) << s.out;
    EXPECT_EQ(count(s.out, "rotor: model written to"), 1u) << s.out;
    const double restored = resumed_loglik(s.out, 2);
    EXPECT_NEAR(restored, ll2, 1e-9 * std::abs(ll2)) << s.out;
    const auto second = read_metrics(path("m2.jsonl"));
    ASSERT_EQ(second.size(), 2u);
    EXPECT_EQ(second.begin()->first, 3);
    EXPECT_TRUE(second.at(4).contains("loglik"));
    EXPECT_EQ(second.at(4).at("tokens_sampled"), straight.at(4).at("tokens_sampled"));
    EXPECT_EQ(read_json(path("model2/params.json")).at("iterations").get<int>(), 4);
    expect_consistent_model(path("model2"));
    // A larger --iterations continues further.
    const Outcome t = mpi_train(ranks, "--corpus " + kTrain + " --resume " + path("ck") +
                                           " -n 5 --threads 1 -q --out " + path("model3"));
    ASSERT_EQ(t.code, 0) << t.out;
    EXPECT_EQ(read_json(path("model3/params.json")).at("iterations").get<int>(), 5);
    expect_consistent_model(path("model3"));
}

// Resuming with another number of ranks redistributes the documents: each rank takes the ones
// of its static split from whichever parts hold them, and the run starts from exactly the saved
// state (the log-likelihood the first run recorded at the checkpoint). A single process (one rank)
// resumes it the same way, and a checkpoint it writes resumes on P ranks again.
TEST_P(DistributedCli, ResumeWithOtherRankCountRedistributesDocuments) {
    const int ranks = GetParam();
    // The checkpoint of the last iteration (2), continued to 3 on another number of ranks.
    const Outcome r = mpi_train(ranks, "--corpus " + kTrain +
                                           " -k 4 -n 2 --threads 1 -q --no-timer --eval-every 1"
                                           " --checkpoint-every 2 --checkpoint-dir " +
                                           path("ck") + " --metrics " + path("m1.jsonl") +
                                           " --out " + path("model"));
    ASSERT_EQ(r.code, 0) << r.out;
    const double ll2 = read_metrics(path("m1.jsonl")).at(2).at("loglik").get<double>();
    const int other = ranks == 2 ? 3 : 2;
    const Outcome s = mpi_train(other, "--corpus " + kTrain + " --resume " + path("ck") +
                                           " -n 3 --threads 1 --out " + path("resumed"));
    ASSERT_EQ(s.code, 0) << s.out;
    const std::string message =
        "written by " + std::to_string(ranks) + " ranks, now on " + std::to_string(other);
    EXPECT_EQ(count(s.out, message), 1u) << s.out;
    EXPECT_NEAR(resumed_loglik(s.out, 2), ll2, 1e-9 * std::abs(ll2)) << s.out;
    EXPECT_EQ(read_json(path("resumed/params.json")).at("iterations").get<int>(), 3);
    expect_consistent_model(path("resumed"));

    const Outcome single = run(kRotor + " lda train --corpus " + kTrain + " --resume " +
                               path("ck") + " --threads 1 --checkpoint-every 1 --checkpoint-dir " +
                               path("ck1") + " -n 4 --out " + path("single"));
    ASSERT_EQ(single.code, 0) << single.out;
    EXPECT_EQ(count(single.out, "written by " + std::to_string(ranks) + " ranks, now on 1"), 1u)
        << single.out;
    EXPECT_NEAR(resumed_loglik(single.out, 2), ll2, 1e-9 * std::abs(ll2)) << single.out;
    EXPECT_EQ(read_json(path("single/params.json")).at("iterations").get<int>(), 4);
    expect_consistent_model(path("single"));
    // And back from one process to P ranks.
    const Outcome back = mpi_train(ranks, "--corpus " + kTrain + " --resume " + path("ck1") +
                                              " --threads 1 -n 5 --out " + path("back"));
    ASSERT_EQ(back.code, 0) << back.out;
    EXPECT_EQ(count(back.out, "written by 1 rank, now on " + std::to_string(ranks)), 1u)
        << back.out;
    EXPECT_EQ(read_json(path("back/params.json")).at("iterations").get<int>(), 5);
    expect_consistent_model(path("back"));
}

// A part truncated, corrupt or missing is refused on every rank, naming the file, printed once.
TEST_P(DistributedCli, BrokenPartIsDetected) {
    const int ranks = GetParam();
    const Outcome r =
        mpi_train(ranks, "--corpus " + kTrain + " -k 4 -n 2 --threads 1 -q --checkpoint-every 1" +
                             " --checkpoint-dir " + path("ck") + " --out " + path("model"));
    ASSERT_EQ(r.code, 0) << r.out;
    const std::string part = path("ck/part-0000" + std::to_string(ranks - 1) + ".bin");
    const std::string resume =
        "--corpus " + kTrain + " --resume " + path("ck") + " --threads 1 --out " + path("resumed");
    fs::copy_file(part, path("part.bak"));

    fs::resize_file(part, fs::file_size(part) - 1);
    Outcome s = mpi_train(ranks, resume);
    EXPECT_NE(s.code, 0) << s.out;
    EXPECT_EQ(count(s.out, part + ": has"), 1u) << s.out;

    fs::remove(part);
    fs::copy_file(path("part.bak"), part);
    {
        std::fstream f(part, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(40);
        f.put('\x7f');
    }
    s = mpi_train(ranks, resume);
    EXPECT_NE(s.code, 0) << s.out;
    EXPECT_EQ(count(s.out, part + ": checksum"), 1u) << s.out;

    fs::remove(part);
    s = mpi_train(ranks, resume);
    EXPECT_NE(s.code, 0) << s.out;
    EXPECT_EQ(count(s.out, part + ": missing: the manifest lists it"), 1u) << s.out;
    EXPECT_FALSE(fs::exists(path("resumed")));

    // Restored, the checkpoint resumes.
    fs::copy_file(path("part.bak"), part);
    s = mpi_train(ranks, resume + " -q");
    EXPECT_EQ(s.code, 0) << s.out;
    EXPECT_TRUE(fs::exists(path("resumed/params.json")));
}

/// Every process below `root` (from /proc), so that a job's ranks are killed with it even if
/// the launcher moved them to a process group of their own.
std::vector<pid_t> descendants(pid_t root) {
    std::map<pid_t, std::vector<pid_t>> children;
    for (const auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(e.path() / "stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        const auto close = line.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(line.substr(close + 2));
        char state = 0;
        long ppid = 0;
        rest >> state >> ppid;
        children[static_cast<pid_t>(ppid)].push_back(static_cast<pid_t>(std::stol(name)));
    }
    std::vector<pid_t> out;
    std::vector<pid_t> todo{root};
    while (!todo.empty()) {
        const pid_t p = todo.back();
        todo.pop_back();
        for (pid_t c : children[p]) {
            out.push_back(c);
            todo.push_back(c);
        }
    }
    return out;
}

// The job killed (SIGKILL to mpiexec and its ranks) while it writes checkpoints every
// iteration: the checkpoint directory still holds the last whole checkpoint, which resumes; the
// next run with --checkpoint-every clears the killed job's temporaries.
TEST_P(DistributedCli, KilledJobLeavesLastWholeCheckpoint) {
    const int ranks = GetParam();
    const std::string log = path("killed.log");
    const std::string cmd = kMpiexec + " -n " + std::to_string(ranks) + " --oversubscribe " +
                            kRotor + " lda train --corpus " + kTrain +
                            " -k 4 -n 100000 --threads 1 --no-timer --eval-every 0 -q"
                            " --checkpoint-every 1 --checkpoint-dir " +
                            path("ck") + " --out " + path("model") + " > " + log + " 2>&1";
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::setpgid(0, 0);  // mpiexec and its ranks in a group of their own, killed together
        ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::setpgid(pid, pid);
    // Wait for a few whole checkpoints, then kill while the next one is being written (a
    // temporary directory beside the checkpoint), or after 30 s at the latest.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    bool writing = false;
    int iteration = 0;
    while (std::chrono::steady_clock::now() < deadline && !writing) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        if (fs::exists(path("ck/state.json"))) {
            try {
                iteration = read_json(path("ck/state.json")).at("iterations_done").get<int>();
            } catch (const std::exception&) {
                // replaced while reading: try again
            }
        }
        if (iteration >= 3)
            for (const auto& e : fs::directory_iterator(dir_))
                if (e.path().filename().string().rfind("ck.tmp.", 0) == 0) writing = true;
    }
    const std::vector<pid_t> job = descendants(pid);
    ::kill(-pid, SIGKILL);
    for (pid_t p : job) ::kill(p, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    // The ranks are gone once reaped (a zombie still counts as a live process for the
    // clean-up of stale temporaries, as for any pid check).
    const auto reaped_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (pid_t p : job)
        while (::kill(p, 0) == 0 && std::chrono::steady_clock::now() < reaped_by)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_GE(iteration, 3) << "no checkpoint within 30 s";
    EXPECT_FALSE(fs::exists(path("model")));
    ASSERT_TRUE(fs::exists(path("ck/state.json")));
    const int saved = read_json(path("ck/state.json")).at("iterations_done").get<int>();
    EXPECT_GE(saved, iteration);

    const Outcome s = mpi_train(ranks, "--corpus " + kTrain + " --resume " + path("ck") + " -n " +
                                           std::to_string(saved + 2) +
                                           " --threads 1 --checkpoint-every 1 --checkpoint-dir " +
                                           path("ck") + " --out " + path("resumed"));
    ASSERT_EQ(s.code, 0) << s.out;
    EXPECT_EQ(
        count(s.out, "rotor: resumed " + path("ck") + " at iteration " + std::to_string(saved)), 1u)
        << s.out;
    EXPECT_EQ(read_json(path("resumed/params.json")).at("iterations").get<int>(), saved + 2);
    expect_consistent_model(path("resumed"));
    // Its checkpoints go on to the last iteration.
    EXPECT_EQ(read_json(path("ck/state.json")).at("iterations_done").get<int>(), saved + 2);
    for (const auto& e : fs::directory_iterator(dir_)) {
        const std::string name = e.path().filename().string();
        EXPECT_TRUE(name.rfind("ck.tmp.", 0) != 0 && name.rfind("ck.old.", 0) != 0)
            << "left behind: " << name;
    }
}

/// The lines of `out` that start with "rotor: error:".
std::vector<std::string> error_lines(const std::string& out) {
    std::vector<std::string> lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("rotor: error:", 0) == 0) lines.push_back(line);
    return lines;
}

// Under mpiexec, a bad flag, an empty corpus and a missing output directory fail early with the
// error of one process, printed once, in seconds (no rank waits for another); a job with more ranks
// than documents (it trained silently) is refused the same way. Every model's train follows the
// rule (train::check_work_per_rank): MF's users, the Lasso's samples, logreg's examples.
TEST_P(DistributedCli, EarlyErrorsAreThoseOfOneProcessPrintedOnce) {
    const int ranks = GetParam();
    std::ofstream(path("empty.txt")) << "0\n3\n0\n";
    std::ofstream(path("one.txt")) << "1\n3\n2\n1 1 2\n1 2 1\n";
    const auto t0 = std::chrono::steady_clock::now();
    for (const std::string& args :
         {"--corpus " + kTrain + " --bogus 3", "--corpus " + path("empty.txt"),
          "--corpus " + kTrain + " --out /nonexistent/dir/m"}) {
        const Outcome one = run(kRotor + " lda train -q --out " + path("m") + " " + args);
        const Outcome many = mpi_train(ranks, "-q --out " + path("m") + " " + args);
        ASSERT_EQ(error_lines(one.out).size(), 1u) << one.out;
        EXPECT_EQ(error_lines(many.out), error_lines(one.out)) << many.out;
        EXPECT_EQ(many.code, one.code) << many.out;
    }
    EXPECT_FALSE(fs::exists("/nonexistent"));
    const Outcome single = run(kRotor + " lda train -q --threads 1 -n 1 --corpus " +
                               path("one.txt") + " --out " + path("m1"));
    EXPECT_EQ(single.code, 0) << single.out;
    const std::string refused =
        "rotor: error: mpiexec -n: " + std::to_string(ranks) + " ranks share 1 ";
    Outcome r =
        mpi_train(ranks, "-q --threads 1 -n 1 --corpus " + path("one.txt") + " --out " + path("m"));
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_EQ(count(r.out, refused + "documents"), 1u) << r.out;
    std::ofstream(path("one.csv")) << "u,i,r\nu1,i1,3\nu1,i2,4\nu1,i3,5\n";
    r = run(kMpiexec + " -n " + std::to_string(ranks) + " --oversubscribe " + kRotor +
            " mf train -q --threads 1 -n 1 --train " + path("one.csv") + " --out " + path("mf"));
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_EQ(count(r.out, refused + "users"), 1u) << r.out;
    std::ofstream(path("one.svm")) << "1 1:1\n";
    r = run(kMpiexec + " -n " + std::to_string(ranks) + " --oversubscribe " + kRotor +
            " lasso train -q --threads 1 --lambda 0.1 --data " + path("one.svm") + " --out " +
            path("l.txt"));
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_EQ(count(r.out, refused + "samples"), 1u) << r.out;
    r = run(kMpiexec + " -n " + std::to_string(ranks) + " --oversubscribe " + kRotor +
            " logreg train -q --lambda 0.1 --data " + path("one.svm") + " --out " + path("g.txt"));
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_EQ(count(r.out, refused + "examples"), 1u) << r.out;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60);
}

INSTANTIATE_TEST_SUITE_P(Ranks, DistributedCli, ::testing::Values(2, 3));

}  // namespace
