// Checkpoint and resume, through the real `rotor` binary: a deterministic run killed with
// SIGKILL at random moments and resumed each time ends with the same model, byte for byte, as
// the run that was never interrupted.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apps/lda/checkpoint.h"
#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/lda/model.h"
#include "tests/apps/kill_resume.h"  // also declares environ

namespace rotor::lda {
namespace {

namespace fs = std::filesystem;

const std::string kRotor = ROTOR_BINARY_DIR "/apps/rotor";
const std::string kCorpus = ROTOR_SOURCE_DIR "/data/tiny/train/docword.txt.gz";

class TempDir {
  public:
    TempDir() {
        path_ = fs::temp_directory_path() /
                ("rotor-ckpt-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() { fs::remove_all(path_); }
    std::string operator/(const std::string& name) const { return (path_ / name).string(); }

  private:
    static inline int counter_ = 0;
    fs::path path_;
};

pid_t spawn(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(rc, 0) << "cannot start " << argv[0];
    return pid;
}

int wait_exit(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<std::string> train_args(const std::string& out) {
    return {kRotor,     "lda", "train",        "--corpus", kCorpus,
            "--topics", "8",   "--iterations", "40",       "--deterministic",
            "--seed",   "3",   "--threads",    "2",        "--eval-every",
            "0",        "-q",  "--out",        out};
}

TEST(Checkpoint, KilledAndResumedRunEqualsUninterruptedRun) {
    TempDir tmp;
    // The uninterrupted run also writes checkpoints (they do not change the state), and its
    // duration scales the kill delays, so that kills land inside the run on a fast machine as
    // on a loaded one.
    auto straight = train_args(tmp / "straight");
    straight.insert(straight.end(), {"--checkpoint-every", "1", "--checkpoint-dir", tmp / "c0",
                                     "--metrics", tmp / "straight.jsonl"});
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(wait_exit(spawn(straight)), 0);
    const double run_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    const std::string ckpt = tmp / "ckpt";
    auto args = train_args(tmp / "resumed");
    // No --overwrite: a run killed after its model was written leaves that model, and the
    // resumed run writes it in place. The metrics of the killed runs stay, the resumed runs
    // append to them.
    const std::string metrics = tmp / "resumed.jsonl";
    args.insert(args.end(),
                {"--checkpoint-every", "1", "--checkpoint-dir", ckpt, "--metrics", metrics});
    Rng rng(2024);
    int kills = 0, resumes = 0;
    double scale = 1.0;  // shrinks when a run ends before its kill (a faster machine than timed)
    for (int attempt = 0; attempt < 40; ++attempt) {
        std::vector<std::string> a = args;
        double left = 1.0;  // fraction of the run still to do
        if (fs::exists(ckpt + "/state.json")) {
            a.insert(a.end(), {"--resume", ckpt});
            ++resumes;
            left = (40.0 - read_checkpoint(ckpt).iterations_done) / 40.0;
        }
        const pid_t pid = spawn(a);
        if (kills >= 4) {
            ASSERT_EQ(wait_exit(pid), 0);
            break;
        }
        // A random moment: before the first checkpoint, between checkpoints, or inside one.
        const double ms = run_ms * left * scale * (0.05 + 0.6 * rng.uniform());
        std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(ms * 1000)));
        ::kill(pid, SIGKILL);
        const int code = wait_exit(pid);
        if (code == 128 + SIGKILL) {
            ++kills;
            // What the killed run made is on disk: a record of every iteration it finished.
            if (fs::exists(ckpt + "/state.json"))
                rotor::testing::expect_records_through_checkpoint(metrics, ckpt);
            continue;
        }
        ASSERT_EQ(code, 0);
        // It finished before the kill: start over from nothing with shorter delays.
        fs::remove_all(ckpt);
        fs::remove_all(tmp / "resumed");
        fs::remove(metrics);
        kills = resumes = 0;
        scale /= 2;
    }
    ASSERT_EQ(kills, 4) << "the run was too fast to be interrupted: the test proves nothing";
    EXPECT_GE(resumes, 1);
    for (const char* f : {"word_topic.bin", "doc_topic.bin", "params.json", "topics.txt"})
        EXPECT_EQ(slurp(tmp / "straight/" + f), slurp(tmp / "resumed/" + f)) << f;
    // One record per iteration, those of the killed runs and of the resumed ones, as the
    // uninterrupted run's (the last with its log-likelihood).
    rotor::testing::expect_same_records(tmp / "straight.jsonl", metrics, "loglik");
    // No temporary or half-moved directory is left behind.
    for (const auto& e : fs::directory_iterator(tmp / ""))
        EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
}

TEST(Checkpoint, ResumeRefusesAnotherCorpus) {
    TempDir tmp;
    auto a = train_args(tmp / "m");
    a.insert(a.end(), {"--checkpoint-every", "5", "--checkpoint-dir", tmp / "ckpt"});
    ASSERT_EQ(wait_exit(spawn(a)), 0);
    const std::vector<std::string> other = {kRotor,
                                            "lda",
                                            "train",
                                            "--corpus",
                                            ROTOR_SOURCE_DIR "/data/tiny/heldout/docword.txt.gz",
                                            "--out",
                                            tmp / "m2",
                                            "--resume",
                                            tmp / "ckpt",
                                            "-q"};
    EXPECT_EQ(wait_exit(spawn(other)), 3);  // ConfigError
    EXPECT_FALSE(fs::exists(tmp / "m2"));
}

TEST(Checkpoint, CorruptCheckpointIsAnInputError) {
    TempDir tmp;
    auto a = train_args(tmp / "m");
    a.insert(a.end(), {"--checkpoint-every", "5", "--checkpoint-dir", tmp / "ckpt"});
    ASSERT_EQ(wait_exit(spawn(a)), 0);
    ASSERT_NO_THROW(read_checkpoint(tmp / "ckpt"));
    // One process writes the checkpoint of P ranks with P = 1: one part and the manifest.
    const std::string part = slurp(tmp / "ckpt/part-00000.bin");
    {
        std::ofstream out(tmp / "ckpt/part-00000.bin", std::ios::binary | std::ios::trunc);
        out << part.substr(0, part.size() - 3);
    }
    try {
        read_checkpoint(tmp / "ckpt");
        FAIL() << "a truncated checkpoint was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("part-00000.bin"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("not whole"), std::string::npos) << e.what();
    }
    {
        // The same size, one topic changed: the checksum refuses it.
        std::string flipped = part;
        flipped[flipped.size() - 2] ^= 1;
        std::ofstream out(tmp / "ckpt/part-00000.bin", std::ios::binary | std::ios::trunc);
        out << flipped;
    }
    try {
        read_checkpoint(tmp / "ckpt");
        FAIL() << "a corrupt checkpoint was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
    }
    {
        std::ofstream out(tmp / "ckpt/state.json", std::ios::trunc);
        out << "{\"format\": \"rotor-lda-checkpoint\"";
    }
    EXPECT_THROW(read_checkpoint(tmp / "ckpt"), InputError);
}

/// Rewrites `key` of the checkpoint's state.json to the JSON text `value`.
void edit_state(const std::string& ckpt, const std::string& key, const std::string& value) {
    const std::string path = ckpt + "/state.json";
    std::string text = slurp(path);
    const std::size_t at = text.find("\"" + key + "\": ");
    ASSERT_NE(at, std::string::npos) << key;
    const std::size_t from = at + key.size() + 4;
    std::size_t to = from;
    int depth = 0;
    while (depth > 0 || (text[to] != ',' && text[to] != '\n')) {
        depth += text[to] == '[' ? 1 : text[to] == ']' ? -1 : 0;
        ++to;
    }
    text.replace(from, to - from, value);
    std::ofstream(path, std::ios::trunc) << text;
}

/// read_checkpoint(ckpt) must throw an InputError naming state.json and holding `what`.
void expect_state_refused(const std::string& ckpt, const std::string& what) {
    try {
        read_checkpoint(ckpt);
        FAIL() << "accepted; expected: " << what;
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("state.json"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
}

TEST(Checkpoint, StateFieldsAreRangeCheckedNeverWrapped) {
    TempDir tmp;
    auto a = train_args(tmp / "m");
    a.insert(a.end(), {"--checkpoint-every", "5", "--checkpoint-dir", tmp / "ckpt"});
    ASSERT_EQ(wait_exit(spawn(a)), 0);
    const std::string good = slurp(tmp / "ckpt/state.json");
    const auto restore = [&] { std::ofstream(tmp / "ckpt/state.json", std::ios::trunc) << good; };
    edit_state(tmp / "ckpt", "columns_per_slice", "10000000000");
    expect_state_refused(tmp / "ckpt", "\"columns_per_slice\" must be an integer in 0..4096");
    restore();
    edit_state(tmp / "ckpt", "iterations_done", "41");
    expect_state_refused(tmp / "ckpt", "iterations_done = 41 exceeds the limit 40");
    restore();
    edit_state(tmp / "ckpt", "alpha", "[1e308, 1, 1, 1, 1, 1, 1, 1]");
    expect_state_refused(tmp / "ckpt", "at most 1e6");
    restore();
    edit_state(tmp / "ckpt", "num_topics", "4294967304");
    expect_state_refused(tmp / "ckpt", "\"num_topics\" must be an integer in 0..4294967295");
    restore();
    std::ofstream(tmp / "ckpt/state.json", std::ios::app) << "garbage";
    expect_state_refused(tmp / "ckpt", "bad checkpoint state");
    restore();
    EXPECT_NO_THROW(read_checkpoint(tmp / "ckpt"));
}

TEST(Checkpoint, ResumeRefusesChangedSettingsByName) {
    TempDir tmp;
    auto a = train_args(tmp / "m");
    a.erase(std::find(a.begin(), a.end(), "--deterministic"));
    a.insert(a.end(), {"--checkpoint-every", "5", "--checkpoint-dir", tmp / "ckpt"});
    ASSERT_EQ(wait_exit(spawn(a)), 0);
    const auto resume = [&](std::vector<std::string> extra) {
        std::vector<std::string> r = {kRotor,  "lda",      "train",    "--corpus",   kCorpus,
                                      "--out", tmp / "m2", "--resume", tmp / "ckpt", "-q"};
        r.insert(r.end(), extra.begin(), extra.end());
        return wait_exit(spawn(r));
    };
    EXPECT_EQ(resume({"--deterministic"}), 3);  // the checkpoint's run was not deterministic
    EXPECT_EQ(resume({"--topics", "9"}), 3);
    EXPECT_EQ(resume({"--seed", "4"}), 3);
    EXPECT_EQ(resume({"--alpha", "0.3"}), 3);      // it ran with 50/K = 6.25 (was kept silently)
    EXPECT_EQ(resume({"--alpha", "6.25,1"}), 3);   // asymmetric
    EXPECT_EQ(resume({"--iterations", "30"}), 3);  // 40 are done
    EXPECT_FALSE(fs::exists(tmp / "m2"));
    // The same values are no conflict.
    EXPECT_EQ(resume({"--topics", "8", "--seed", "3", "--alpha", "6.25"}), 0);
}

// The last iteration is checkpointed whatever the cadence (7 does not divide 20), so a finished
// model is continued with a larger --iterations, to the model of the longer run, byte for byte.
TEST(Checkpoint, AFinishedRunIsCheckpointedAndContinuesToTheLongerRun) {
    TempDir tmp;
    auto a = train_args(tmp / "m20");
    a.insert(a.end(), {"--checkpoint-every", "7", "--checkpoint-dir", tmp / "ckpt"});
    a[std::find(a.begin(), a.end(), "40") - a.begin()] = "20";
    ASSERT_EQ(wait_exit(spawn(a)), 0);
    EXPECT_EQ(read_checkpoint(tmp / "ckpt").iterations_done, 20u);
    std::vector<std::string> more = {kRotor,      "lda", "train",    "--corpus",   kCorpus,
                                     "-n",        "40",  "--resume", tmp / "ckpt", "-q",
                                     "--threads", "1",   "--out",    tmp / "m40"};
    ASSERT_EQ(wait_exit(spawn(more)), 0);
    ASSERT_EQ(wait_exit(spawn(train_args(tmp / "straight"))), 0);
    for (const char* f : {"word_topic.bin", "doc_topic.bin", "params.json"})
        EXPECT_EQ(slurp(tmp / "m40/" + f), slurp(tmp / "straight/" + f)) << f;
    // Into its own --out: a resumed run continues the run that wrote it, and writes it in place
    // without --overwrite (it was refused: "exists ...: give --overwrite").
    more.back() = tmp / "m20";
    ASSERT_EQ(wait_exit(spawn(more)), 0);
    for (const char* f : {"word_topic.bin", "doc_topic.bin", "params.json"})
        EXPECT_EQ(slurp(tmp / "m20/" + f), slurp(tmp / "straight/" + f)) << f;
}

// --eval-every is monitoring, not the model: a resumed run follows the one given (the
// checkpoint's, 0, was kept silently).
TEST(Checkpoint, AResumedRunEvaluatesAtTheGivenCadence) {
    TempDir tmp;
    auto a = train_args(tmp / "m");
    a.insert(a.end(), {"--checkpoint-every", "20", "--checkpoint-dir", tmp / "ckpt"});
    ASSERT_EQ(wait_exit(spawn(a)), 0);
    const std::vector<std::string> more = {
        kRotor,  "lda",       "train",      "--corpus",     kCorpus,        "-n",
        "43",    "--resume",  tmp / "ckpt", "-q",           "--eval-every", "1",
        "--out", tmp / "m43", "--metrics",  tmp / "m.jsonl"};
    ASSERT_EQ(wait_exit(spawn(more)), 0);
    std::istringstream lines(slurp(tmp / "m.jsonl"));
    int records = 0, evaluated = 0;
    for (std::string line; std::getline(lines, line); ++records)
        evaluated += line.find("\"loglik\"") != std::string::npos;
    EXPECT_EQ(records, 3);
    EXPECT_EQ(evaluated, 3);
}

// --sampler is a run setting: kept in the checkpoint, changeable on resume. A deterministic mh
// run stopped and resumed (its doc-token index rebuilt from the restored blocks) equals the
// uninterrupted run byte for byte.
TEST(Checkpoint, SamplerIsARunSettingAndMhResumesExactly) {
    TempDir tmp;
    auto args = [&](const std::string& out, const std::string& iterations) {
        auto a = train_args(out);
        a[std::find(a.begin(), a.end(), "--iterations") - a.begin() + 1] = iterations;
        a.insert(a.end(), {"--sampler", "mh", "--mh-steps", "3"});
        return a;
    };
    ASSERT_EQ(wait_exit(spawn(args(tmp / "straight", "12"))), 0);
    auto first = args(tmp / "half", "6");
    first.insert(first.end(), {"--checkpoint-every", "3", "--checkpoint-dir", tmp / "ckpt"});
    ASSERT_EQ(wait_exit(spawn(first)), 0);
    const Checkpoint c = read_checkpoint(tmp / "ckpt");
    EXPECT_EQ(c.options.sampler, SamplerKind::kMh);
    EXPECT_EQ(c.options.mh_steps, 3u);
    std::vector<std::string> resume = {kRotor,         "lda",   "train",      "--corpus",
                                       kCorpus,        "--out", tmp / "rest", "-q",
                                       "--iterations", "12",    "--resume",   tmp / "ckpt"};
    ASSERT_EQ(wait_exit(spawn(resume)), 0);
    for (const char* f : {"word_topic.bin", "doc_topic.bin", "topics.txt"})
        EXPECT_EQ(slurp(tmp / "straight/" + f), slurp(tmp / "rest/" + f)) << f;
    // Another kernel on resume is no conflict, and the next checkpoint records it.
    std::vector<std::string> again = {kRotor, "lda", "train", "--corpus", kCorpus, "-q"};
    again.insert(again.end(),
                 {"--out", tmp / "r2", "--iterations", "14", "--resume", tmp / "ckpt"});
    again.insert(again.end(), {"--sampler", "sparse", "--checkpoint-every", "13"});
    again.insert(again.end(), {"--checkpoint-dir", tmp / "ckpt2"});
    ASSERT_EQ(wait_exit(spawn(again)), 0);
    EXPECT_EQ(read_checkpoint(tmp / "ckpt2").options.sampler, SamplerKind::kSparse);
}

// --init is part of the model: recorded in the checkpoint and in params.json, kept by a resumed
// run (a conflicting --init is refused by name). A checkpoint of rotor before the field loads as
// a random start.
TEST(Checkpoint, InitIsRecordedAndKeptOnResume) {
    TempDir tmp;
    auto a = train_args(tmp / "half");
    a[std::find(a.begin(), a.end(), "--iterations") - a.begin() + 1] = "6";
    a.insert(a.end(), {"--init", "sparse", "--init-doc-topics", "2", "--checkpoint-every", "3",
                       "--checkpoint-dir", tmp / "ckpt"});
    ASSERT_EQ(wait_exit(spawn(a)), 0);
    const Checkpoint c = read_checkpoint(tmp / "ckpt");
    EXPECT_TRUE(c.init_recorded);
    EXPECT_EQ(c.options.init.method, InitMethod::kSparse);
    EXPECT_EQ(c.options.init.doc_topics, 2u);
    EXPECT_EQ(load_model(tmp / "half").info.init, "sparse");
    EXPECT_EQ(load_model(tmp / "half").info.init_doc_topics, 2u);
    const auto resume = [&](const std::string& out, std::vector<std::string> extra) {
        std::vector<std::string> r = {kRotor, "lda", "train",    "--corpus",   kCorpus, "-q",
                                      "-n",   "8",   "--resume", tmp / "ckpt", "--out", out};
        r.insert(r.end(), extra.begin(), extra.end());
        return wait_exit(spawn(r));
    };
    EXPECT_EQ(resume(tmp / "bad", {"--init", "random"}), 3);
    EXPECT_EQ(resume(tmp / "bad", {"--init-doc-topics", "3"}), 3);
    EXPECT_FALSE(fs::exists(tmp / "bad"));
    ASSERT_EQ(resume(tmp / "rest", {}), 0);
    EXPECT_EQ(load_model(tmp / "rest").info.init, "sparse");
    EXPECT_EQ(load_model(tmp / "rest").info.init_doc_topics, 2u);

    // state.json without the fields, as rotor wrote it before: a random start.
    std::string text = slurp(tmp / "ckpt/state.json");
    for (const std::string key : {"\"init\": ", "\"init_doc_topics\": "}) {
        const std::size_t at = text.find(key);
        ASSERT_NE(at, std::string::npos) << key;
        const std::size_t begin = text.rfind('\n', at);
        text.erase(begin, text.find('\n', at) - begin);
    }
    std::ofstream(tmp / "ckpt/state.json", std::ios::trunc) << text;
    const Checkpoint old = read_checkpoint(tmp / "ckpt");
    EXPECT_FALSE(old.init_recorded);
    EXPECT_EQ(old.options.init.method, InitMethod::kRandom);
    ASSERT_EQ(resume(tmp / "old", {}), 0);
    EXPECT_EQ(load_model(tmp / "old").info.init, "random");
    EXPECT_EQ(load_model(tmp / "old").info.init_doc_topics, 0u);
}

// --init sequential and its --init-word-prior: recorded in the checkpoint and params.json, kept
// on resume (another prior is refused by name, though the prior only shaped the first sweep).
TEST(Checkpoint, SequentialInitAndItsWordPriorAreRecorded) {
    TempDir tmp;
    auto a = train_args(tmp / "half");
    a[std::find(a.begin(), a.end(), "--iterations") - a.begin() + 1] = "4";
    a.insert(a.end(), {"--init", "sequential", "--init-word-prior", "12.5", "--checkpoint-every",
                       "2", "--checkpoint-dir", tmp / "ckpt"});
    ASSERT_EQ(wait_exit(spawn(a)), 0);
    const Checkpoint c = read_checkpoint(tmp / "ckpt");
    EXPECT_EQ(c.options.init.method, InitMethod::kSequential);
    EXPECT_EQ(c.options.init.word_prior, 12.5);
    EXPECT_EQ(load_model(tmp / "half").info.init, "sequential");
    EXPECT_EQ(load_model(tmp / "half").info.init_word_prior, 12.5);
    const auto resume = [&](const std::string& out, std::vector<std::string> extra) {
        std::vector<std::string> r = {kRotor, "lda", "train",    "--corpus",   kCorpus, "-q",
                                      "-n",   "6",   "--resume", tmp / "ckpt", "--out", out};
        r.insert(r.end(), extra.begin(), extra.end());
        return wait_exit(spawn(r));
    };
    EXPECT_EQ(resume(tmp / "bad", {"--init-word-prior", "30"}), 3);
    EXPECT_FALSE(fs::exists(tmp / "bad"));
    ASSERT_EQ(resume(tmp / "rest", {}), 0);
    EXPECT_EQ(load_model(tmp / "rest").info.init, "sequential");
    EXPECT_EQ(load_model(tmp / "rest").info.init_word_prior, 12.5);

    std::string text = slurp(tmp / "ckpt/state.json");
    const std::size_t at = text.find("\"init_word_prior\": ");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, text.find('\n', at) - at, "\"init_word_prior\": -2,");
    std::ofstream(tmp / "ckpt/state.json", std::ios::trunc) << text;
    EXPECT_THROW(read_checkpoint(tmp / "ckpt"), InputError);
}

TEST(Checkpoint, ResumeUsesTheOldCopyWhenKilledBetweenTheRenames) {
    TempDir tmp;
    auto a = train_args(tmp / "m");
    a.insert(a.end(), {"--checkpoint-every", "5", "--checkpoint-dir", tmp / "ckpt"});
    a[std::find(a.begin(), a.end(), "40") - a.begin()] = "20";
    ASSERT_EQ(wait_exit(spawn(a)), 0);
    // The moment inside AtomicDirectory::commit: ckpt moved aside, the new one not yet in.
    const std::string old = tmp / "ckpt.old.99999999.0";
    fs::rename(tmp / "ckpt", old);
    EXPECT_EQ(read_checkpoint(tmp / "ckpt").iterations_done, 20u);  // the last one too
    auto more = train_args(tmp / "m2");
    more.insert(more.end(), {"--checkpoint-every", "5", "--checkpoint-dir", tmp / "ckpt",
                             "--resume", tmp / "ckpt"});
    ASSERT_EQ(wait_exit(spawn(more)), 0);
    EXPECT_EQ(read_checkpoint(tmp / "ckpt").iterations_done, 40u);
    ASSERT_EQ(wait_exit(spawn(train_args(tmp / "straight"))), 0);
    for (const char* f : {"word_topic.bin", "doc_topic.bin"})
        EXPECT_EQ(slurp(tmp / "m2/" + f), slurp(tmp / "straight/" + f)) << f;
}

}  // namespace
}  // namespace rotor::lda
