// The --metrics file of every model's `train` (docs/formats.md, "Metrics files"): JSON lines,
// one record per line, each appended with write(2) as it is made, so that a run killed with
// kill -9 keeps every record it finished; a resumed run appends to what the run before it wrote,
// keeping one record per iteration. A failure to write it never costs the model: it is kept and
// reported by commit(), after the model is committed (docs/reliability.md, "One rule for every
// output"). Written by rank 0 only. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rotor::train {

/// An open metrics file. Not copyable.
class MetricsFile {
  public:
    /// Opens `path` after removing the stale temporaries beside it (what rotor before streamed
    /// records left). A new run (`resume_at` empty) creates it, or truncates an earlier one. A
    /// run resumed from a checkpoint of `*resume_at` iterations keeps the records the runs
    /// before it wrote up to that iteration: the whole lines before the first one that is not a
    /// JSON object with an `iter` of at most *resume_at (the records a killed run wrote past its
    /// last checkpoint, which the resumed run writes again, and a line it left half-written);
    /// the file is cut there and new records follow. A missing file is created. Throws
    /// SystemError naming the file.
    explicit MetricsFile(std::string path, std::optional<std::uint64_t> resume_at = std::nullopt);
    MetricsFile(const MetricsFile&) = delete;
    MetricsFile& operator=(const MetricsFile&) = delete;
    ~MetricsFile();

    /// Appends `json` (one JSON object, no newline: the record of iteration `iter`) and a
    /// newline with write(2): on disk for any later reader, and after kill -9. Never throws: a
    /// failure (a full disk, a file size limit) cuts the file back to its last whole record,
    /// closes it and is kept for commit(); later records are dropped, and training goes on.
    void append(std::uint64_t iter, std::string_view json);
    /// The `time_s` of the last record kept from the runs before (0 for a new run, or none): a
    /// resumed run adds it to its own, so that `time_s` counts the training seconds to reach
    /// each iteration across resumes.
    double resumed_time_s() const noexcept { return resumed_time_s_; }
    /// Records kept from the runs before.
    std::uint64_t kept() const noexcept { return kept_; }
    /// Whether an append failed.
    bool failed() const noexcept { return !failure_.empty(); }
    /// fsyncs and closes the file. Throws SystemError naming it when an append failed ("cannot
    /// write PATH: <reason> (it holds the records up to iteration N)") or when fsync or close
    /// fails. Call it after the model is committed.
    void commit();
    const std::string& path() const noexcept { return path_; }

  private:
    std::string path_;
    int fd_ = -1;
    std::uint64_t size_ = 0;       ///< bytes of whole records in the file
    std::uint64_t last_iter_ = 0;  ///< iter of the last whole record
    std::uint64_t kept_ = 0;
    double resumed_time_s_ = 0;
    std::string failure_;  ///< the first failed append's error, "" when none
};

/// The `iter` and `time_s` of one metrics line, if it is a JSON object with an unsigned `iter`
/// (time_s 0 when absent). What MetricsFile keeps on resume, and what tests read.
struct MetricsLine {
    std::uint64_t iter = 0;
    double time_s = 0;
};
std::optional<MetricsLine> parse_metrics_line(std::string_view line);

}  // namespace rotor::train
