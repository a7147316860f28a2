// The binary examples form (core/logreg/examples_binary.h): a bitwise round trip, parts that
// join to the whole, and corruption, truncation and bad rows refused naming the file.
#include "core/logreg/examples_binary.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "tests/core/io/temp_dir.h"
#include "tests/core/logreg/logreg_test_util.h"

namespace rotor::logreg {
namespace {

std::vector<std::uint64_t> file_words(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::uint64_t> words(bytes.size() / 8);
    std::memcpy(words.data(), bytes.data(), 8 * words.size());
    return words;
}

ExamplesBinaryPart parse_words(const std::vector<std::uint64_t>& w, std::size_t part = 0,
                               std::size_t parts = 1) {
    return parse_examples_binary(std::as_bytes(std::span(w)), "x.bin", part, parts);
}

TEST(ExamplesBinary, RoundTripAndPartsJoinToTheWhole) {
    rotor::testing::TempDir dir;
    const Examples ex = testing::synthetic_examples(257, 40, 5, 3);
    const std::string path = dir.file("x.bin");
    write_examples_binary(path, ex, true, 40);
    const ExamplesBinaryPart all = read_examples_binary(path);
    EXPECT_TRUE(all.info.hashed);
    EXPECT_EQ(all.info.examples, ex.size());
    EXPECT_EQ(all.info.keys, 40u);
    EXPECT_EQ(all.examples.keys, ex.keys);
    EXPECT_EQ(all.examples.values, ex.values);
    EXPECT_EQ(all.examples.labels, ex.labels);
    EXPECT_EQ(all.examples.offsets, ex.offsets);
    Examples joined;
    std::uint64_t row = 0;
    for (std::size_t p = 0; p < 5; ++p) {
        const ExamplesBinaryPart part = read_examples_binary(path, p, 5);
        const ExamplesBinaryInfo info = read_examples_binary_info(path, p, 5);
        EXPECT_EQ(part.first_row, row);
        EXPECT_EQ(info.part_examples, part.examples.size());
        EXPECT_EQ(info.part_nonzeros, part.examples.nonzeros());
        row += part.examples.size();
        for (std::size_t i = 0; i < part.examples.size(); ++i)
            joined.add(part.examples.labels[i], part.examples.keys_of(i),
                       part.examples.values_of(i));
    }
    EXPECT_EQ(joined.keys, ex.keys);
    EXPECT_EQ(joined.values, ex.values);
}

TEST(ExamplesBinary, CorruptionTruncationAndBadRowsAreRefused) {
    rotor::testing::TempDir dir;
    const Examples ex = testing::synthetic_examples(50, 20, 4, 5);
    const std::string path = dir.file("x.bin");
    write_examples_binary(path, ex, false, 20);
    const std::vector<std::uint64_t> good = file_words(path);
    EXPECT_NO_THROW(parse_words(good));
    auto flipped = good;
    flipped[8 + 51 + 3] ^= 1;  // a key
    EXPECT_THROW(parse_words(flipped), InputError);
    auto truncated = good;
    truncated.pop_back();
    EXPECT_THROW(parse_words(truncated), InputError);
    auto header = good;
    header[2] += 1;  // examples, under the header's CRC
    EXPECT_THROW(parse_words(header), InputError);
    try {
        parse_words(flipped);
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("x.bin"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
    }
    Examples zero = ex;
    zero.values[3] = 0;  // a stored zero: not what build writes
    write_examples_binary(path, zero, false, 20);
    try {
        read_examples_binary(path);
        ADD_FAILURE();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("a value is zero"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace rotor::logreg
