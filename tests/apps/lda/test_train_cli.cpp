// `rotor lda train`, `topics` and `export` through the real binary, on real files.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

const std::string kRotor = ROTOR_BINARY_DIR "/apps/rotor";
const std::string kTrain = ROTOR_SOURCE_DIR "/data/tiny/train/docword.txt.gz";
const std::string kHeldout = ROTOR_SOURCE_DIR "/data/tiny/heldout/docword.txt.gz";

struct Outcome {
    int code;
    std::string out;  // stdout and stderr
};

/// Runs a shell command line, its stderr with its stdout.
Outcome run_shell(const std::string& line) {
    const std::string cmd = line + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    const int status = pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

Outcome run(const std::string& args) { return run_shell(kRotor + " " + args); }

class TrainCli : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("rotor-train-cli-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    fs::path dir_;
};

TEST_F(TrainCli, HeldoutCoherenceAlphaAndTraceReachTheirFiles) {
    const Outcome r =
        run("lda train --corpus " + kTrain + " --heldout " + kHeldout +
            " --topics 6 --iterations 6 --eval-every 3 --optimize-alpha 2 --threads 2"
            " --blocks 3 --metrics " +
            path("m.jsonl") + " --trace " + path("t.json") + " --out " + path("model"));
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("iter 6/6"), std::string::npos) << r.out;

    std::ifstream metrics(path("m.jsonl"));
    std::string line;
    int records = 0, evaluated = 0;
    while (std::getline(metrics, line)) {
        const auto j = nlohmann::json::parse(line);
        ++records;
        EXPECT_EQ(j.at("iter").get<int>(), records);
        EXPECT_DOUBLE_EQ(j.at("processed_ratio").get<double>(), 1.0);
        if (j.contains("loglik")) {
            ++evaluated;
            EXPECT_GT(j.at("heldout_perplexity").get<double>(), 1.0);
            EXPECT_LT(j.at("heldout_loglik_per_token").get<double>(), 0.0);
            EXPECT_LT(j.at("coherence_umass").get<double>(), 0.0);
        }
    }
    EXPECT_EQ(records, 6);
    EXPECT_EQ(evaluated, 2);

    std::ifstream params(path("model/params.json"));
    const auto p = nlohmann::json::parse(params);
    const auto alpha = p.at("alpha").get<std::vector<double>>();
    ASSERT_EQ(alpha.size(), 6u);
    EXPECT_NE(alpha[0], 50.0 / 6) << "--optimize-alpha left alpha at its default";

    std::ifstream trace(path("t.json"));
    const auto t = nlohmann::json::parse(trace);
    int blocks = 0;
    for (const auto& e : t.at("traceEvents"))
        if (e.at("ph") == "X") ++blocks;
    EXPECT_EQ(blocks, 6 * 3 * 3);  // every block of the 3x3 grid in every iteration
}

TEST_F(TrainCli, ExportedCountsSumToTheCorpusAndTopicsShowCoherence) {
    ASSERT_EQ(
        run("lda train -q --corpus " + kTrain + " --topics 5 --iterations 3 --out " + path("model"))
            .code,
        0);
    ASSERT_EQ(
        run("lda export --model " + path("model") + " --format tsv --out " + path("tsv")).code, 0);
    long total = 0;
    std::ifstream wt(path("tsv/word_topic.tsv"));
    std::string word;
    int topic = 0;
    long count = 0;
    while (wt >> word >> topic >> count) {
        ASSERT_GE(topic, 0);
        ASSERT_LT(topic, 5);
        ASSERT_GT(count, 0);
        total += count;
    }
    EXPECT_EQ(total, 7669);  // data/tiny/README.md: train tokens
    long doc_total = 0;
    std::ifstream dt(path("tsv/doc_topic.tsv"));
    long doc = 0;
    while (dt >> doc >> topic >> count) doc_total += count;
    EXPECT_EQ(doc_total, 7669);

    const Outcome topics =
        run("lda topics --model " + path("model") + " --top 5 --corpus " + kTrain);
    ASSERT_EQ(topics.code, 0) << topics.out;
    EXPECT_NE(topics.out.find("mean UMass coherence"), std::string::npos) << topics.out;
    EXPECT_NE(topics.out.find("topic   4"), std::string::npos) << topics.out;
    // A header names the columns.
    EXPECT_EQ(topics.out.rfind("topic      share   umass   top 5 words\n", 0), 0u) << topics.out;
}

