// The scheduler timeline in the Chrome / Perfetto trace-event format (`--trace FILE` of every
// `train` command): one track per worker thread, one slice per block run, named by its row and
// column; under MPI one process per rank. Open the file in https://ui.perfetto.dev or
// chrome://tracing to see load balance.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rotor::comm {
class WireReader;
class WireWriter;
}  // namespace rotor::comm

namespace rotor::train {

/// One block's run on one worker.
struct BlockRun {
    std::uint32_t iter = 0;
    int worker = 0;
    int row = 0;
    int col = 0;
    double start_s = 0;  ///< seconds since the trainer's time origin
    double end_s = 0;
};

/// BlockRun on the wire (comm/wire.h), field by field in declaration order, so ranks can gather
/// their timelines.
void wire_encode(comm::WireWriter& w, const BlockRun& b);
void wire_decode(comm::WireReader& r, BlockRun& b);

/// Writes `runs` of one process named `name` (e.g. "rotor lda train") as a JSON trace-event
/// file, atomically. Throws SystemError.
void write_chrome_trace(const std::string& path, std::span<const BlockRun> runs, int workers,
                        const std::string& name);

/// A distributed run's timeline: one process per rank (pid = rank, named "rank r"), one track
/// per worker of that rank; runs_by_rank[r] are rank r's block runs. Written atomically. Throws
/// SystemError.
void write_chrome_trace_ranks(const std::string& path,
                              std::span<const std::vector<BlockRun>> runs_by_rank, int workers);

/// A run's timeline as gathered from its ranks (Trainer::gather_schedule): one rank's as
/// write_chrome_trace under `name`, several as write_chrome_trace_ranks.
void write_run_trace(const std::string& path, std::span<const std::vector<BlockRun>> runs_by_rank,
                     int workers, const std::string& name);

}  // namespace rotor::train
