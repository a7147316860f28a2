// One iteration's record, for any model: the keys every trainer reports (iteration, time, work
// done, the scheduler's ratios) and the model's own keys (log-likelihood, RMSE, objective, ...),
// written as one JSON object per line by JsonLinesReporter and summarised by TerminalReporter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rotor::sched {
struct IterationTimes;
}  // namespace rotor::sched

namespace rotor::train {

/// How a model names its work and its headline figure. Plain struct; the same for every record
/// of a run.
struct RecordSchema {
    std::string count_key = "units_processed";  ///< JSON key of Record::processed
    std::string rate_key = "units_per_s";       ///< JSON key of Record::per_s
    std::string rate_unit = "units/s";          ///< unit on the progress line
    /// A value key shown on the progress line when a record has it (e.g. "loglik_per_token");
    /// empty: none.
    std::string headline_key;
    std::string headline_label;  ///< its label there (e.g. "loglik/token")
    /// More value keys shown on the progress line and in the closing summary when a record has
    /// them, as (key, label): e.g. ("heldout_perplexity", "held-out perplexity").
    std::vector<std::pair<std::string, std::string>> shown;
};

/// One iteration. The common fields are filled by the harness and the block loop; `values` and
/// `arrays` by the model, in the order they should appear. Not thread-safe (a value type).
struct Record {
    std::uint32_t iter = 0;
    double time_s = 0;       ///< wall seconds since training began (excluding load, evaluation)
    double iteration_s = 0;  ///< this iteration's wall seconds
    std::uint64_t processed = 0;  ///< units of work done in the iteration (tokens, ratings, ...)
    double per_s = 0;             ///< processed / iteration_s
    double effective_ratio = 0;   ///< Σ per-worker compute seconds / (workers × wall seconds)
    double load_cv = 0;           ///< std / mean of the per-worker compute seconds
    double overhead_ratio = 0;    ///< mean over workers of 1 − compute seconds / wall seconds
    double processed_ratio = 1;   ///< processed / work available in the iteration (timer control)
    std::vector<std::pair<std::string, double>> values;
    std::vector<std::pair<std::string, std::vector<double>>> arrays;
    /// Text values (e.g. LDA's "sampler": the kernel that ran), in the order they should appear;
    /// written to the JSON record and shown on the progress line.
    std::vector<std::pair<std::string, std::string>> labels;

    /// Sets `key` (replacing an earlier value of the same key, else appending).
    void set(std::string_view key, double value);
    /// The value of `key`, if set.
    std::optional<double> get(std::string_view key) const;
    bool has(std::string_view key) const { return get(key).has_value(); }
    /// Sets array `key` (replacing, else appending).
    void set_array(std::string_view key, std::vector<double> values);
    /// The array `key`, or null.
    const std::vector<double>* array(std::string_view key) const;
    /// Sets text value `key` (replacing, else appending).
    void set_label(std::string_view key, std::string value);
    /// The text value `key`, or null.
    const std::string* label(std::string_view key) const;
    /// Copies the scheduler's accounting of the iteration: iteration_s, the three ratios and the
    /// per-worker arrays thread_compute_s, thread_wait_s, thread_other_s.
    void set_times(const sched::IterationTimes& times);
    /// per_s and processed_ratio from processed, iteration_s and the work `available`.
    void finish(std::uint64_t available);
};

/// The record as one JSON object (no newline): iter, time_s, the rate, the model's values and
/// labels, the ratios, the arrays, iteration_s, the count. Non-finite values are written as null.
std::string record_json(const Record& r, const RecordSchema& schema);

}  // namespace rotor::train
