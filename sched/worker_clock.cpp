#include "sched/worker_clock.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/base/error.h"

namespace rotor::sched {

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
    const double mean = sum / p;
    double var = 0;
    for (double c : compute_s) var += (c - mean) * (c - mean);
    var /= p;
    t.effective_ratio = wall_s > 0 ? std::min(1.0, sum / (p * wall_s)) : 0.0;
    t.load_cv = mean > 0 ? std::sqrt(var) / mean : 0.0;
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

}  // namespace rotor::sched
