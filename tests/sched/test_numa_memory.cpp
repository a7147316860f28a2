#include "sched/numa_memory.h"

#include <gtest/gtest.h>
#include <numa.h>

#include <cstdint>
#include <thread>

#include "core/base/error.h"

namespace rotor::sched {
namespace {

TEST(NumaBuffer, FirstTouchFromAnotherThreadZeroesAndPlaces) {
    const std::size_t n = 4 * page_size() / sizeof(std::uint64_t) + 3;
    NumaBuffer<std::uint64_t> buf(n, 0);
    ASSERT_EQ(buf.size(), n);
    EXPECT_EQ(buf.node(), 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buf.data()) % 64, 0u);
    EXPECT_EQ(buf.bound(), numa_supported());
    if (buf.bound()) {
        // mmap'ed and untouched: the kernel has not backed the first page yet.
        EXPECT_FALSE(numa_node_of(buf.data()).has_value());
    }
    std::thread owner([&] { first_touch(buf.span()); });
    owner.join();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(buf[i], 0u);
    if (buf.bound()) {
        for (std::size_t off = 0; off < n * sizeof(std::uint64_t); off += page_size()) {
            const auto node = numa_node_of(reinterpret_cast<const char*>(buf.data()) + off);
            ASSERT_TRUE(node.has_value()) << "page at offset " << off << " not backed";
            EXPECT_EQ(*node, 0) << "page at offset " << off;
        }
    }
}

TEST(NumaBuffer, EveryNodeGetsItsOwnPages) {
    if (!numa_supported()) GTEST_SKIP() << "libnuma reports no NUMA support";
    for (int node = 0; node <= numa_max_node(); ++node) {
        if (numa_bitmask_isbitset(numa_all_nodes_ptr, static_cast<unsigned>(node)) == 0) continue;
        NumaBuffer<int> buf(page_size() * 2 / sizeof(int), node, Touch::kNow);
        EXPECT_EQ(numa_node_of(buf.data()), node);
        EXPECT_EQ(buf[7], 0);
    }
}

TEST(NumaBuffer, NoPreferenceAndEmpty) {
    NumaBuffer<double> any(100, -1, Touch::kNow);
    for (std::size_t i = 0; i < any.size(); ++i) EXPECT_EQ(any[i], 0.0);
    NumaBuffer<double> none(0, 0);
    EXPECT_TRUE(none.empty());
    EXPECT_EQ(none.data(), nullptr);
    NumaBuffer<double> def;
    EXPECT_TRUE(def.empty());
}

TEST(NumaBuffer, MoveTransfersOwnership) {
    NumaBuffer<int> a(1000, 0, Touch::kNow);
    a[10] = 42;
    int* p = a.data();
    NumaBuffer<int> b = std::move(a);
    EXPECT_EQ(b.data(), p);
    EXPECT_EQ(b[10], 42);
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from state is specified
    NumaBuffer<int> c(10, 0);
    c = std::move(b);
    EXPECT_EQ(c.data(), p);
    EXPECT_EQ(c.size(), 1000u);
}

TEST(NumaBuffer, MissingNodeIsConfigError) {
    if (!numa_supported()) GTEST_SKIP() << "libnuma reports no NUMA support";
    EXPECT_THROW(NumaBuffer<int>(10, numa_max_node() + 1), ConfigError);
}

}  // namespace
}  // namespace rotor::sched
