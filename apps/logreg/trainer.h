// The delayed block proximal gradient of sparse L1 logistic regression on workers and servers
// (Li et al., NIPS 2014, Algorithm 2; docs/logreg.md, "Algorithm"), over the key-value engine
// of comm/kv.h:
//   worker, iteration t: begin_iteration(t) (t − τ − 1 finished everywhere); b = block_at(t);
//     push g_b and u_b over its part (ExactSum limbs, so the servers' totals are exact); pull
//     w_b after iteration t; when the pull arrives (at once for τ = 0, up to τ iterations later
//     otherwise), add the changes of w_b to its margins; end_iteration(t).
//   server: adds the limbs as pushes arrive; once every worker's push of t is in, applies the
//     proximal step to the keys pushed (core/logreg/objective.h) and answers the pulls.
// With τ = 0 the weights and margins equal core/logreg/block_prox.h's bit for bit, for any
// number of workers and servers, without filters or with lossless ones only (keycache, zstd).
// Filters (apps/logreg/filters.h): keys a worker's filter drops from a push (kkt, skip) are not
// updated in that iteration; with kkt the pull answers carry after w_k the last aggregated gradient
// ĝ_k reduced to what the KKT rule reads of it (0: screened, +∞: not); with sigmod the workers end
// with one exact pull of their keys. Workers keep only their working set of w.
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
    std::uint64_t iterations = 0;  ///< iterations (blocks) to run
    double timeout_s = 60;         ///< of the kv engine
    FilterOptions filters;         ///< of pushes and pulls (none: bitwise the plain trainer)
};

/// What a rank ends with.
struct DelayedResult {
    std::map<std::uint64_t, double> server_weights;  ///< a server's keys and w (empty elsewhere)
    std::vector<double> worker_weights;              ///< a worker's copy of w over its part's keys
    comm::KvStats stats;
    std::vector<comm::KvEvent> schedule;  ///< a worker's
};

/// Collective over the ranks of `layout`: runs the iterations. `part` is this rank's examples
/// (non-null exactly on workers; its margins must match w = 0). Throws AgreedError when a rank
/// fails (after telling the others), CommError when one goes silent.
DelayedResult train_delayed(comm::Communicator& comm, const comm::KvLayout& layout, Shard* part,
                            const DelayedOptions& options);

}  // namespace rotor::logreg
