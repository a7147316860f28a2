#include "sched/topology.h"

#include <gtest/gtest.h>
#include <hwloc.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/base/error.h"

namespace rotor::sched {
namespace {

std::filesystem::path temp_dir(const std::string& name) {
    auto dir = std::filesystem::temp_directory_path() /
               ("rotor_sched_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir;
}

TEST(Topology, SyntheticTwoPackagesTwoNodes) {
    const Topology t = Topology::synthetic("package:2 numa:1 core:2 pu:1");
    EXPECT_EQ(t.numa_nodes(), 2);
    EXPECT_EQ(t.cores(), 4);
    EXPECT_EQ(t.pus(), 4);
    EXPECT_FALSE(t.is_this_system());
    for (int c = 0; c < 4; ++c) {
        EXPECT_EQ(t.core_numa_node(c), c / 2) << "core " << c;
        EXPECT_EQ(t.core_info()[static_cast<std::size_t>(c)].package, c / 2);
        EXPECT_EQ(t.core_pu(c), static_cast<unsigned>(c));
    }
    EXPECT_EQ(t.numa_os_index(1), 1u);
}

TEST(Topology, SyntheticWithHyperthreads) {
    const Topology t = Topology::synthetic("package:1 core:3 pu:2");
    EXPECT_EQ(t.numa_nodes(), 1);
    EXPECT_EQ(t.cores(), 3);
    EXPECT_EQ(t.pus(), 6);
    for (const CoreInfo& c : t.core_info()) {
        ASSERT_EQ(c.pu_os.size(), 2u);
        EXPECT_EQ(c.pu_os[0] + 1, c.pu_os[1]);
        EXPECT_EQ(t.core_pu(c.index), c.pu_os[0]);
    }
}

TEST(Topology, BadSyntheticIsConfigError) {
    EXPECT_THROW(Topology::synthetic("package:2 banana:3"), ConfigError);
    try {
        Topology::synthetic("nonsense");
        FAIL() << "no exception";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "topology");
    }
}

TEST(Topology, XmlRoundTrip) {
    const auto dir = temp_dir("xml");
    const auto path = (dir / "topo.xml").string();
    {
        const Topology s = Topology::synthetic("package:2 numa:1 core:3 pu:2");
        ASSERT_EQ(hwloc_topology_export_xml(s.handle(), path.c_str(), 0), 0);
    }
    const Topology t = Topology::from_xml(path);
    EXPECT_EQ(t.numa_nodes(), 2);
    EXPECT_EQ(t.cores(), 6);
    EXPECT_EQ(t.pus(), 12);
    EXPECT_EQ(t.core_numa_node(2), 0);
    EXPECT_EQ(t.core_numa_node(3), 1);
    std::filesystem::remove_all(dir);
}

TEST(Topology, BadXmlIsSystemError) {
    const auto dir = temp_dir("badxml");
    EXPECT_THROW(Topology::from_xml((dir / "missing.xml").string()), SystemError);
    const auto path = dir / "garbage.xml";
    std::ofstream(path) << "<topology><object type=\"Machine\"><oops";
    EXPECT_THROW(Topology::from_xml(path.string()), SystemError);
    std::filesystem::remove_all(dir);
}

TEST(Topology, DetectThisMachine) {
    const Topology t = Topology::detect();
    EXPECT_TRUE(t.is_this_system());
    EXPECT_GE(t.numa_nodes(), 1);
    EXPECT_GE(t.cores(), 1);
    EXPECT_GE(t.pus(), t.cores());
    for (const CoreInfo& c : t.core_info()) {
        EXPECT_FALSE(c.pu_os.empty());
        EXPECT_LT(c.numa_node, t.numa_nodes());
    }
}

TEST(Topology, MoveKeepsTheHandle) {
    Topology a = Topology::synthetic("package:2 core:2 pu:1");
    hwloc_topology* h = a.handle();
    Topology b = std::move(a);
    EXPECT_EQ(b.handle(), h);
    EXPECT_EQ(b.cores(), 4);
}

}  // namespace
}  // namespace rotor::sched
