// Placement: which core and PU each worker thread should run on. A pure function of a Topology,
// a thread count and a policy; the Runtime (runtime.h) applies it.
#pragma once

#include <string>
#include <vector>

#include "sched/topology.h"

namespace rotor::sched {

/// How workers are spread over NUMA nodes.
enum class Policy {
    kCompact,  ///< fill NUMA node 0's cores first, then node 1's, ... (the default)
    kSpread,   ///< round-robin across NUMA nodes: worker 0 on node 0, worker 1 on node 1, ...
};

/// Where one worker runs.
struct Slot {
    int worker = 0;              ///< worker index, 0..P-1
    int numa_node = 0;           ///< logical NUMA node index in the topology
    unsigned numa_os_index = 0;  ///< the node's OS index (for libnuma and tbb constraints)
    int core = 0;                ///< logical core index in the topology
    unsigned pu_os_index = 0;    ///< OS index of the PU to pin to (the core's first PU)
};

/// One slot per worker, in worker order. A value type; copy freely.
struct Placement {
    std::vector<Slot> slots;
    /// Empty, or a human-readable warning (e.g. more threads than cores: workers share cores).
    std::string warning;
    /// True when the topology was detected on this machine, so the PUs may be pinned to.
    bool this_system = false;

    int threads() const noexcept { return static_cast<int>(slots.size()); }
    /// The logical NUMA nodes used by at least one worker, ascending.
    std::vector<int> nodes_used() const;
    /// The workers placed on logical NUMA node `node`, ascending.
    std::vector<int> workers_on(int node) const;
};

/// Plans `threads` workers on `topology`. With more threads than cores the core order wraps
/// around (worker P uses the core of worker P - cores) and `warning` says so.
/// Throws ConfigError (key "threads") when threads < 1.
Placement plan_placement(const Topology& topology, int threads, Policy policy = Policy::kCompact);

}  // namespace rotor::sched
