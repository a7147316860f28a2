// The --metrics file of `rotor logreg train` (docs/logreg.md, "Metrics file"): JSON lines, one
// object per evaluation, each appended and flushed as it is made, so a killed run leaves every
// record it made and a resumed run appends to them. Written by rank 0 only; not thread-safe.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rotor::logreg {

/// One record: keys in order, numbers (non-finite ones are written as null).
using MetricsRecord = std::vector<std::pair<std::string, double>>;

/// The record as one JSON object (no newline); integral values without a fraction.
std::string metrics_json(const MetricsRecord& r);

/// An open metrics file. Movable, not copyable.
class MetricsLog {
  public:
    /// Opens `path`: truncated, or with `append` (a resumed run) appended to. SystemError.
    MetricsLog(const std::string& path, bool append);
    MetricsLog(const MetricsLog&) = delete;
    MetricsLog& operator=(const MetricsLog&) = delete;
    ~MetricsLog();
    /// Appends the record and a newline, and flushes. SystemError on failure.
    void write(const MetricsRecord& r);

  private:
    std::string path_;
    std::FILE* file_ = nullptr;
};

}  // namespace rotor::logreg
