// Tests of the text ratings reader: formats accepted (blank- and comma-separated, headers, BOM,
// comments, gzip, maps given) and every malformed case, each built in the test and checked for
// InputError `<path>:<line>:<col>` and a message fragment.
#include "core/mf/ratings_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/error.h"
#include "tests/core/io/temp_dir.h"
#include "tests/core/mf/ratings_test_util.h"

namespace rotor::mf {
namespace {

using rotor::testing::TempDir;
using testing::csr_entries;
using testing::Entry;
using testing::item_degrees_match;

std::vector<std::string> names(const IdMap& m) { return m.names(); }

RatingsFile read_text(const std::string& text, const ReadRatingsOptions& options = {}) {
    TempDir dir;
    return read_ratings(dir.write("r.txt", text), options);
}

/// Reads `text` from a temp file and expects an InputError whose message contains
/// `<path>:<where>: ` and `what`.
void expect_error(const std::string& text, const std::string& where, const std::string& what,
                  const ReadRatingsOptions& options = {}) {
    TempDir dir;
    const std::string path = dir.write("bad.txt", text);
    try {
        read_ratings(path, options);
        FAIL() << "no error for: " << text;
    } catch (const InputError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(path + ":" + where + ": "), std::string::npos) << text << " -> " << msg;
        EXPECT_NE(msg.find(what), std::string::npos) << text << " -> " << msg;
        EXPECT_EQ(e.exit_code(), ExitCode::kInput);
    }
}

TEST(ReadRatings, BlankSeparatedIdsInOrderOfFirstAppearance) {
    const RatingsFile f = read_text("u7 i3 4\nu2 i3 2.5\nu7\ti9  1e0\n");
    EXPECT_EQ(names(f.users), (std::vector<std::string>{"u7", "u2"}));
    EXPECT_EQ(names(f.items), (std::vector<std::string>{"i3", "i9"}));
    EXPECT_EQ(csr_entries(f.ratings),
              (std::multiset<Entry>{{0, 0, 4.0f}, {1, 0, 2.5f}, {0, 1, 1.0f}}));
    EXPECT_EQ(f.ratings.num_users(), 2u);
    EXPECT_EQ(f.ratings.num_items(), 2u);
    EXPECT_EQ(f.first_new_user, 0u);
    EXPECT_EQ(f.ratings_with_new_ids, 3u);
    EXPECT_TRUE(item_degrees_match(f.ratings));
}

// Integer ids take the reader's direct table (plain decimals below a bound) or the hash table
// (leading zeros, signs, large values, other text): the same string ids and indices either way,
// "7" and "07" two ids, a test file's known integer ids found in the given maps.
TEST(ReadRatings, IntegerIdsKeepTheirStringsAndFirstAppearanceOrder) {
    const RatingsFile f =
        read_text("7 3 1\n07 3 2\n0 123456789012 3\n2 3 4\n7 0 5\n99999999 3 6\n-1 3 7\n2 12 8\n");
    EXPECT_EQ(names(f.users), (std::vector<std::string>{"7", "07", "0", "2", "99999999", "-1"}));
    EXPECT_EQ(names(f.items), (std::vector<std::string>{"3", "123456789012", "0", "12"}));
    EXPECT_EQ(csr_entries(f.ratings), (std::multiset<Entry>{{0, 0, 1.0f},
                                                            {1, 0, 2.0f},
                                                            {2, 1, 3.0f},
                                                            {3, 0, 4.0f},
                                                            {0, 2, 5.0f},
                                                            {4, 0, 6.0f},
                                                            {5, 0, 7.0f},
                                                            {3, 3, 8.0f}}));
    ReadRatingsOptions against;
    against.users = &f.users;
    against.items = &f.items;
    const RatingsFile t = read_text("2 12 1\n8 3 2\n7 3 3\n", against);
    EXPECT_EQ(csr_entries(t.ratings),
              (std::multiset<Entry>{{3, 3, 1.0f}, {6, 0, 2.0f}, {0, 0, 3.0f}}));
    EXPECT_EQ(t.new_users(), 1u);
    // A duplicate found through the direct table is still reported with both lines.
    expect_error("1 2 3\n5 2 1\n1 2 4\n", "3:1", "duplicate rating");
}

TEST(ReadRatings, MovieLensCsvWithHeaderAndTimestamps) {
    const RatingsFile f = read_text(
        "userId,movieId,rating,timestamp\n"
        "1,31,2.5,1260759144\n"
        "1,1029,3.0,1260759179\n"
        "2,31,4,835355493\n");
    EXPECT_EQ(names(f.users), (std::vector<std::string>{"1", "2"}));
    EXPECT_EQ(names(f.items), (std::vector<std::string>{"31", "1029"}));
    EXPECT_EQ(f.ratings.nnz(), 3u);
    EXPECT_DOUBLE_EQ(f.ratings.mean(), 9.5 / 3);
}

TEST(ReadRatings, CsvWithoutHeaderAndBlanksAroundFields) {
    const RatingsFile f = read_text("1, 31 ,2.5\n2 ,31,\t4\n");
    EXPECT_EQ(names(f.users), (std::vector<std::string>{"1", "2"}));
    EXPECT_EQ(names(f.items), (std::vector<std::string>{"31"}));
    EXPECT_EQ(csr_entries(f.ratings), (std::multiset<Entry>{{0, 0, 2.5f}, {1, 0, 4.0f}}));
}

TEST(ReadRatings, HeaderModes) {
    // Auto: a blank-separated header of words is a header too.
    EXPECT_EQ(read_text("user item rating\na b 1\n").ratings.nnz(), 1u);
    // Present: the first data line is skipped whatever it holds.
    ReadRatingsOptions present;
    present.header = HeaderMode::kPresent;
    EXPECT_EQ(read_text("1 2 3\n4 5 6\n", present).ratings.nnz(), 1u);
    // Absent: a header is data, so its rating is not a number.
    ReadRatingsOptions absent;
    absent.header = HeaderMode::kAbsent;
    expect_error("userId,movieId,rating\n1,2,3\n", "1:16", "rating \"rating\" is not a number",
                 absent);
    // Auto: a line with one numeric field is data.
    expect_error("1 i1 x\n", "1:6", "rating \"x\" is not a number");
    // Only the first data line may be a header.
    expect_error("a b 1\nuser item rating\n", "2:11", "is not a number");
}

TEST(ReadRatings, BomCommentsBlankLinesAndCrlf) {
    const RatingsFile f = read_text(
        "\xEF\xBB\xBFuserId,movieId,rating\r\n# a comment\r\n\r\n  \t\n1,2,3\r\n"
        "   # indented comment\n\n1,3,4\n");
    EXPECT_EQ(names(f.users), (std::vector<std::string>{"1"}));
    EXPECT_EQ(f.ratings.nnz(), 2u);
    // Without a header the BOM is not part of the first id; columns count from after it, as an
    // editor shows the line (core::LineReader drops the BOM for every text format).
    EXPECT_EQ(names(read_text("\xEF\xBB\xBFu i 1\n").users), (std::vector<std::string>{"u"}));
    expect_error(
        "\xEF\xBB\xBF"
        "1 i x\n",
        "1:5", "not a number");
    // A BOM is only skipped on line 1.
    EXPECT_EQ(names(read_text("u i 1\n\xEF\xBB\xBFv i 1\n").users)[1], "\xEF\xBB\xBFv");
}

TEST(ReadRatings, GzipGivesTheSameRatings) {
    const std::string text = "userId,movieId,rating\n1,31,2.5\n1,1029,3\n2,31,4\n";
    TempDir dir;
    const RatingsFile plain = read_ratings(dir.write("r.csv", text));
    const RatingsFile gz = read_ratings(dir.write_gz("r.csv.gz", text));
    EXPECT_EQ(plain.ratings, gz.ratings);
    EXPECT_EQ(plain.users, gz.users);
    EXPECT_EQ(plain.items, gz.items);
}

TEST(ReadRatings, EmptyFilesGiveNoRatings) {
    EXPECT_EQ(read_text("").ratings.nnz(), 0u);
    EXPECT_EQ(read_text("# only a comment\n\n").ratings.nnz(), 0u);
    EXPECT_EQ(read_text("userId,movieId,rating\n").ratings.nnz(), 0u);
}

TEST(ReadRatings, AgainstGivenMapsUnknownIdsAreAppendedAndFlagged) {
    const RatingsFile train = read_text("a x 1\nb y 2\nc x 3\n");
    ReadRatingsOptions o;
    o.users = &train.users;
    o.items = &train.items;
    const RatingsFile test = read_text("c y 5\nd x 4\nb z 1\na x 2\n", o);
    EXPECT_EQ(names(test.users), (std::vector<std::string>{"a", "b", "c", "d"}));
    EXPECT_EQ(names(test.items), (std::vector<std::string>{"x", "y", "z"}));
    EXPECT_EQ(test.first_new_user, 3u);
    EXPECT_EQ(test.first_new_item, 2u);
    EXPECT_EQ(test.new_users(), 1u);
    EXPECT_EQ(test.new_items(), 1u);
    EXPECT_EQ(test.ratings_with_new_ids, 2u);
    EXPECT_EQ(test.ratings.num_users(), 4u);
    EXPECT_EQ(test.ratings.num_items(), 3u);
    EXPECT_EQ(csr_entries(test.ratings),
              (std::multiset<Entry>{{2, 1, 5.0f}, {3, 0, 4.0f}, {1, 2, 1.0f}, {0, 0, 2.0f}}));
}

TEST(ReadRatings, MissingFileIsAnInputError) {
    TempDir dir;
    EXPECT_THROW(read_ratings(dir.file("none.txt")), InputError);
}

TEST(ReadRatings, MalformedLinesNameLineAndColumn) {
    const std::string ok = "a b 1\n";  // a first data line, so no header guessing below
    expect_error(ok + "x\n", "2:2", "missing item id");
    expect_error(ok + "x y\n", "2:4", "missing rating");
    expect_error(ok + "  x   y  \n", "2:10", "missing rating");
    expect_error(ok + "x y abc\n", "2:5", "rating \"abc\" is not a number");
    expect_error(ok + "x y 1.5x\n", "2:5", "is not a number");
    expect_error(ok + "x y +1\n", "2:5", "is not a number");
    expect_error(ok + "x y 0x10\n", "2:5", "is not a number");
    expect_error(ok + "x y nan\n", "2:5", "rating nan is not finite");
    expect_error(ok + "x y -inf\n", "2:5", "rating -inf is not finite");
    expect_error(ok + "x y 1e39\n", "2:5", "rating 1e39 does not fit in a float");
    expect_error(ok + "x y,z 1\n", "2:4", "',' in a blank-separated file");
}

TEST(ReadRatings, MalformedCsvFieldsNameLineAndColumn) {
    const std::string ok = "a,b,1\n";
    expect_error(ok + ",i,1\n", "2:1", "empty user id");
    expect_error(ok + "u,,1\n", "2:3", "empty item id");
    expect_error(ok + "u, \t,1\n", "2:5", "empty item id");
    expect_error(ok + "u,i,\n", "2:5", "empty rating");
    expect_error(ok + "u,i\n", "2:4", "missing rating");
    expect_error(ok + "u\n", "2:2", "missing item id");
    expect_error(ok + "\"u\",i,1\n", "2:1", "quoted fields are not supported");
    expect_error(ok + "u x,i,1\n", "2:2", "blank inside the user id");
    expect_error(ok + "u,i,1 2\n", "2:6", "blank inside the rating");
    expect_error(ok + "u,i,five,100\n", "2:5", "rating \"five\" is not a number");
}

TEST(ReadRatings, DuplicatePairNamesBothLines) {
    expect_error("a b 1\n# comment\n\nc b 2\na b 2\n", "5:1",
                 "duplicate rating for user \"a\", item \"b\" (first on line 1)");
    expect_error("userId,movieId,rating\n1,2,3\n1,3,3\n1,2,4\n", "4:1",
                 "duplicate rating for user \"1\", item \"2\" (first on line 2)");
    // Against given maps, a duplicate among new ids is still an error.
    const RatingsFile train = read_text("a x 1\n");
    ReadRatingsOptions o;
    o.users = &train.users;
    o.items = &train.items;
    expect_error("n m 1\nn m 2\n", "2:1", "user \"n\", item \"m\"", o);
}

TEST(ReadRatings, ReaderOverloadReadsFromMemory) {
    core::LineReader r(core::memory_byte_source("mem", "a b 1\na c x\n"), 3);
    try {
        read_ratings(r);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), "mem:2:5: rating \"x\" is not a number");
    }
}

// The memory bound holds while the file is read: 3 ratings take 3 * 20 bytes; a bound of 59
// refuses the third line, 60 admits it.
TEST(ReadRatings, TheMemoryBoundIsCheckedAtEachLine) {
    const std::string text = "u1 i1 3\nu2 i2 4\nu3 i1 5\n";
    ReadRatingsOptions o;
    o.limits = core::ReadLimits::for_memory(60, "", "");
    EXPECT_EQ(read_text(text, o).ratings.nnz(), 3u);
    o.limits = core::ReadLimits::for_memory(59, "", "");
    expect_error(text, "3:1", "the ratings need about", o);
}

}  // namespace
}  // namespace rotor::mf
