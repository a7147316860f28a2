#include "core/base/error.h"

#include <gtest/gtest.h>

namespace rotor {
namespace {

TEST(InputError, MessageNamesPathLineAndColumn) {
    InputError e("docword.txt", 7, 3, "word id 0 is out of range [1, 12]");
    EXPECT_STREQ(e.what(), "docword.txt:7:3: word id 0 is out of range [1, 12]");
    EXPECT_EQ(e.line(), 7u);
    EXPECT_EQ(e.col(), 3u);
    EXPECT_EQ(e.exit_code(), ExitCode::kInput);
}

TEST(InputError, OmitsUnknownLineAndColumn) {
    EXPECT_STREQ(InputError("x.bin", "bad magic").what(), "x.bin: bad magic");
    EXPECT_STREQ(InputError("x.txt", 4, 0, "empty").what(), "x.txt:4: empty");
}

TEST(ConfigError, NamesKey) {
    ConfigError e("--topics", "must be at least 1");
    EXPECT_STREQ(e.what(), "--topics: must be at least 1");
    EXPECT_EQ(e.exit_code(), ExitCode::kConfig);
}

TEST(CommError, NamesRank) {
    EXPECT_STREQ(CommError(3, "peer vanished").what(), "rank 3: peer vanished");
}

TEST(Assert, AbortsOnBrokenInvariant) {
    EXPECT_DEATH(ROTOR_ASSERT(1 + 1 == 3, "arithmetic"), "assertion .*arithmetic");
}

}  // namespace
}  // namespace rotor
