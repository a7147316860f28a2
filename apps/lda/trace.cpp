#include "apps/lda/trace.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/io/atomic_file.h"

namespace rotor::lda {

void write_chrome_trace(const std::string& path, std::span<const BlockRun> runs, int workers) {
    // Trace-event format: "X" (complete) events with microsecond timestamps; "M" metadata
    // events name the process and the worker tracks.
    nlohmann::json events = nlohmann::json::array();
    events.push_back({{"ph", "M"},
                      {"pid", 0},
                      {"name", "process_name"},
                      {"args", {{"name", "rotor lda train"}}}});
    for (int w = 0; w < workers; ++w)
        events.push_back({{"ph", "M"},
                          {"pid", 0},
                          {"tid", w},
                          {"name", "thread_name"},
                          {"args", {{"name", fmt::format("worker {}", w)}}}});
    for (const BlockRun& r : runs) {
        events.push_back({{"ph", "X"},
                          {"pid", 0},
                          {"tid", r.worker},
                          {"name", fmt::format("block ({},{})", r.row, r.col)},
                          {"cat", "block"},
                          {"ts", r.start_s * 1e6},
                          {"dur", (r.end_s - r.start_s) * 1e6},
                          {"args", {{"iter", r.iter}, {"row", r.row}, {"col", r.col}}}});
    }
    nlohmann::json doc = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
    core::write_file_atomically(path, doc.dump() + "\n");
}

}  // namespace rotor::lda