TEST_F(TrainCli, MemoryPlanRefusesBeforeAllocating) {
    const Outcome r =
        // 100K holds the corpus as it is read (1K no longer does: refused while reading, see
        // HugeCountsAreRefusedAtTheirLineBeforeAllocating) but not the run's 244 KiB.
        run("lda train --corpus " + kTrain + " --topics 5 --max-memory 100K --out " +
            path("model"));
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_NE(r.out.find("rotor: error: --max-memory: this run needs about"), std::string::npos)
        << r.out;
    EXPECT_FALSE(fs::exists(path("model")));
}

// A few bytes of UCI whose counts ask for terabytes: refused at the line that takes the corpus
// over the memory limit, before its tokens are allocated (exit 3 against --max-memory, which is
// consulted before the corpus is read; exit 2 against this machine's memory).
TEST_F(TrainCli, HugeCountsAreRefusedAtTheirLineBeforeAllocating) {
    {
        std::ofstream bad(path("docword.txt"));
        bad << "40\n3\n40\n";
        for (int d = 1; d <= 40; ++d) bad << d << " 2 4294967295\n";  // 32 GiB per line
    }
    const auto started = std::chrono::steady_clock::now();
    const Outcome flag = run("lda train --corpus " + path("docword.txt") +
                             " --topics 3 --max-memory 1G --out " + path("model"));
    EXPECT_EQ(flag.code, 3) << flag.out;
    EXPECT_NE(flag.out.find("rotor: error: --max-memory: " + path("docword.txt") +
                            ":4:5: "
                            "4294967295 tokens in documents 1 to 1 need about 32.0 GiB to read, "
                            "more than --max-memory 1G"),
              std::string::npos)
        << flag.out;
    const Outcome machine = run("corpus info --corpus " + path("docword.txt"));
    EXPECT_EQ(machine.code, 2) << machine.out;
    EXPECT_NE(machine.out.find("rotor: error: " + path("docword.txt") + ":"), std::string::npos)
        << machine.out;
    EXPECT_NE(machine.out.find("of this machine's memory; see --max-memory"), std::string::npos)
        << machine.out;
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
    EXPECT_FALSE(fs::exists(path("model")));
}

// More threads than processors: warned once, and the workers take turns on a grid sized for
// the processors, so the demo corpus trains in about the time of a plain run (before: a 91 x 91
// grid for 64 threads, several times slower; 1000 threads never finished).
TEST_F(TrainCli, OversubscribedThreadsAreWarnedAndFinish) {
    const int threads = 32 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const auto started = std::chrono::steady_clock::now();
    const Outcome r = run("lda train --corpus " ROTOR_SOURCE_DIR
                          "/data/sotu-para/train/docword.txt.gz --topics 20 -n 20 --threads " +
                          std::to_string(threads) + " --out " + path("model"));
    const auto took = std::chrono::steady_clock::now() - started;
    ASSERT_EQ(r.code, 0) << r.out;
    const std::string warning = "rotor: warning: " + std::to_string(threads) + " worker threads on";
    ASSERT_NE(r.out.find(warning), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(warning, r.out.find(warning) + 1), std::string::npos) << "warned twice";
    EXPECT_LT(took, std::chrono::seconds(60));
}

