// The kill -9 and resume loop every model's CLI tests share: a resumable run is started, killed
// at a random moment, restarted with --resume whenever a whole checkpoint is on disk, until it
// has been killed N times; the last run is let finish. The caller then compares its output with
// an uninterrupted run's. Header-only; POSIX (posix_spawn, waitpid).
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/base/rng.h"
#include "core/io/atomic_file.h"

extern "C" char** environ;

namespace rotor::testing {

/// Starts `args` (argv[0] an absolute path) with the test's environment. Returns its pid.
inline pid_t spawn_process(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
    return pid;
}

/// Waits for `pid`: its exit code, or 128 + the signal that ended it (as a shell reports it).
inline int wait_exit(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// Starts `args`, waits for it and returns how long it took, in milliseconds (0 if it failed).
inline double timed_run_ms(const std::vector<std::string>& args) {
    const auto t0 = std::chrono::steady_clock::now();
    if (wait_exit(spawn_process(args)) != 0) return 0;
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// Removes `path` and what killed writers left beside it (`<path>.tmp.*`, `<path>.old.*`).
inline void remove_with_leftovers(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::remove_all(path, ec);
    const fs::path p = fs::absolute(fs::path(path), ec).lexically_normal();
    const std::string name = p.filename().string();
    for (const auto& e : fs::directory_iterator(p.parent_path(), ec)) {
        const std::string f = e.path().filename().string();
        if (f.rfind(name + ".tmp.", 0) == 0 || f.rfind(name + ".old.", 0) == 0) {
            fs::remove_all(e.path(), ec);
        }
    }
}

/// What one kill-and-resume loop does.
struct KillResumePlan {
    std::vector<std::string> args;     ///< the resumable run: --checkpoint-dir, --out, no --resume
    std::string checkpoint;            ///< its checkpoint directory
    std::vector<std::string> outputs;  ///< removed with the checkpoint when a run ends unkilled
    double run_ms = 0;                 ///< an uninterrupted run's time (timed_run_ms)
    double min_share = 0.2;            ///< a kill lands at run_ms · (min_share + U · span_share)
    double span_share = 0.5;
    int kills = 3;
    std::uint64_t seed = 7;
    /// Called after each kill that left a checkpoint (e.g. to look at what the killed run left).
    std::function<void()> after_kill;
};

/// What happened.
struct KillResumeOutcome {
    int kills = 0;       ///< runs ended by SIGKILL in the last series
    int resumed = 0;     ///< runs of that series started with --resume
    int last_exit = -1;  ///< exit code of the run let finish
};

/// Runs the loop. A checkpoint counts as present when `checkpoint/state.json` exists, or, killed
/// between the two renames that replace it, its whole `.old` copy (core::existing_or_old), which
/// rotor's --resume takes. A kill counts only when it leaves a checkpoint behind: one that lands
/// before the first checkpoint (a slow start on a loaded machine) proves nothing, and the next
/// delays grow by half. When a run finishes before its kill, the checkpoint and outputs are
/// removed and the series starts again with delays halved (at most 40 runs in all).
inline KillResumeOutcome kill_and_resume(const KillResumePlan& plan) {
    namespace fs = std::filesystem;
    Rng rng(plan.seed);
    KillResumeOutcome out;
    double scale = 1.0;
    const auto have_checkpoint = [&] {
        return fs::exists(core::existing_or_old(plan.checkpoint, "state.json") + "/state.json");
    };
    for (int attempt = 0; attempt < 40; ++attempt) {
        auto a = plan.args;
        if (have_checkpoint()) {
            a.insert(a.end(), {"--resume", plan.checkpoint});
            ++out.resumed;
        }
        const pid_t pid = spawn_process(a);
        if (out.kills >= plan.kills) {
            out.last_exit = wait_exit(pid);
            return out;
        }
        const double ms = plan.run_ms * scale * (plan.min_share + plan.span_share * rng.uniform());
        std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(ms * 1000)));
        ::kill(pid, SIGKILL);
        const int code = wait_exit(pid);
        if (code == 128 + SIGKILL) {
            if (have_checkpoint()) {
                ++out.kills;
                if (plan.after_kill) plan.after_kill();
            } else {
                scale *= 1.5;
            }
            continue;
        }
        if (code != 0) {
            out.last_exit = code;
            return out;
        }
        // It finished first: start over, with shorter delays, from nothing (no .old copy left).
        remove_with_leftovers(plan.checkpoint);
        for (const auto& o : plan.outputs) remove_with_leftovers(o);
        out = KillResumeOutcome{};
        scale /= 2;
    }
    return out;
}

/// The value of `"key":` in one line of JSON, as written ("" when absent).
inline std::string json_value(const std::string& line, const std::string& key) {
    const std::size_t at = line.find("\"" + key + "\":");
    if (at == std::string::npos) return "";
    const std::size_t from = at + key.size() + 3;
    return line.substr(from, line.find_first_of(",}", from) - from);
}

/// The whole lines of a --metrics file with their `iter` (a line that is not a record fails the
/// test; a last line without its newline, which a kill may leave, is not read).
inline std::vector<std::pair<std::uint64_t, std::string>> metrics_lines(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::string all = text.str();
    std::vector<std::pair<std::uint64_t, std::string>> out;
    for (std::size_t at = 0, end; (end = all.find('\n', at)) != std::string::npos; at = end + 1) {
        const std::string line = all.substr(at, end - at);
        const std::string iter = json_value(line, "iter");
        const bool record = line.size() > 2 && line.front() == '{' && line.back() == '}' &&
                            !iter.empty() && iter.find_first_not_of("0123456789") == iter.npos;
        EXPECT_TRUE(record) << path << ": not a record: " << line;
        if (record) out.emplace_back(std::stoull(iter), line);
    }
    return out;
}

/// The iterations done by the checkpoint in `dir` (its state.json, or the `.old` copy a kill
/// between two renames leaves).
inline std::uint64_t checkpoint_iterations(const std::string& dir) {
    std::ifstream in(core::existing_or_old(dir, "state.json") + "/state.json");
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    const std::size_t at = s.find("\"iterations_done\":");
    EXPECT_NE(at, std::string::npos) << dir;
    return at == std::string::npos ? 0 : std::stoull(s.substr(at + 18));
}

/// What a run killed after a checkpoint left in its --metrics file: a record of every `step`-th
/// iteration (step: the evaluation cadence of a model that records only evaluations), in order,
/// from the first through at least the checkpoint's iteration.
inline void expect_records_through_checkpoint(const std::string& metrics,
                                              const std::string& checkpoint,
                                              std::uint64_t step = 1) {
    const auto lines = metrics_lines(metrics);
    for (std::size_t i = 0; i < lines.size(); ++i)
        ASSERT_EQ(lines[i].first, (i + 1) * step) << metrics << " line " << i + 1;
    const std::uint64_t done = checkpoint_iterations(checkpoint);
    const std::uint64_t last = lines.empty() ? 0 : lines.back().first;
    EXPECT_GE(last, done - done % step)
        << metrics << ": the killed run left records up to iteration " << last
        << ", its checkpoint is at " << done;
}

/// The resumed run's metrics hold the uninterrupted run's records: the same iterations, one
/// record each, and the same values of `key` (the model's figure: the runs are deterministic).
inline void expect_same_records(const std::string& straight, const std::string& resumed,
                                const std::string& key) {
    const auto a = metrics_lines(straight), b = metrics_lines(resumed);
    ASSERT_EQ(a.size(), b.size()) << straight << " against " << resumed;
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].first, b[i].first) << "record " << i + 1;
        EXPECT_EQ(json_value(a[i].second, key), json_value(b[i].second, key))
            << key << " of record " << i + 1;
    }
}

}  // namespace rotor::testing
