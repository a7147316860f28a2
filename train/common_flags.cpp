#include "train/common_flags.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "core/base/error.h"
#include "sched/block_grid.h"

namespace rotor::train {

int CommonTrainFlags::resolved_threads(int host_ranks) const {
    if (threads < 0) throw ConfigError("--threads", "must be at least 1 (0: all cores)");
    if (threads > 0) return threads;
    const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    return std::max(1, cores / std::max(1, host_ranks));
}

std::string CommonTrainFlags::oversubscription_warning(int threads, int host_ranks) {
    return oversubscription_warning(threads, host_ranks, sched::available_cpus(),
                                    static_cast<int>(std::thread::hardware_concurrency()));
}

std::string CommonTrainFlags::oversubscription_warning(int threads, int host_ranks, int cpus,
                                                       int online) {
    cpus = std::max(cpus, 1);
    // A process allowed fewer processors than the host has was bound by its launcher (mpiexec
    // binds each rank to cores of its own): its threads share only those. Otherwise the host's
    // ranks share them all.
    const int sharing = cpus < online ? 1 : std::max(host_ranks, 1);
    const std::int64_t workers = std::int64_t{threads} * sharing;
    if (workers <= cpus) return "";
    return fmt::format(
        "rotor: warning: {} worker threads{} on {} processor{}: they take turns (blocking, not "
        "spinning), so this is no faster than --threads {}",
        workers, sharing > 1 ? fmt::format(" ({} ranks on this host)", sharing) : "", cpus,
        cpus == 1 ? "" : "s", std::max(1, cpus / sharing));
}

sched::PinMode CommonTrainFlags::pin_mode() const {
    return no_pin ? sched::PinMode::kNone : sched::PinMode::kAuto;
}

std::string CommonTrainFlags::resolved_checkpoint_dir() const {
    if (!checkpoint_dir.empty() || checkpoint_every == 0) return checkpoint_dir;
    return out + ".checkpoint";
}

void CommonTrainFlags::check_outputs(core::OutputKind kind, std::string_view marker) const {
    core::check_output(out, kind, marker, overwrite || !resume.empty(), "--out");
    if (!metrics.empty()) core::check_output_parent(metrics, "--metrics");
    if (!trace.empty()) core::check_output_parent(trace, "--trace");
    const std::string checkpoints = resolved_checkpoint_dir();
    if (!checkpoints.empty())
        core::check_output_parent(
            checkpoints, checkpoint_dir.empty() ? "--checkpoint-every" : "--checkpoint-dir");
}

void check_work_per_rank(std::uint64_t units, std::uint64_t ranks, const std::string& what) {
    if (units == 0 || units >= ranks) return;
    throw ConfigError("mpiexec -n", fmt::format("{} ranks share {} {}: a rank would have none; "
                                                "run at most {} ranks",
                                                ranks, units, what, units));
}

std::string absolute_path(const std::string& path) {
    std::error_code ec;
    const std::filesystem::path a = std::filesystem::absolute(path, ec);
    return ec ? path : a.lexically_normal().string();
}

void add_overwrite_flag(CLI::App& c, bool& value) {
    c.add_flag("--overwrite", value,
               "Replace an earlier output of rotor at --out (a non-empty directory or a file "
               "that is not rotor's is never replaced)");
}

void add_switch(CLI::App& c, const std::string& name, bool& value, const std::string& help) {
    const bool on = value;
    auto* yes = c.add_flag_callback(
        "--" + name, [&value] { value = true; }, help + (on ? " (default)" : ""));
    auto* no = c.add_flag_callback(
        "--no-" + name, [&value] { value = false; },
        "Turn --" + name + " off" + (on ? "" : " (default)"));
    yes->excludes(no);
}

void add_common_train_flags(CLI::App& c, CommonTrainFlags& f, const std::string& unit) {
    c.add_option("--out", f.out, "Model directory to write (new, or --overwrite)")->required();
    add_overwrite_flag(c, f.overwrite);
    c.add_option("--iterations,-n", f.iterations,
                 "Number of " + unit + " in all (a resumed run continues up to this number)")
        ->capture_default_str()
        ->each([&f](const std::string&) { f.iterations_set = true; });
    c.add_option("--threads,-t", f.threads,
                 "Worker threads (default: all cores; per rank under mpiexec)");
    c.add_option("--seed", f.seed, "Random seed")->capture_default_str();
    c.add_option("--metrics", f.metrics, "Write one JSON metrics record per iteration here");
    c.add_option("--eval-every", f.eval_every, "Evaluate every N iterations (0: only at the end)")
        ->capture_default_str();
    c.add_flag("--no-pin", f.no_pin,
               "Do not pin worker threads to cores (pinned by default when they are as many as the "
               "CPUs the process may use)");
    c.add_option("--checkpoint-every", f.checkpoint_every,
                 "Write a checkpoint every N iterations (0: never)")
        ->capture_default_str();
    c.add_option("--checkpoint-dir", f.checkpoint_dir,
                 "Where checkpoints go (default: <out>.checkpoint)");
    c.add_option("--resume", f.resume,
                 "Continue the run saved in this checkpoint directory (same input)");
    c.add_option("--trace", f.trace,
                 "Write the scheduler timeline (Chrome/Perfetto trace-event JSON) here");
    c.add_option("--max-memory", f.max_memory,
                 "Refuse to start a run needing more than this (e.g. 16G; default 90% of RAM, "
                 "shared among the ranks on a host)");
    c.add_flag("--quiet,-q", f.quiet, "No progress lines");
}

std::int64_t parse_delay(const std::string& s) {
    if (s == "inf") return -1;  // comm::kInfiniteDelay
    std::size_t end = 0;
    long long v = -1;
    try {
        v = std::stoll(s, &end);
    } catch (const std::exception&) {
        end = 0;
    }
    if (end != s.size() || v < 0) throw ConfigError("--delay", "a number >= 0 or inf");
    return v;
}

std::pair<int, double> parse_straggler(const std::string& text) {
    const std::size_t colon = text.find(':');
    const ConfigError bad("--simulate-straggler",
                          fmt::format("'{}' is not RANK:FACTOR with FACTOR >= 1 (e.g. 1:3)", text));
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) throw bad;
    std::size_t used_r = 0, used_f = 0;
    int rank = 0;
    double factor = 0;
    try {
        rank = std::stoi(text.substr(0, colon), &used_r);
        factor = std::stod(text.substr(colon + 1), &used_f);
    } catch (const std::exception&) {
        throw bad;
    }
    if (used_r != colon || used_f != text.size() - colon - 1 || rank < 0 || !(factor >= 1) ||
        !std::isfinite(factor))
        throw bad;
    return {rank, factor};
}

}  // namespace rotor::train
