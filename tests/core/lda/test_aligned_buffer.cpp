#include "core/lda/aligned_buffer.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

namespace rotor::lda::detail {
namespace {

// Below and above the huge-page threshold: aligned as promised, zeroed, deep-copied.
TEST(AlignedBuffer, SmallAndHugeBuffersAreAlignedZeroedAndCopied) {
    for (const std::size_t bytes : {std::size_t{200}, kHugeAllocationBytes - 8,
                                    kHugeAllocationBytes, kHugeAllocationBytes + 8}) {
        const std::size_t n = bytes / sizeof(std::uint64_t);
        AlignedBuffer<std::uint64_t> a(n);
        ASSERT_EQ(a.size(), n);
        const auto address = reinterpret_cast<std::uintptr_t>(a.data());
        EXPECT_EQ(address % kCacheLineBytes, 0u);
        if (bytes >= kHugeAllocationBytes) {
            EXPECT_EQ(address % kHugePageBytes, 0u) << bytes;
        }
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], 0u) << "byte size " << bytes;
        for (std::size_t i = 0; i < n; ++i) a[i] = i * 3 + 1;
        const AlignedBuffer<std::uint64_t> b(a);
        ASSERT_EQ(b.size(), n);
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(b[i], i * 3 + 1);
        a.zero();
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], 0u);
    }
}

}  // namespace
}  // namespace rotor::lda::detail
