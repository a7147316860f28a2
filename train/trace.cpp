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

namespace {

// One field list serves both directions, so encoding and decoding cannot disagree.
template <class B, class F>
void block_run_fields(B& b, F&& field) {
    field(b.iter);
    field(b.worker);
    field(b.row);
    field(b.col);
    field(b.start_s);
    field(b.end_s);
}

}  // namespace

void wire_encode(comm::WireWriter& w, const BlockRun& b) {
    block_run_fields(b, [&](const auto& x) { w.put(x); });
}

void wire_decode(comm::WireReader& r, BlockRun& b) {
    block_run_fields(b, [&](auto& x) { r.get(x); });
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

void write_run_trace(const std::string& path, std::span<const std::vector<BlockRun>> runs_by_rank,
                     int workers, const std::string& name) {
    if (runs_by_rank.size() == 1) {
        write_chrome_trace(path, runs_by_rank[0], workers, name);
    } else {
        write_chrome_trace_ranks(path, runs_by_rank, workers);
    }
}

}  // namespace rotor::train