// A model directory appears whole or not at all: with the file size limited (as a full disk
// would), saving fails with exit 4 and leaves neither the directory nor a temporary; a
// directory that is not a rotor model is never replaced.
TEST_F(TrainCli, AModelIsWrittenWholeOrNotAtAll) {
    const Outcome full =
        run_shell("sh -c \"trap '' XFSZ; ulimit -f 8; exec " + kRotor + " lda train --corpus " +
                  kTrain + " --topics 50 -n 2 -q --out " + path("model") + "\"");
    EXPECT_EQ(full.code, 4) << full.out;
    EXPECT_TRUE(fs::is_empty(dir_)) << "left: " << fs::directory_iterator(dir_)->path();
    fs::create_directories(path("photos"));
    std::ofstream(path("photos/cat.jpg")) << "meow";
    const Outcome foreign =
        run("lda train --corpus " + kTrain + " --topics 3 -n 2 -q --out " + path("photos"));
    EXPECT_EQ(foreign.code, 3) << foreign.out;
    EXPECT_NE(foreign.out.find("rotor: error: --out: "), std::string::npos) << foreign.out;
    EXPECT_TRUE(fs::exists(path("photos/cat.jpg")));
}

// One rule for every output (docs/reliability.md): what records a run never costs its model. The
// file size limited (as a full disk) while the metrics and the trace are written: the model is
// written whole, the metrics file keeps its whole records, and the run ends with exit 4 naming
// both files and the model (a full metrics file failed the run and left no model).
TEST_F(TrainCli, AFullDiskForTheMetricsAndTraceKeepsTheModelAndNamesThem) {
    const Outcome full = run_shell(
        "sh -c \"trap '' XFSZ; ulimit -f 64; exec " + kRotor + " lda train --corpus " + kTrain +
        " --topics 3 -n 150 --eval-every 0 --threads 1 -q --metrics " + path("m.jsonl") +
        " --trace " + path("t.json") + " --out " + path("model") + "\"");
    EXPECT_EQ(full.code, 4) << full.out;
    EXPECT_NE(full.out.find("rotor: error: cannot write " + path("m.jsonl")), std::string::npos)
        << full.out;
    EXPECT_NE(full.out.find("cannot write " + path("t.json") + ": File too large"),
              std::string::npos)
        << full.out;
    EXPECT_NE(full.out.find("; the model was written to " + path("model")), std::string::npos)
        << full.out;
    EXPECT_EQ(run("lda topics --model " + path("model")).code, 0);
    std::ifstream metrics(path("m.jsonl"));
    int records = 0;
    for (std::string line; std::getline(metrics, line);)
        EXPECT_EQ(nlohmann::json::parse(line).at("iter").get<int>(), ++records);
    EXPECT_GT(records, 0);
    EXPECT_LT(records, 150);
    EXPECT_FALSE(fs::exists(path("t.json")));
}

TEST_F(TrainCli, BadCorpusNamesFileAndLineAndWritesNothing) {
    {
        std::ofstream bad(path("docword.txt"));
        bad << "2\n3\n2\n1 1 4\n1 x 2\n";
    }
    const Outcome r = run("lda train --corpus " + path("docword.txt") + " --topics 3 --out " +
                          path("model") + " --metrics " + path("m.jsonl"));
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("rotor: error: " + path("docword.txt") + ":5:"), std::string::npos)
        << r.out;
    EXPECT_FALSE(fs::exists(path("model")));
    EXPECT_FALSE(fs::exists(path("m.jsonl")));
}

