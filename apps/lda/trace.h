// The scheduler timeline in the Chrome / Perfetto trace-event format (`--trace FILE`): one track
// per worker thread, one slice per block run, named by its row and column. Open the file in
// https://ui.perfetto.dev or chrome://tracing to see load balance.
#pragma once

#include <span>
#include <string>

#include "apps/lda/trainer.h"

namespace rotor::lda {

/// Writes `runs` as a JSON trace-event file, atomically. Throws SystemError.
void write_chrome_trace(const std::string& path, std::span<const BlockRun> runs, int workers);

}  // namespace rotor::lda
