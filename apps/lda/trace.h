// The scheduler timeline in the Chrome / Perfetto trace-event format (`--trace FILE`): one track
// per worker thread, one slice per block run, named by its row and column. Open the file in
// https://ui.perfetto.dev or chrome://tracing to see load balance.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "apps/lda/trainer.h"

namespace rotor::lda {

/// Writes `runs` as a JSON trace-event file, atomically. Throws SystemError.
void write_chrome_trace(const std::string& path, std::span<const BlockRun> runs, int workers);

/// The distributed trainer's timeline (`mpiexec -n P rotor lda train --trace FILE`): one process
/// per rank (pid = rank, named "rank r"), one track per worker of that rank; runs_by_rank[r] are
/// rank r's block runs (column s·c + j: group j of slice s). Written atomically. Throws
/// SystemError.
void write_chrome_trace_ranks(const std::string& path,
                              std::span<const std::vector<BlockRun>> runs_by_rank, int workers);

}  // namespace rotor::lda
