#include "core/base/huge_pages.h"

#include <cstdint>
#include <numeric>

#include <gtest/gtest.h>

namespace rotor {
namespace {

// Large buffers start on a 2 MiB boundary (so the advice covers whole huge pages); small ones
// are ordinary; both hold and copy their elements as std::vector does.
TEST(HugeVector, LargeBuffersAreHugePageAlignedAndBehaveAsVectors) {
    HugeVector<double> small(100);
    std::iota(small.begin(), small.end(), 0.0);
    HugeVector<double> large(kHugeAllocationBytes / sizeof(double) + 3, 1.5);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large.data()) % kHugePageBytes, 0u);
    EXPECT_EQ(large.back(), 1.5);
    for (int i = 0; i < 1000; ++i) small.push_back(i);  // reallocations
    EXPECT_EQ(small[99], 99.0);
    EXPECT_EQ(small.back(), 999.0);
    HugeVector<std::uint32_t> grown;
    for (std::uint32_t i = 0; i < (3u << 20); ++i) grown.push_back(i);  // 12 MiB: large
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(grown.data()) % kHugePageBytes, 0u);
    EXPECT_EQ(grown[(3u << 20) - 1], (3u << 20) - 1);
    const HugeVector<double> copy = large;
    EXPECT_EQ(copy, large);
}

}  // namespace
}  // namespace rotor
