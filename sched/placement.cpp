#include "sched/placement.h"

#include <algorithm>
#include <string>

#include "core/base/error.h"

namespace rotor::sched {

std::vector<int> Placement::nodes_used() const {
    std::vector<int> nodes;
    for (const Slot& s : slots) nodes.push_back(s.numa_node);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    return nodes;
}

std::vector<int> Placement::workers_on(int node) const {
    std::vector<int> workers;
    for (const Slot& s : slots) {
        if (s.numa_node == node) workers.push_back(s.worker);
    }
    return workers;
}

Placement plan_placement(const Topology& topology, int threads, Policy policy) {
    if (threads < 1) {
        throw ConfigError("threads", "must be at least 1, got " + std::to_string(threads));
    }
    // Cores grouped by NUMA node, each group in logical core order.
    std::vector<std::vector<int>> by_node(static_cast<std::size_t>(topology.numa_nodes()));
    for (const CoreInfo& c : topology.core_info()) {
        by_node[static_cast<std::size_t>(c.numa_node)].push_back(c.index);
    }
    // The order in which cores are handed out.
    std::vector<int> order;
    if (policy == Policy::kCompact) {
        for (const auto& group : by_node) order.insert(order.end(), group.begin(), group.end());
    } else {
        std::size_t longest = 0;
        for (const auto& group : by_node) longest = std::max(longest, group.size());
        for (std::size_t i = 0; i < longest; ++i) {
            for (const auto& group : by_node) {
                if (i < group.size()) order.push_back(group[i]);
            }
        }
    }
    ROTOR_ASSERT(static_cast<int>(order.size()) == topology.cores(), "every core ordered once");

    Placement plan;
    plan.this_system = topology.is_this_system();
    for (int w = 0; w < threads; ++w) {
        const CoreInfo& core = topology.core_info()[static_cast<std::size_t>(
            order[static_cast<std::size_t>(w) % order.size()])];
        plan.slots.push_back(
            Slot{w, core.numa_node, core.numa_os_index, core.index, core.pu_os.front()});
    }
    if (threads > topology.cores()) {
        plan.warning = std::to_string(threads) + " threads on " + std::to_string(topology.cores()) +
                       " cores: placement wraps around and workers share cores";
    }
    return plan;
}

}  // namespace rotor::sched
