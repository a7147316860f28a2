#include "sched/placement.h"

#include <gtest/gtest.h>

#include <set>

#include "core/base/error.h"

namespace rotor::sched {
namespace {

std::vector<int> nodes_of(const Placement& p) {
    std::vector<int> v;
    for (const Slot& s : p.slots) v.push_back(s.numa_node);
    return v;
}
std::vector<int> cores_of(const Placement& p) {
    std::vector<int> v;
    for (const Slot& s : p.slots) v.push_back(s.core);
    return v;
}

TEST(Placement, CompactFillsNodeZeroFirst) {
    const Topology t = Topology::synthetic("package:2 numa:1 core:2 pu:1");
    const Placement p = plan_placement(t, 4, Policy::kCompact);
    EXPECT_EQ(nodes_of(p), (std::vector<int>{0, 0, 1, 1}));
    EXPECT_EQ(cores_of(p), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_TRUE(p.warning.empty());
    EXPECT_FALSE(p.this_system);
    for (int w = 0; w < 4; ++w) {
        const Slot& s = p.slots[static_cast<std::size_t>(w)];
        EXPECT_EQ(s.worker, w);
        EXPECT_EQ(s.pu_os_index, t.core_pu(s.core));
        EXPECT_EQ(s.numa_os_index, t.numa_os_index(s.numa_node));
    }
    // Two threads stay on one node under compact.
    EXPECT_EQ(plan_placement(t, 2).nodes_used(), (std::vector<int>{0}));
}

TEST(Placement, SpreadAlternatesNodes) {
    const Topology t = Topology::synthetic("package:2 numa:1 core:2 pu:1");
    const Placement p = plan_placement(t, 4, Policy::kSpread);
    EXPECT_EQ(nodes_of(p), (std::vector<int>{0, 1, 0, 1}));
    EXPECT_EQ(cores_of(p), (std::vector<int>{0, 2, 1, 3}));
    EXPECT_EQ(p.nodes_used(), (std::vector<int>{0, 1}));
    EXPECT_EQ(p.workers_on(1), (std::vector<int>{1, 3}));
}

TEST(Placement, SpreadOverUnevenNodes) {
    const Topology t = Topology::synthetic("package:2 numa:1 core:3 pu:2");
    const Placement p = plan_placement(t, 6, Policy::kSpread);
    EXPECT_EQ(nodes_of(p), (std::vector<int>{0, 1, 0, 1, 0, 1}));
    const std::vector<int> placed = cores_of(p);
    std::set<int> cores(placed.begin(), placed.end());
    EXPECT_EQ(cores.size(), 6u);
    // With two PUs per core, the slot's PU is the core's first PU.
    for (const Slot& s : p.slots) EXPECT_EQ(s.pu_os_index, t.core_pu(s.core));
}

TEST(Placement, MoreThreadsThanCoresWrapsAndWarns) {
    const Topology t = Topology::synthetic("package:2 numa:1 core:2 pu:1");
    const Placement p = plan_placement(t, 6, Policy::kCompact);
    EXPECT_EQ(cores_of(p), (std::vector<int>{0, 1, 2, 3, 0, 1}));
    EXPECT_NE(p.warning.find("6 threads on 4 cores"), std::string::npos) << p.warning;
    const Placement s = plan_placement(t, 5, Policy::kSpread);
    EXPECT_EQ(cores_of(s), (std::vector<int>{0, 2, 1, 3, 0}));
    EXPECT_FALSE(s.warning.empty());
}

TEST(Placement, RejectsNoThreads) {
    const Topology t = Topology::synthetic("package:1 core:2 pu:1");
    EXPECT_THROW(plan_placement(t, 0), ConfigError);
}

TEST(Placement, DetectedTopologyIsThisSystem) {
    const Placement p = plan_placement(Topology::detect(), 2);
    EXPECT_TRUE(p.this_system);
    EXPECT_EQ(p.threads(), 2);
}

}  // namespace
}  // namespace rotor::sched
