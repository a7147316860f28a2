#include "train/trace.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "comm/wire.h"
#include "core/io/atomic_file.h"

namespace rotor::train {

namespace {

/// Appends process `pid`'s metadata, its worker tracks and its runs as trace events.
void add_process(nlohmann::json& events, int pid, const std::string& name,
                 std::span<const BlockRun> runs, int workers) {
    // Trace-event format: "X" (complete) events with microsecond timestamps; "M" metadata
    // events name the process and the worker tracks.
    events.push_back(
        {{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", name}}}});
    for (int w = 0; w < workers; ++w)
        events.push_back({{"ph", "M"},
                          {"pid", pid},
                          {"tid", w},
                          {"name", "thread_name"},
                          {"args", {{"name", fmt::format("worker {}", w)}}}});
    for (const BlockRun& r : runs) {
        events.push_back({{"ph", "X"},
                          {"pid", pid},
                          {"tid", r.worker},
                          {"name", fmt::format("block ({},{})", r.row, r.col)},
                          {"cat", "block"},
                          {"ts", r.start_s * 1e6},
                          {"dur", (r.end_s - r.start_s) * 1e6},
                          {"args", {{"iter", r.iter}, {"row", r.row}, {"col", r.col}}}});
    }
}

void write_events(const std::string& path, nlohmann::json events) {
    nlohmann::json doc = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
    core::write_file_atomically(path, doc.dump() + "\n");
}

}  // namespace

void wire_encode(comm::WireWriter& w, const BlockRun& b) {
    w.put(b.iter);
    w.put(b.worker);
    w.put(b.row);
    w.put(b.col);
    w.put(b.start_s);
    w.put(b.end_s);
}

void wire_decode(comm::WireReader& r, BlockRun& b) {
    r.get(b.iter);
    r.get(b.worker);
    r.get(b.row);
    r.get(b.col);
    r.get(b.start_s);
    r.get(b.end_s);
}

void write_chrome_trace(const std::string& path, std::span<const BlockRun> runs, int workers,
                        const std::string& name) {
    nlohmann::json events = nlohmann::json::array();
    add_process(events, 0, name, runs, workers);
    write_events(path, std::move(events));
}

void write_chrome_trace_ranks(const std::string& path,
                              std::span<const std::vector<BlockRun>> runs_by_rank, int workers) {
    nlohmann::json events = nlohmann::json::array();
    for (std::size_t r = 0; r < runs_by_rank.size(); ++r) {
        const int pid = static_cast<int>(r);
        add_process(events, pid, fmt::format("rank {}", r), runs_by_rank[r], workers);
        events.push_back({{"ph", "M"},
                          {"pid", pid},
                          {"name", "process_sort_index"},
                          {"args", {{"sort_index", pid}}}});
    }
    write_events(path, std::move(events));
}

}  // namespace rotor::train
