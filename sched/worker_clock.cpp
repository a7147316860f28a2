#include "sched/worker_clock.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/base/error.h"

namespace rotor::sched {

double population_cv(std::span<const double> values) {
    if (values.empty()) return 0;
    const double n = static_cast<double>(values.size());
    double sum = 0;
    for (const double x : values) sum += x;
    const double mean = sum / n;
    if (mean <= 0) return 0;
    double var = 0;
    for (const double x : values) var += (x - mean) * (x - mean);
    return std::sqrt(var / n) / mean;
}

IterationTimes summarize_times(std::span<const double> compute_s, std::span<const double> wait_s,
                               double wall_s) {
    ROTOR_ASSERT(compute_s.size() == wait_s.size(), "one compute and one wait time per worker");
    ROTOR_ASSERT(!compute_s.empty(), "at least one worker");
    IterationTimes t;
    t.wall_s = wall_s;
    t.compute_s.assign(compute_s.begin(), compute_s.end());
    t.wait_s.assign(wait_s.begin(), wait_s.end());
    const double p = static_cast<double>(compute_s.size());
    double sum = 0;
    double overhead = 0;
    for (std::size_t w = 0; w < compute_s.size(); ++w) {
        sum += compute_s[w];
        t.other_s.push_back(std::max(0.0, wall_s - compute_s[w] - wait_s[w]));
        if (wall_s > 0) overhead += 1.0 - std::min(1.0, compute_s[w] / wall_s);
    }
    t.effective_ratio = wall_s > 0 ? std::min(1.0, sum / (p * wall_s)) : 0.0;
    t.load_cv = population_cv(compute_s);
    t.overhead_ratio = wall_s > 0 ? overhead / p : 0.0;
    return t;
}

WorkerClocks::WorkerClocks(int workers) {
    if (workers < 1) {
        throw ConfigError("threads", "must be at least 1, got " + std::to_string(workers));
    }
    clocks_.resize(static_cast<std::size_t>(workers));
}

WorkerClock& WorkerClocks::clock(int worker) {
    ROTOR_ASSERT(worker >= 0 && worker < workers(), "worker index out of range");
    return clocks_[static_cast<std::size_t>(worker)];
}

void WorkerClocks::begin_iteration() {
    for (WorkerClock& c : clocks_) c = WorkerClock{};
    wall_.reset();
}

void WorkerClocks::add(const IterationTimes& part) {
    ROTOR_ASSERT(part.compute_s.size() == clocks_.size() && part.wait_s.size() == clocks_.size(),
                 "WorkerClocks::add: one time per worker");
    for (std::size_t w = 0; w < clocks_.size(); ++w) {
        clocks_[w].add(Phase::kCompute, part.compute_s[w]);
        clocks_[w].add(Phase::kWait, part.wait_s[w]);
    }
}

IterationTimes WorkerClocks::end_iteration() const {
    const double wall = wall_.seconds();
    std::vector<double> compute;
    std::vector<double> wait;
    for (const WorkerClock& c : clocks_) {
        compute.push_back(c.compute_s);
        wait.push_back(c.wait_s);
    }
    return summarize_times(compute, wait, wall);
}

LiveClocks::LiveClocks(int workers) : workers_(workers) {
    if (workers < 1) {
        throw ConfigError("threads", "must be at least 1, got " + std::to_string(workers));
    }
    slots_ = std::make_unique<Slot[]>(static_cast<std::size_t>(workers));
}

void LiveClocks::enter(int worker, Phase phase) {
    ROTOR_ASSERT(worker >= 0 && worker < workers_, "worker index out of range");
    Slot& s = slots_[static_cast<std::size_t>(worker)];
    const double now = wall_.seconds();
    std::lock_guard lock(s.mutex);
    ROTOR_ASSERT(s.phase < 0, "LiveClocks: a worker entered a phase while in one");
    s.phase = static_cast<int>(phase);
    s.since_s = now;
}

void LiveClocks::leave(int worker) {
    ROTOR_ASSERT(worker >= 0 && worker < workers_, "worker index out of range");
    Slot& s = slots_[static_cast<std::size_t>(worker)];
    const double now = wall_.seconds();
    std::lock_guard lock(s.mutex);
    ROTOR_ASSERT(s.phase >= 0, "LiveClocks: a worker left no phase");
    (s.phase == static_cast<int>(Phase::kCompute) ? s.compute_s : s.wait_s) += now - s.since_s;
    s.phase = -1;
}

LiveClocks::Snapshot LiveClocks::snapshot() const {
    Snapshot out;
    out.wall_s = wall_.seconds();
    for (int w = 0; w < workers_; ++w) {
        const Slot& s = slots_[static_cast<std::size_t>(w)];
        std::lock_guard lock(s.mutex);
        const double running = s.phase >= 0 ? std::max(0.0, out.wall_s - s.since_s) : 0.0;
        out.compute_s.push_back(s.compute_s +
                                (s.phase == static_cast<int>(Phase::kCompute) ? running : 0.0));
        out.wait_s.push_back(s.wait_s +
                             (s.phase == static_cast<int>(Phase::kWait) ? running : 0.0));
    }
    return out;
}

IterationTimes LiveClocks::between(const Snapshot& from, const Snapshot& to) {
    ROTOR_ASSERT(from.compute_s.size() == to.compute_s.size(), "snapshots of different clocks");
    std::vector<double> compute;
    std::vector<double> wait;
    for (std::size_t w = 0; w < to.compute_s.size(); ++w) {
        compute.push_back(std::max(0.0, to.compute_s[w] - from.compute_s[w]));
        wait.push_back(std::max(0.0, to.wait_s[w] - from.wait_s[w]));
    }
    return summarize_times(compute, wait, std::max(0.0, to.wall_s - from.wall_s));
}

}  // namespace rotor::sched
