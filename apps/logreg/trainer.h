// The delayed block proximal gradient of sparse L1 logistic regression on workers and servers
// (Li et al., NIPS 2014, Algorithm 2; docs/logreg.md, "Algorithm"), over the key-value engine
// of comm/kv.h:
//   worker, iteration t: begin_iteration(t) (t − τ − 1 finished everywhere); b = block_at(t);
//     push g_b and u_b over its part (PushValues: core::ExactSum limbs, so the servers' totals
//     are exact, or the values rounded to float32, summed at the servers in order of arrival); pull
//     w_b after iteration t; when the pull arrives (at once for τ = 0, up to τ iterations later
//     otherwise), add the changes of w_b to its margins; end_iteration(t).
//   server: adds the limbs as pushes arrive; once every worker's push of t is in, applies the
//     proximal step to the keys pushed (core/logreg/objective.h) and answers the pulls.
// With τ = 0 the weights and margins equal core/logreg/block_prox.h's bit for bit, for any
// number of workers and servers, without filters or with lossless ones only (keycache, zstd).
// Filters (apps/logreg/filters.h): keys a worker's filter drops from a push (kkt, skip) are not
// updated in that iteration; with kkt the pull answers carry after w_k the last aggregated gradient
// ĝ_k reduced to what the KKT rule reads of it (0: screened, +∞: not); with sigmod the workers end
// with one exact pull of their keys. The filters' memory (KKT screen, key caches, sigmod's last
// values) lives in a DelayedMemory that a CLI chaining calls between evaluations passes to each
// (without one: a call's own). Workers keep only their working set of w.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "apps/logreg/filters.h"
#include "apps/logreg/worker.h"
#include "comm/communicator.h"
#include "comm/kv.h"
#include "core/logreg/block_prox.h"

namespace rotor::logreg {

/// How a worker's g_k and u_k travel to the servers (docs/logreg.md, "The delayed trainer").
enum class PushValues {
    kAuto,     ///< kExact at τ = 0, kFloat32 with delay
    kExact,    ///< the core::ExactSum limbs, 4 + 4 values a key: the servers' sums do not depend
               ///< on the split or the order of arrival (τ = 0: bitwise BlockProx)
    kFloat32,  ///< g_k and u_k rounded to float32, 2 values a key (8 bytes); the servers add
               ///< them in double in order of arrival
};

/// Options of train_delayed(). A plain struct.
struct DelayedOptions {
    BlockProxOptions prox;
    std::int64_t delay = 0;        ///< τ, or comm::kInfiniteDelay
    std::uint64_t iterations = 0;  ///< the iteration to stop before: runs [first, iterations)
    std::uint64_t first = 0;       ///< the first iteration (its block is block_at(first))
    double timeout_s = 60;         ///< of the kv engine
    /// --simulate-straggler (a testing and benchmark aid): the worker on this rank (-1: none)
    /// sleeps (straggler_factor - 1) times its compute seconds of each iteration before pushing
    /// (CPU seconds over its threads: what the work takes on cores of its own).
    int straggler_rank = -1;
    double straggler_factor = 1;
    int threads = 1;        ///< threads of each worker, sharing its examples (>= 1)
    FilterOptions filters;  ///< of pushes and pulls (none: bitwise the plain trainer)
    PushValues push_values = PushValues::kAuto;

    /// push_values resolved: the limbs (kExact, or kAuto at τ = 0).
    bool exact_pushes() const noexcept {
        return push_values == PushValues::kExact ||
               (push_values == PushValues::kAuto && delay == 0);
    }
};

/// What one rank's filters remember (its filter stack with its key caches and sigmod's last
/// values, a worker's KKT screen, a server's last aggregated gradients ĝ_k), and a worker's
/// threads (with T > 1: its runtime and team), carried from one call of train_delayed to the next
/// call of the same run on the same ranks with the same options. Empty at first; every rank keeps
/// its own.
struct DelayedMemory {
    std::optional<comm::KvFilterStack> filters;
    std::unique_ptr<KktScreen> screen;
    std::unordered_map<std::uint64_t, double> last_gradient;
    std::unique_ptr<WorkerThreads> threads;
};

/// Where a run starts (w = 0 when empty): the w an earlier run ended with (its DelayedResult)
/// or a checkpoint's. The parts' margins must match it.
struct DelayedStart {
    std::map<std::uint64_t, double> server_weights;  ///< keys a server does not own are ignored
    std::vector<double> worker_weights;  ///< aligned with the part's keys, or empty (w = 0)
};

/// What a rank ends with.
struct DelayedResult {
    std::map<std::uint64_t, double> server_weights;  ///< a server's keys and w (empty elsewhere)
    std::vector<double> worker_weights;              ///< a worker's copy of w over its part's keys
    comm::KvStats stats;
    std::vector<comm::KvEvent> schedule;  ///< a worker's
};

/// Collective over the ranks of `layout`: runs iterations [first, iterations) and ends with every
/// pull applied (so consecutive calls, each starting where the last ended, are what a CLI
/// evaluates and checkpoints between; with τ = 0 they equal one call bit for bit). `part` is this
/// rank's examples (non-null exactly on workers; its margins must match `start`). Throws
/// AgreedError when a rank fails (after telling the others), CommError when one goes silent.
/// `memory` (may be null: the filters start afresh) is what the filters remember, taken from the
/// last call and left for the next (every rank passes one, or none).
DelayedResult train_delayed(comm::Communicator& comm, const comm::KvLayout& layout, Shard* part,
                            const DelayedOptions& options, const DelayedStart& start = {},
                            DelayedMemory* memory = nullptr);

}  // namespace rotor::logreg
