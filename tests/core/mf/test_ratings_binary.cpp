// Tests of the binary ratings form: round trips (text -> Ratings -> binary -> Ratings) and
// corrupt files, each built in the test, rejected with InputError naming the file.
#include "core/mf/ratings_binary.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/mf/ratings_reader.h"
#include "tests/core/io/binary_file_util.h"
#include "tests/core/io/temp_dir.h"
#include "tests/core/mf/ratings_test_util.h"

namespace rotor::mf {
namespace {

using rotor::testing::read_all;
using rotor::testing::TempDir;
using testing::random_triples;

template <class T>
std::vector<T> vec(std::span<const T> s) {
    return {s.begin(), s.end()};
}

void expect_corrupt(const std::string& bytes, const std::string& what) {
    rotor::testing::expect_corrupt([](const std::string& p) { read_ratings_binary(p); }, bytes,
                                   what);
}

/// A small good file's bytes: 3 users x 2 items, 4 ratings, names "u0".."u2", "i0", "i1".
std::string good_bytes(const TempDir& dir) {
    const RatingsFile f = read_ratings(dir.write("r.txt", "u0 i0 1\nu0 i1 2\nu1 i1 3\nu2 i0 4\n"));
    const std::string path = dir.file("good.bin");
    write_ratings_binary(path, f.ratings, f.users, f.items);
    return read_all(path);
}

TEST(RatingsBinary, TextToBinaryToRatingsRoundTrip) {
    TempDir dir;
    const RatingsFile text = read_ratings(dir.write(
        "r.csv", "userId,movieId,rating,timestamp\n1,31,2.5,0\n1,1029,3,0\n2,31,4,0\n7,5,0.5,0\n"));
    const std::string path = dir.file("r.bin");
    write_ratings_binary(path, text.ratings, text.users, text.items);
    EXPECT_EQ(dir.count(), 2u);  // r.csv and r.bin: no temporary left behind
    const RatingsFile bin = read_ratings_binary(path);
    EXPECT_EQ(bin.ratings, text.ratings);
    EXPECT_EQ(vec(bin.ratings.item_offsets()), vec(text.ratings.item_offsets()));
    EXPECT_EQ(bin.users, text.users);
    EXPECT_EQ(bin.items, text.items);
    EXPECT_EQ(bin.ratings.mean(), text.ratings.mean());
    EXPECT_EQ(bin.first_new_user, 0u);
    const std::string bin_bytes = read_all(path);
    const std::string csv_bytes = read_all(dir.file("r.csv"));
    EXPECT_TRUE(has_ratings_binary_magic(std::as_bytes(std::span(bin_bytes))));
    EXPECT_FALSE(has_ratings_binary_magic(std::as_bytes(std::span(csv_bytes))));
}

TEST(RatingsBinary, LargerRandomMatrixWithoutNamesAndEmptyRows) {
    TempDir dir;
    const Ratings r = Ratings::from_triples(300, 200, random_triples(300, 200, 5000, 5));
    const std::string path = dir.file("r.bin");
    write_ratings_binary(path, r, IdMap(), IdMap());
    const RatingsFile back = read_ratings_binary(path);
    EXPECT_EQ(back.ratings, r);
    EXPECT_TRUE(back.users.empty());
    EXPECT_TRUE(back.items.empty());
    // Written twice, the same bytes.
    write_ratings_binary(dir.file("again.bin"), back.ratings, back.users, back.items);
    EXPECT_EQ(read_all(dir.file("again.bin")), read_all(path));
}

TEST(RatingsBinary, EmptyMatrix) {
    TempDir dir;
    write_ratings_binary(dir.file("e.bin"), Ratings(), IdMap(), IdMap());
    const RatingsFile back = read_ratings_binary(dir.file("e.bin"));
    EXPECT_EQ(back.ratings.nnz(), 0u);
    EXPECT_EQ(back.ratings.num_users(), 0u);
}

TEST(RatingsBinary, HeaderAndCrcMismatchesNameTheFile) {
    TempDir dir;
    rotor::testing::expect_header_and_crc_checks(
        [](const std::string& p) { read_ratings_binary(p); }, good_bytes(dir), "binary ratings", 1);
}

TEST(RatingsBinary, StructureIsCheckedBehindAGoodCrc) {
    TempDir dir;
    const std::string good = good_bytes(dir);
    // Payload: offsets (4 x u64) at 64, items (4 x u32) at 96, values (4 x f32) at 112, then
    // the user map (count, chars, 4 offsets, "u0u1u2" + 2 zero bytes) at 128.  Every patch keeps
    // the CRC right, so the structural checks are what catches it.
    const auto patched = [&](std::size_t at, const void* v, std::size_t n) {
        return rotor::testing::patched(good, at, v, n);
    };
    const std::uint32_t item2 = 2;
    expect_corrupt(patched(96, &item2, 4), "item 2 is >= M = 2");
    const std::uint32_t item0 = 0;
    expect_corrupt(patched(100, &item0, 4), "not strictly increasing");
    const std::uint64_t offset = 5;  // beyond nnz = 4: must not be followed
    expect_corrupt(patched(64 + 8, &offset, 8), "user offsets decrease at user 1");
    const float inf = std::numeric_limits<float>::infinity();
    expect_corrupt(patched(112, &inf, 4), "not finite");
    expect_corrupt(patched(128 + 16 + 32, "u1", 2), "user ids: id \"u1\" appears twice");
    const std::uint64_t count = 2;
    expect_corrupt(patched(128, &count, 8), "user ids: 2 ids for a dimension of 3");
    const std::uint64_t offsets_shrunk = 0;
    expect_corrupt(patched(128 + 16 + 8, &offsets_shrunk, 8), "user ids: id 0 is empty");
}

TEST(RatingsBinary, MissingFileIsAnInputError) {
    TempDir dir;
    EXPECT_THROW(read_ratings_binary(dir.file("none.bin")), InputError);
}

}  // namespace
}  // namespace rotor::mf
