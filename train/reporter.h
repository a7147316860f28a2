// Where training progress goes: a progress line per iteration on a terminal stream, the
// JSON-lines metrics file (docs/user-guide.md, "Metrics"), or both. Any model's records.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "train/metrics_file.h"
#include "train/record.h"

namespace rotor::train {

/// Receives progress: one call at a time, in iteration order; during back-to-back sweeps from
/// the worker thread that completed the sweep, otherwise from the training thread.
class Reporter {
  public:
    virtual ~Reporter() = default;
    /// Once, before the first iteration: one line describing the run.
    virtual void on_start(std::string_view /*summary*/) {}
    virtual void on_iteration(const Record& r, std::uint32_t last_iteration) = 0;
};

/// Prints `iter 10/100  loglik/token -8.1234  held-out perplexity 812.3  1.23M tok/s  elapsed
/// 4.1s  ETA 36.9s`. The rate is rate_over(): the work of the last kRateWindow iterations over
/// their wall seconds, both as the metrics file has them (back-to-back sweeps overlap, so one
/// sweep's own window can be much shorter or longer than the sweep's work).
///
/// On a terminal (kInPlace) the line is rewritten in place ('\r'), except that the lines of
/// evaluation iterations (those with the headline value) and the last one stay; elsewhere
/// (kLines: a file, a pipe) every iteration gets its own line. summary() is the closing line.
class TerminalReporter final : public Reporter {
  public:
    static constexpr std::size_t kRateWindow = 5;
    enum class Mode { kAuto, kInPlace, kLines };
    /// kAuto: kInPlace when `out` is a terminal, else kLines.
    TerminalReporter(std::FILE* out, RecordSchema schema, Mode mode = Mode::kAuto);
    void on_start(std::string_view summary) override;
    void on_iteration(const Record& r, std::uint32_t last_iteration) override;
    /// One line for the end of training, without a newline: iterations and training seconds of
    /// this run (the last record's time_s), its mean rate (the work of every reported iteration
    /// over those seconds: from a metrics file, Σ count / last time_s), the last values of the
    /// headline and the shown keys. "" when no iteration was reported.
    std::string summary() const;
    bool in_place() const { return in_place_; }

    /// Σ processed / Σ iteration_s of `records` (the work of the last iterations over their
    /// wall seconds; 0 when no time passed): the figure on the progress line, from the records
    /// as the metrics file holds them.
    static double rate_over(std::span<const std::pair<std::uint64_t, double>> records);

  private:
    std::FILE* out_;
    RecordSchema schema_;
    bool in_place_ = false;
    std::size_t last_width_ = 0;  ///< the in-place line's length, to blank what it leaves
    std::uint32_t first_ = 0;
    std::uint32_t iterations_ = 0;  ///< iterations reported
    std::uint64_t processed_ = 0;   ///< their work
    double time_s_ = 0;             ///< the last record's time_s: training seconds so far
    std::vector<std::pair<std::string, double>> last_values_;  ///< headline and shown keys
    std::deque<std::pair<std::uint64_t, double>> recent_;  ///< (processed, seconds) per iteration
};

/// Writes one record per iteration to the metrics file (train::MetricsFile): appended and on
/// disk at every iteration, so a killed run keeps the records of the iterations it finished; a
/// resumed run (`resume_at`: the checkpoint's iterations) keeps those up to the checkpoint and
/// appends, its `time_s` continuing from the last one kept. A write error does not stop training:
/// commit(), called after the model is committed, throws it (SystemError naming the file). Not
/// thread-safe.
class JsonLinesReporter final : public Reporter {
  public:
    JsonLinesReporter(const std::string& path, RecordSchema schema,
                      std::optional<std::uint64_t> resume_at = std::nullopt);
    void on_iteration(const Record& r, std::uint32_t last_iteration) override;
    /// MetricsFile::commit().
    void commit() { file_.commit(); }

  private:
    MetricsFile file_;
    RecordSchema schema_;
};

/// Forwards to several reporters, in the order they were added.
class TeeReporter final : public Reporter {
  public:
    void add(Reporter& r) { targets_.push_back(&r); }
    void on_start(std::string_view summary) override {
        for (auto* r : targets_) r->on_start(summary);
    }
    void on_iteration(const Record& r, std::uint32_t last) override {
        for (auto* t : targets_) t->on_iteration(r, last);
    }

  private:
    std::vector<Reporter*> targets_;
};

/// "4.1s", "3m05s", "2h07m".
std::string human_duration(double seconds);
/// "1.23M", "45.6k", "789".
std::string human_rate(double per_second);

}  // namespace rotor::train
