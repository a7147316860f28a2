// `rotor logreg train` on one process with the newGLMNET solver (core/logreg/newton.h;
// docs/logreg.md, "Solvers"): which solver a run takes, and the run itself between the read
// data and the model file (metrics records, progress lines, the stop line). Used by
// train_run.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "apps/logreg/train_run.h"
#include "comm/communicator.h"
#include "core/logreg/examples.h"
#include "core/logreg/model_file.h"
#include "core/logreg/shard.h"

namespace rotor::logreg {

/// The flags that belong to the block proximal gradient (--solver prox) only.
inline constexpr const char* kProxOnlyFlags[] = {"--blocks",
                                                 "--block-file",
                                                 "--curvature",
                                                 "--eta",
                                                 "--max-step",
                                                 "--delay",
                                                 "--servers",
                                                 "--filters",
                                                 "--kkt-delta",
                                                 "--kkt-refresh",
                                                 "--sigmod-threshold",
                                                 "--skip-rate",
                                                 "--stats",
                                                 "--simulate-straggler",
                                                 "--checkpoint-every",
                                                 "--checkpoint-dir",
                                                 "--resume"};

/// Newton iterations at most when --iterations is not given.
inline constexpr std::uint64_t kDefaultNewtonIterations = 1000;

/// Whether the run takes newGLMNET: --solver newton (one process, none of kProxOnlyFlags, else
/// ConfigError naming the flag), or auto on one process without any of kProxOnlyFlags. The same
/// answer on every rank.
bool use_newton(const TrainFlags& f, int ranks);

/// What a newGLMNET run ends with.
struct NewtonRun {
    Model model;                   ///< w, objective summed exactly (as the block solver's models)
    std::uint64_t iterations = 0;  ///< Newton iterations done
    double time_s = 0;             ///< training seconds
    std::string stop_line;         ///< "converged after ..." or "NOT converged: ..."
    bool converged = false;        ///< the stopping rule held
};

/// Before a newton run reads its data: glibc's allocator keeps blocks of every size in its heap
/// (no mmap per large block), so the vectors of the reading and the column form reuse freed
/// pages instead of faulting in fresh zeroed ones (sotu-party: 7,650 page faults → 5,900, user
/// time −12%). Process-wide; only for the one-process newton run (a no-op without glibc).
void reuse_freed_memory();

/// Where the metrics records go: (Newton iterations, the record as JSON).
using RecordSink = std::function<void(std::uint64_t, const std::string&)>;

/// One process: trains on `part` (the whole data; its margins those of w = 0), gives a record
/// per --eval-every Newton iterations (default each) to `metrics` (may be empty; the last with
/// the `test` metrics when given) and prints progress lines to stderr unless quiet.
NewtonRun train_newton(const TrainFlags& f, comm::Communicator& world, Shard& part,
                       const Examples* test, const RecordSink& metrics);

}  // namespace rotor::logreg
