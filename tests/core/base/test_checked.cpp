#include "core/base/checked.h"

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "core/base/error.h"

namespace rotor::core {
namespace {

constexpr std::uint64_t kMax = UINT64_MAX;

TEST(Checked, ExactResultsPass) {
    const SizeSource src = SizeSource::config("--x");
    EXPECT_EQ(checked_mul(1ULL << 32, (1ULL << 32) - 1, src, "n"),
              (1ULL << 32) * ((1ULL << 32) - 1));
    EXPECT_EQ(checked_add(kMax - 1, 1, src, "n"), kMax);
    EXPECT_EQ(checked_mul(0, kMax, src, "n"), 0u);
    EXPECT_EQ(checked_at_most(7, 7, src, "n"), 7u);
}

TEST(Checked, MulOverflowIsTheFlagsError) {
    try {
        checked_mul(100000ULL * 100000, 1ULL << 40, SizeSource::config("--max-memory"), "bytes");
        FAIL() << "no throw";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "--max-memory");
        EXPECT_NE(std::string(e.what()).find("bytes overflows 64 bits: 10000000000 x"),
                  std::string::npos)
            << e.what();
    }
}

TEST(Checked, AddOverflowIsTheInputsErrorAtItsLine) {
    try {
        checked_add(kMax, 1, SizeSource::input("d.txt", 4, 9), "the token total");
        FAIL() << "no throw";
    } catch (const InputError& e) {
        EXPECT_EQ(e.path(), "d.txt");
        EXPECT_EQ(e.line(), 4u);
        EXPECT_EQ(e.col(), 9u);
        EXPECT_NE(std::string(e.what()).find("the token total overflows 64 bits"),
                  std::string::npos);
    }
}

TEST(Checked, AtMostNamesTheValueAndTheLimit) {
    try {
        checked_at_most(100000, 4096, SizeSource::input("state.json"), "columns_per_slice");
        FAIL() << "no throw";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "state.json: columns_per_slice = 100000 exceeds the limit 4096");
    }
}

}  // namespace
}  // namespace rotor::core
