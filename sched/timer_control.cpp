#include "sched/timer_control.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "core/base/error.h"

namespace rotor::sched {

void TimerParams::validate() const {
    if (!(initial_s > 0)) throw ConfigError("timer.initial_s", "must be > 0");
    if (!(low > 0 && low < 1)) throw ConfigError("timer.low", "must be in (0, 1)");
    if (!(high > low && high <= 1)) throw ConfigError("timer.high", "must be in (timer.low, 1]");
    if (!(min_s > 0)) throw ConfigError("timer.min_s", "must be > 0");
    if (!(max_s >= min_s)) throw ConfigError("timer.max_s", "must be >= timer.min_s");
}

TimerControl::TimerControl(const TimerParams& params) : params_(params), budget_(0) {
    params_.validate();
    budget_ = std::clamp(params_.initial_s, params_.min_s, params_.max_s);
}

double TimerControl::update(double processed_ratio) {
    if (!(processed_ratio >= 0 && processed_ratio <= 1)) {
        throw ConfigError("processed_ratio",
                          "must be in [0, 1], got " + std::to_string(processed_ratio));
    }
    // HarpLDA+ rule: too little work done -> twice the time; too much -> half the time.
    if (processed_ratio < params_.low) {
        budget_ *= 2;
    } else if (processed_ratio > params_.high) {
        budget_ /= 2;
    }
    budget_ = std::clamp(budget_, params_.min_s, params_.max_s);
    return budget_;
}

double TimerControl::reset(double seconds) {
    budget_ = std::clamp(seconds, params_.min_s, params_.max_s);
    return budget_;
}

double budget_for_ratio(std::span<const std::uint64_t> amounts, std::span<const double> speeds,
                        int rounds, double ratio) {
    if (amounts.size() != speeds.size() || rounds < 1 || !(ratio > 0 && ratio <= 1))
        throw ConfigError("budget_for_ratio",
                          "amounts and speeds of one size, rounds >= 1, ratio "
                          "in (0, 1]");
    double total = 0;
    double longest = 0;  // the budget at which every rank finishes its rounds
    for (std::size_t q = 0; q < amounts.size(); ++q) {
        if (!(speeds[q] > 0)) return 0;
        total += static_cast<double>(amounts[q]);
        longest = std::max(longest, static_cast<double>(amounts[q]) / (rounds * speeds[q]));
    }
    if (!(total > 0)) return 0;
    const auto processed = [&](double b) {
        double sum = 0;
        for (std::size_t q = 0; q < amounts.size(); ++q)
            sum += std::min(rounds * b * speeds[q], static_cast<double>(amounts[q]));
        return sum;
    };
    // processed() is continuous and increasing up to `longest`: bisect.
    double lo = 0;
    double hi = longest;
    for (int i = 0; i < 64; ++i) {
        const double mid = 0.5 * (lo + hi);
        (processed(mid) < ratio * total ? lo : hi) = mid;
    }
    return hi;
}

StopTimer::StopTimer(double seconds, std::function<void()> on_expire) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(std::max(0.0, seconds)));
    thread_ = std::thread([this, deadline, fn = std::move(on_expire)] {
        std::unique_lock lock(mutex_);
        if (cv_.wait_until(lock, deadline, [this] { return cancelled_; })) return;
        fired_ = true;
        lock.unlock();
        fn();
    });
}

StopTimer::~StopTimer() { cancel(); }

bool StopTimer::cancel() {
    {
        std::lock_guard lock(mutex_);
        cancelled_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    std::lock_guard lock(mutex_);
    return fired_;
}

}  // namespace rotor::sched
