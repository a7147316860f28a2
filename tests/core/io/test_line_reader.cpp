#include "core/io/line_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/io/parse.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::core {
namespace {

using rotor::testing::read_all;
using rotor::testing::TempDir;

std::vector<std::string> all_lines(LineReader& r) {
    std::vector<std::string> out;
    std::string_view line;
    while (r.next(line)) out.emplace_back(line);
    return out;
}

TEST(LineReader, SplitsLinesAndCountsThem) {
    TempDir dir;
    LineReader r(dir.write("a.txt", "one\ntwo\r\n\nlast"));
    std::string_view line;
    ASSERT_TRUE(r.next(line));
    EXPECT_EQ(line, "one");
    EXPECT_EQ(r.line_number(), 1u);
    ASSERT_TRUE(r.next(line));
    EXPECT_EQ(line, "two");
    ASSERT_TRUE(r.next(line));
    EXPECT_EQ(line, "");
    ASSERT_TRUE(r.next(line));
    EXPECT_EQ(line, "last");
    EXPECT_EQ(r.line_number(), 4u);
    EXPECT_FALSE(r.next(line));
    EXPECT_FALSE(r.next(line));
}

TEST(LineReader, AUtf8ByteOrderMarkIsDroppedFromTheFirstLineOnly) {
    for (const std::string& text : {std::string("\xEF\xBB\xBF"
                                                "4\nb\xEF\xBB\xBF\n"),
                                    std::string("\xEF\xBB\xBF"
                                                "4")}) {
        for (std::size_t size : {1u, 2u, 4u, 64u}) {
            LineReader r(memory_byte_source("mem", text), size);
            std::string_view line;
            ASSERT_TRUE(r.next(line));
            EXPECT_EQ(line, "4");
            if (text.size() > 4) {
                ASSERT_TRUE(r.next(line));
                EXPECT_EQ(line, "b\xEF\xBB\xBF");
            }
            EXPECT_FALSE(r.next(line));
        }
    }
}

TEST(LineReader, EmptyFileHasNoLines) {
    TempDir dir;
    LineReader r(dir.write("e.txt", ""));
    std::string_view line;
    EXPECT_FALSE(r.next(line));
    EXPECT_EQ(r.line_number(), 0u);
}

TEST(LineReader, LinesSpanningBufferRefillsAndLongerThanTheBuffer) {
    // 4 MiB buffer: many short lines cross refill boundaries, one 9 MB line forces growth.
    std::string text;
    std::vector<std::string> expected;
    for (std::uint64_t i = 0; i < 400000; ++i) {
        expected.push_back("line " + std::to_string(i * 7919));
        text += expected.back() + "\n";
    }
    expected.push_back(std::string(9u << 20, 'x'));
    text += expected.back() + "\n";
    expected.push_back("tail");
    text += "tail";
    TempDir dir;
    LineReader r(dir.write("big.txt", text));
    EXPECT_EQ(all_lines(r), expected);
    EXPECT_EQ(r.line_number(), expected.size());
}

TEST(LineReader, TinyBuffersGiveTheSameLines) {
    const std::string text = "first line\r\nsecond\n\nx\r\n  last without newline";
    const std::vector<std::string> expected{"first line", "second", "", "x",
                                            "  last without newline"};
    for (std::size_t size : {1, 2, 3, 7, 64}) {
        LineReader r(memory_byte_source("mem", text), size);
        EXPECT_EQ(all_lines(r), expected) << "buffer " << size;
    }
}

TEST(LineReader, GzipIsDetectedByMagicNotName) {
    const std::string text = "alpha\nbeta\ngamma\n";
    TempDir dir;
    LineReader gz(dir.write_gz("plain-name.txt", text));
    EXPECT_EQ(all_lines(gz), (std::vector<std::string>{"alpha", "beta", "gamma"}));
    LineReader plain(dir.write("fake.gz", text));
    EXPECT_EQ(all_lines(plain), (std::vector<std::string>{"alpha", "beta", "gamma"}));
}

TEST(LineReader, ConcatenatedGzipMembersAreOneStream) {
    TempDir dir;
    const std::string a = read_all(dir.write_gz("a.gz", "one\ntwo\n"));
    const std::string b = read_all(dir.write_gz("b.gz", "three\n"));
    LineReader r(dir.write("ab.gz", a + b));
    EXPECT_EQ(all_lines(r), (std::vector<std::string>{"one", "two", "three"}));
}

std::string big_text() {
    std::string text;
    for (int i = 0; i < 20000; ++i) text += std::to_string(i) + " some words here\n";
    return text;
}

TEST(LineReader, TruncatedGzipIsAnInputErrorNamingTheFile) {
    TempDir dir;
    const std::string gz = read_all(dir.write_gz("full.gz", big_text()));
    const std::string path = dir.write("cut.gz", gz.substr(0, gz.size() / 2));
    LineReader r(path);
    try {
        all_lines(r);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.path(), path);
        EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
}

TEST(LineReader, GzipCutInsideTheTrailerIsTruncated) {
    TempDir dir;
    const std::string gz = read_all(dir.write_gz("full.gz", "a\nb\n"));
    LineReader r(dir.write("cut.gz", gz.substr(0, gz.size() - 3)));
    EXPECT_THROW(all_lines(r), InputError);
}

TEST(LineReader, CorruptGzipIsAnInputError) {
    TempDir dir;
    std::string gz = read_all(dir.write_gz("full.gz", big_text()));
    for (std::size_t i = gz.size() / 3; i < gz.size() / 3 + 16; ++i)
        gz[i] = static_cast<char>(~gz[i]);
    const std::string path = dir.write("bad.gz", gz);
    LineReader r(path);
    try {
        all_lines(r);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.path(), path);
        EXPECT_NE(std::string(e.what()).find("gzip"), std::string::npos) << e.what();
    }
}

