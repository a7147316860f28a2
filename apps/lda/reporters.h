// Reporters of training progress: a progress line per iteration on a terminal stream, and the
// JSON-lines metrics file of shared/ARCHITECTURE.md ("Metrics").
#pragma once

#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "apps/lda/trainer.h"
#include "core/io/atomic_file.h"

namespace rotor::lda {

/// One JSON object (a line, without newline) with the metrics keys of ARCHITECTURE.md.
std::string metrics_json(const IterationMetrics& m);

/// Prints `iter 10/100  loglik/token -8.1234  1.23M tok/s  elapsed 4.1s  ETA 36.9s`. The rate is
/// over the last kRateWindow iterations: back-to-back sweeps overlap, so one sweep's own window
/// can be much shorter or longer than the sweep's work (the metrics file keeps every window).
class TerminalReporter final : public Reporter {
  public:
    static constexpr std::size_t kRateWindow = 5;
    explicit TerminalReporter(std::FILE* out) : out_(out) {}
    void on_start(std::string_view summary) override;
    void on_iteration(const IterationMetrics& m, std::uint32_t last_iteration) override;

  private:
    std::FILE* out_;
    std::uint32_t first_ = 0;
    std::deque<std::pair<std::uint64_t, double>> recent_;  ///< (tokens, seconds) per iteration
};

/// Appends one metrics record per iteration to a file written atomically: it appears under its
/// final name when commit() is called at the end of a successful run.
class JsonLinesReporter final : public Reporter {
  public:
    explicit JsonLinesReporter(const std::string& path) : file_(path) {}
    void on_iteration(const IterationMetrics& m, std::uint32_t last_iteration) override;
    void commit() { file_.commit(); }

  private:
    core::AtomicFile file_;
};

/// Forwards to several reporters.
class TeeReporter final : public Reporter {
  public:
    void add(Reporter& r) { targets_.push_back(&r); }
    void on_start(std::string_view summary) override {
        for (auto* r : targets_) r->on_start(summary);
    }
    void on_iteration(const IterationMetrics& m, std::uint32_t last) override {
        for (auto* r : targets_) r->on_iteration(m, last);
    }

  private:
    std::vector<Reporter*> targets_;
};

}  // namespace rotor::lda
