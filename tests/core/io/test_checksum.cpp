#include "core/io/checksum.h"

#include <gtest/gtest.h>

#include <string>

namespace rotor::core {
namespace {

TEST(Checksum, Crc32IsZlibsAndContinues) {
    EXPECT_EQ(crc32("123456789"), 0xCBF43926u);  // the standard check value
    EXPECT_EQ(crc32(""), 0u);
    EXPECT_EQ(crc32("6789", crc32("12345")), crc32("123456789"));
    std::string flipped = "123456789";
    flipped[4] ^= 1;
    EXPECT_NE(crc32(flipped), crc32("123456789"));
}

}  // namespace
}  // namespace rotor::core