TEST(LineReader, BadCrcIsAnInputError) {
    TempDir dir;
    std::string gz = read_all(dir.write_gz("full.gz", "hello\n"));
    gz[gz.size() - 8] = static_cast<char>(gz[gz.size() - 8] ^ 1);  // CRC32 in the trailer
    LineReader r(dir.write("crc.gz", gz));
    EXPECT_THROW(all_lines(r), InputError);
}

TEST(LineReader, GarbageAfterTheGzipStreamIsAnInputError) {
    TempDir dir;
    const std::string gz = read_all(dir.write_gz("full.gz", "hello\n"));
    LineReader r(dir.write("tail.gz", gz + "junk"));
    EXPECT_THROW(all_lines(r), InputError);
}

TEST(LineReader, MissingFileAndDirectoryAreInputErrors) {
    TempDir dir;
    try {
        LineReader r(dir.file("nope.txt"));
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("nope.txt: cannot open"), std::string::npos);
    }
    EXPECT_THROW(LineReader r(dir.path().string()), InputError);
}

TEST(LineReader, FailNamesLineAndColumn) {
    TempDir dir;
    const std::string path = dir.write("x.txt", "a\nb\n");
    LineReader r(path);
    std::string_view line;
    r.next(line);
    r.next(line);
    try {
        r.fail(7, "bad thing");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), path + ":2:7: bad thing");
    }
}

TEST(LineReader, ReadsMemoryBuffersPlainAndGzip) {
    LineReader plain(memory_byte_source("mem", "x\ny"));
    EXPECT_EQ(all_lines(plain), (std::vector<std::string>{"x", "y"}));
    TempDir dir;
    const std::string gz = read_all(dir.write_gz("m.gz", "p\nq\n"));
    LineReader zipped(memory_byte_source("mem.gz", gz));
    EXPECT_EQ(all_lines(zipped), (std::vector<std::string>{"p", "q"}));
    EXPECT_EQ(zipped.name(), "mem.gz");
}

TEST(ParseUint, ParsesFieldsAndReportsErrors) {
    std::uint64_t v = 0;
    std::size_t pos = 0;
    EXPECT_EQ(parse_uint("  42\t7", pos, v), ParseStatus::kOk);
    EXPECT_EQ(v, 42u);
    EXPECT_EQ(pos, 4u);
    EXPECT_EQ(parse_uint("  42\t7", pos, v), ParseStatus::kOk);
    EXPECT_EQ(v, 7u);
    EXPECT_EQ(parse_uint("  42\t7", pos, v), ParseStatus::kMissing);

    pos = 0;
    EXPECT_EQ(parse_uint("18446744073709551615", pos, v), ParseStatus::kOk);
    EXPECT_EQ(v, UINT64_MAX);
    pos = 0;
    EXPECT_EQ(parse_uint("18446744073709551616", pos, v), ParseStatus::kOverflow);
    for (const char* big : {"18446744073709551620", "18446744073709551700", "99999999999999999999",
                            "184467440737095516150", "000018446744073709551616"}) {
        pos = 0;
        EXPECT_EQ(parse_uint(big, pos, v), ParseStatus::kOverflow) << big;
    }
    pos = 0;
    EXPECT_EQ(parse_uint("0000018446744073709551614", pos, v), ParseStatus::kOk);
    EXPECT_EQ(v, UINT64_MAX - 1);
    pos = 0;
    EXPECT_EQ(parse_uint(" -3", pos, v), ParseStatus::kNegative);
    EXPECT_EQ(pos, 1u);
    pos = 0;
    EXPECT_EQ(parse_uint("12x", pos, v), ParseStatus::kNotANumber);
    pos = 0;
    EXPECT_EQ(parse_uint("+1", pos, v), ParseStatus::kNotANumber);
    pos = 0;
    EXPECT_EQ(parse_uint("1.5", pos, v), ParseStatus::kNotANumber);
}

}  // namespace
}  // namespace rotor::core
