// The delayed block proximal gradient of sparse L1 logistic regression on workers and servers
// (Li et al., NIPS 2014, Algorithm 2; docs/logreg.md, "Algorithm"), over the key-value engine
// of comm/kv.h:
//   worker, iteration t: begin_iteration(t) (t − τ − 1 finished everywhere); b = block_at(t);
//     push g_b and u_b over its part (core::ExactSum limbs, so the servers' totals are exact); pull
//     w_b after iteration t; when the pull arrives (at once for τ = 0, up to τ iterations later
//     otherwise), add the changes of w_b to its margins; end_iteration(t).
//   server: adds the limbs as pushes arrive; once every worker's push of t is in, applies the
//     proximal step to the keys pushed (core/logreg/objective.h) and answers the pulls.
// With τ = 0 the weights and margins equal core/logreg/block_prox.h's bit for bit, for any
// number of workers and servers, without filters or with lossless ones only (keycache, zstd).
// Filters (apps/logreg/filters.h): keys a worker's filter drops from a push (kkt, skip) are not
// updated in that iteration; with kkt the pull answers carry after w_k the last aggregated gradient
// ĝ_k reduced to what the KKT rule reads of it (0: screened, +∞: not); with sigmod the workers end
// with one exact pull of their keys. The filters' memory (KKT screen, sigmod's last values) lives
// for one call: a CLI that chains calls between evaluations restarts it at each. Workers keep
// only their working set of w.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "apps/logreg/filters.h"
#include "comm/communicator.h"
#include "comm/kv.h"
#include "core/logreg/block_prox.h"

namespace rotor::logreg {

/// Options of train_delayed(). A plain struct.
struct DelayedOptions {
    BlockProxOptions prox;
    std::int64_t delay = 0;        ///< τ, or comm::kInfiniteDelay
    std::uint64_t iterations = 0;  ///< the iteration to stop before: runs [first, iterations)
    std::uint64_t first = 0;       ///< the first iteration (its block is block_at(first))
    double timeout_s = 60;         ///< of the kv engine
    /// --simulate-straggler (a testing and benchmark aid): the worker on this rank (-1: none)
    /// sleeps (straggler_factor - 1) times its compute seconds of each iteration before pushing.
    int straggler_rank = -1;
    double straggler_factor = 1;
    int threads = 1;        ///< threads of each worker, sharing its examples (>= 1)
    FilterOptions filters;  ///< of pushes and pulls (none: bitwise the plain trainer)
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
DelayedResult train_delayed(comm::Communicator& comm, const comm::KvLayout& layout, Shard* part,
                            const DelayedOptions& options, const DelayedStart& start = {});

}  // namespace rotor::logreg