// --out (train and export) is new, or an earlier output replaced only with --overwrite; a
// missing parent directory is refused before training (it was exit 4 after training), and so are
// those of --metrics and --checkpoint-dir; nothing is created above an output.
TEST_F(TrainCli, AnOutputIsNewOrReplacedOnlyWithOverwrite) {
    const std::string train = "lda train --corpus " + kTrain + " -k 3 -n 1 -q --threads 1";
    ASSERT_EQ(run(train + " --out " + path("model")).code, 0);
    Outcome r = run(train + " --out " + path("model"));
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_NE(r.out.find("--out: " + path("model") +
                         " exists (an earlier output of rotor): "
                         "give --overwrite"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(run(train + " --out " + path("model") + " --overwrite").code, 0);

    r = run(train + " --out " + path("no/such/model"));
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_NE(r.out.find("the directory " + path("no/such") + " does not exist"), std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("iter"), std::string::npos) << "trained first: " << r.out;
    EXPECT_EQ(run(train + " --out " + path("m2") + " --metrics " + path("no/m.jsonl")).code, 3);
    EXPECT_EQ(run(train + " --out " + path("m2") + " --checkpoint-every 1 --checkpoint-dir " +
                  path("no/ck"))
                  .code,
              3);
    EXPECT_FALSE(fs::exists(path("no")));
    EXPECT_FALSE(fs::exists(path("m2")));

    // A non-empty directory that is not rotor's is refused even with --overwrite.
    fs::create_directories(path("photos"));
    std::ofstream(path("photos/cat.jpg")) << "meow";
    r = run(train + " --out " + path("photos") + " --overwrite");
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_TRUE(fs::exists(path("photos/cat.jpg")));

    const std::string exp = "lda export --model " + path("model") + " --out ";
    ASSERT_EQ(run(exp + path("tsv")).code, 0);
    EXPECT_EQ(run(exp + path("tsv")).code, 3);
    EXPECT_EQ(run(exp + path("tsv") + " --overwrite").code, 0);
    EXPECT_EQ(run(exp + path("photos") + " --overwrite").code, 3);
    EXPECT_EQ(run(exp + path("no/tsv")).code, 3);
    EXPECT_TRUE(fs::exists(path("photos/cat.jpg")));
    EXPECT_FALSE(fs::exists(path("no")));
}

// params.json records the corpus as an absolute path (it kept the path as typed, so `lda
// topics` run from another directory silently dropped the coherence column); a corpus that has
// moved is said to be missing.
TEST_F(TrainCli, TheModelRecordsItsCorpusSoTopicsFindsItOrSaysItIsGone) {
    fs::create_directories(path("c"));
    fs::copy_file(kTrain, path("c/docword.txt.gz"));
    fs::copy_file(ROTOR_SOURCE_DIR "/data/tiny/train/vocab.txt", path("c/vocab.txt"));
    const Outcome r = run_shell("cd " + path("") + " && " + kRotor +
                                " lda train --corpus c/docword.txt.gz -k 3 -n 2 -q --threads 1"
                                " --out model");
    ASSERT_EQ(r.code, 0) << r.out;
    std::ifstream params(path("model/params.json"));
    const auto j = nlohmann::json::parse(params);
    EXPECT_EQ(j.at("corpus").get<std::string>(), path("c/docword.txt.gz"));
    const Outcome elsewhere =
        run_shell("cd / && " + kRotor + " lda topics --model " + path("model"));
    ASSERT_EQ(elsewhere.code, 0) << elsewhere.out;
    EXPECT_NE(elsewhere.out.find("mean UMass coherence"), std::string::npos) << elsewhere.out;
    fs::rename(path("c"), path("moved"));
    const Outcome gone = run("lda topics --model " + path("model"));
    ASSERT_EQ(gone.code, 0) << gone.out;
    EXPECT_NE(gone.out.find("no coherence: the training corpus " + path("c/docword.txt.gz") +
                            " is not found (give --corpus)"),
              std::string::npos)
        << gone.out;
    const Outcome named =
        run("lda topics --model " + path("model") + " --corpus " + path("moved/docword.txt.gz"));
    ASSERT_EQ(named.code, 0) << named.out;
    EXPECT_NE(named.out.find("mean UMass coherence"), std::string::npos) << named.out;
}

TEST_F(TrainCli, BadFlagsAreConfigErrors) {
    EXPECT_EQ(run("lda train --corpus " + kTrain + " --topics 0 --out " + path("m")).code, 3);
    EXPECT_EQ(run("lda train --corpus " + kTrain + " --alpha 1,x --out " + path("m")).code, 3);
    EXPECT_EQ(run("lda train --corpus " + kTrain + " --beta -1 --out " + path("m")).code, 3);
    EXPECT_EQ(run("lda train --corpus " + kTrain + " --init dense --out " + path("m")).code, 3);
    EXPECT_EQ(run("lda train --corpus " + kTrain + " --init sparse --init-doc-topics 0 --out " +
                  path("m"))
                  .code,
              3);
    EXPECT_FALSE(fs::exists(path("m")));
}

}  // namespace

TEST(TrainHelp, SwitchesShowTheirRealDefault) {
    // CLI11's negated flags printed "--timer,--no-timer{false}" although the timer is on.
    for (const std::string cmd : {"lda train --help", "mf train --help"}) {
        const Outcome r = run(cmd);
        ASSERT_EQ(r.code, 0) << r.out;
        EXPECT_EQ(r.out.find("{false}"), std::string::npos) << cmd << "\n" << r.out;
        EXPECT_NE(r.out.find("--no-timer"), std::string::npos) << cmd;
        EXPECT_NE(r.out.find("time budget (default)"), std::string::npos) << cmd;
    }
}

namespace {

/// The progress line's rate as TerminalReporter prints it (train::human_rate).
std::string human_rate(double r) {
    char buf[32];
    if (r >= 1e6) {
        std::snprintf(buf, sizeof buf, "%.2fM", r / 1e6);
    } else if (r >= 1e3) {
        std::snprintf(buf, sizeof buf, "%.1fk", r / 1e3);
    } else {
        std::snprintf(buf, sizeof buf, "%.0f", r);
    }
    return buf;
}

}  // namespace

// What a person sees: a line per iteration when stdout is not a terminal, whose tokens/s is the
// metrics file's (tokens over seconds of the last 5 iterations), the held-out perplexity on
// evaluation lines, and a closing summary whose rate is all tokens over the last time_s.
TEST_F(TrainCli, ProgressAgreesWithTheMetricsFileAndASummaryCloses) {
    const Outcome r = run("lda train --corpus " + kTrain + " --heldout " + kHeldout +
                          " --topics 5 -n 8 --eval-every 4 --threads 1 --metrics " +
                          path("m.jsonl") + " --out " + path("model"));
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(r.out.find('\r'), std::string::npos) << "not a terminal: no in-place updates";
    EXPECT_NE(r.out.find("; 1 thread, "), std::string::npos) << r.out;  // not "1 threads"
    std::vector<nlohmann::json> records;
    {
        std::ifstream metrics(path("m.jsonl"));
        std::string line;
        while (std::getline(metrics, line)) records.push_back(nlohmann::json::parse(line));
    }
    ASSERT_EQ(records.size(), 8u);
    std::istringstream lines(r.out);
    std::string line;
    std::size_t seen = 0;
    double tokens = 0;
    while (std::getline(lines, line)) {
        if (line.rfind("iter ", 0) != 0) continue;
        const std::size_t i = seen++;
        ASSERT_LT(i, records.size());
        double done = 0, seconds = 0;
        for (std::size_t k = i >= 4 ? i - 4 : 0; k <= i; ++k) {
            done += records[k].at("tokens_sampled").get<double>();
            seconds += records[k].at("iteration_s").get<double>();
        }
        const std::string shown = line.substr(0, line.find(" tok/s"));
        EXPECT_EQ(shown.substr(shown.rfind(' ') + 1), human_rate(done / seconds)) << line;
        const bool evaluated = records[i].contains("heldout_perplexity");
        EXPECT_EQ(line.find("held-out perplexity ") != std::string::npos, evaluated) << line;
        tokens += records[i].at("tokens_sampled").get<double>();
    }
    EXPECT_EQ(seen, 8u) << r.out;
    const std::string summary = r.out.substr(r.out.find("rotor: model written to "));
    const double time_s = records.back().at("time_s").get<double>();
    EXPECT_NE(summary.find("(8 iterations in "), std::string::npos) << summary;
    EXPECT_NE(summary.find(", " + human_rate(tokens / time_s) + " tok/s, loglik/token -"),
              std::string::npos)
        << summary;
    EXPECT_NE(summary.find(", held-out perplexity "), std::string::npos) << summary;
}

// Theme 5: training documents' proportions as a wide table named by the corpus's file names.
TEST_F(TrainCli, DocTopicsTableNamesTheDocumentsOfAFolder) {
    fs::create_directories(path("letters"));
    const char* texts[] = {"kernel driver memory kernel driver", "garden flower garden tree",
                           "kernel memory driver flower"};
    for (int i = 0; i < 3; ++i)
        std::ofstream(path("letters/l" + std::to_string(i) + ".txt")) << texts[i] << "\n";
    ASSERT_EQ(
        run("corpus build --corpus " + path("letters") + " --min-df 1 --out " + path("c.bin")).code,
        0);
    const Outcome r = run("lda train --corpus " + path("c.bin") + " --topics 2 -n 3 -q --out " +
                          path("model") + " --doc-topics " + path("dt.tsv"));
    ASSERT_EQ(r.code, 0) << r.out;
    std::ifstream in(path("dt.tsv"));
    std::string header, row;
    std::getline(in, header);
    EXPECT_EQ(header, "doc\ttopic_0\ttopic_1");
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(std::getline(in, row));
        EXPECT_EQ(row.substr(0, row.find('\t')), "l" + std::to_string(i) + ".txt");
        std::istringstream fields(row.substr(row.find('\t') + 1));
        double a = 0, b = 0;
        fields >> a >> b;
        EXPECT_NEAR(a + b, 1.0, 1e-5) << row;
    }
    // The model keeps the names: export uses them, and --normalize writes probabilities.
    ASSERT_EQ(run("lda export --model " + path("model") + " --normalize --out " + path("tsv")).code,
              0);
    std::ifstream dt(path("tsv/doc_topic.tsv"));
    std::string name;
    int topic = 0;
    double theta = 0, sum = 0;
    int rows = 0;
    while (dt >> name >> topic >> theta) {
        EXPECT_EQ(name.substr(0, 1), "l");
        sum += theta;
        ++rows;
    }
    EXPECT_EQ(rows, 6);  // every topic of every document
    EXPECT_NEAR(sum, 3.0, 1e-4);
    std::ifstream wt(path("tsv/word_topic.tsv"));
    double phi = 0;
    while (wt >> name >> topic >> phi) {
        EXPECT_GT(phi, 0.0);
        EXPECT_LT(phi, 1.0);
    }
}

// Theme 6: a mistyped flag or subcommand gets a suggestion; old spellings still work, hidden.
TEST_F(TrainCli, TyposGetASuggestionAndOldFlagNamesStillWork) {
    const Outcome typo = run("lda train --corpus " + kTrain + " --topcs 5 --out " + path("model"));
    EXPECT_EQ(typo.code, 3) << typo.out;
    EXPECT_NE(typo.out.find("did you mean --topics?"), std::string::npos) << typo.out;
    const Outcome command = run("lda trian --corpus " + kTrain);
    EXPECT_NE(command.out.find("did you mean train?"), std::string::npos) << command.out;
    const Outcome old = run("lda train --corpus " + kTrain +
                            " --topics 3 -n 1 -q --coherence-top 5 --out " + path("model"));
    EXPECT_EQ(old.code, 0) << old.out;
    const Outcome help = run("lda train --help");
    EXPECT_NE(help.out.find("--top "), std::string::npos) << help.out;
    EXPECT_EQ(help.out.find("--coherence-top"), std::string::npos) << help.out;
}
