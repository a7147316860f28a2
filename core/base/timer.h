// Wall-clock stopwatch on the steady clock.
#pragma once

#include <chrono>

namespace rotor {

/// Measures elapsed wall seconds since construction or the last reset(). Not thread-safe.
class Stopwatch {
  public:
    using Clock = std::chrono::steady_clock;
    Stopwatch() : start_(Clock::now()) {}
    void reset() { start_ = Clock::now(); }
    double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  private:
    Clock::time_point start_;
};

}  // namespace rotor
