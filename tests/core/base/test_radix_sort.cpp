#include "core/base/radix_sort.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "core/base/rng.h"

namespace rotor {
namespace {

// Against std::sort on keys of every width: one pass (< 2^11), two, three (full 32 bits),
// duplicates, sorted and reversed input, and the empty and one-key cases.
TEST(RadixSort, SortsAsStdSortDoes) {
    Rng rng(7);
    std::vector<std::uint32_t> scratch;
    for (const std::uint64_t bound :
         {1ULL, 2ULL, 1000ULL, 2048ULL, 2049ULL, 1000000ULL, (1ULL << 22) + 1, 1ULL << 32}) {
        for (const std::size_t n : {0, 1, 2, 17, 8192, 50000}) {
            std::vector<std::uint32_t> keys(n);
            for (auto& k : keys) k = static_cast<std::uint32_t>(rng.below(bound));
            std::vector<std::uint32_t> expect = keys;
            std::sort(expect.begin(), expect.end());
            radix_sort(keys, scratch);
            EXPECT_EQ(keys, expect) << "bound " << bound << ", n " << n;
            std::reverse(keys.begin(), keys.end());
            radix_sort(keys, scratch);
            EXPECT_EQ(keys, expect) << "reversed, bound " << bound << ", n " << n;
            radix_sort(keys, scratch);
            EXPECT_EQ(keys, expect) << "sorted, bound " << bound << ", n " << n;
        }
    }
}

}  // namespace
}  // namespace rotor
