// Tests of load_ratings: a text file and its binary form give the same RatingsFile, alone and read
// against another file's maps.
#include "core/mf/ratings_load.h"

#include <gtest/gtest.h>

#include <string>

#include "core/base/error.h"
#include "core/mf/ratings_binary.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::mf {
namespace {

using rotor::testing::TempDir;

void expect_same(const RatingsFile& a, const RatingsFile& b) {
    EXPECT_EQ(a.ratings, b.ratings);
    EXPECT_EQ(a.users, b.users);
    EXPECT_EQ(a.items, b.items);
    EXPECT_EQ(a.first_new_user, b.first_new_user);
    EXPECT_EQ(a.first_new_item, b.first_new_item);
    EXPECT_EQ(a.ratings_with_new_ids, b.ratings_with_new_ids);
}

/// `text` written as text and as binary (built from the text read alone).
struct Both {
    std::string text;
    std::string binary;
};

Both write_both(const TempDir& dir, const std::string& name, const std::string& text) {
    Both b{dir.write(name + ".csv", text), dir.file(name + ".bin")};
    const RatingsFile f = read_ratings(b.text);
    write_ratings_binary(b.binary, f.ratings, f.users, f.items);
    return b;
}

TEST(LoadRatings, TextAndBinaryGiveTheSameFile) {
    TempDir dir;
    const Both b = write_both(dir, "r", "user,item,rating\nu2,x,1\nu1,y,2.5\nu2,y,3\nu3,z,4\n");
    const RatingsFile text = load_ratings(b.text);
    expect_same(text, load_ratings(b.binary));
    EXPECT_EQ(text.ratings.nnz(), 4u);
    EXPECT_EQ(text.users.name(0), "u2");
}

TEST(LoadRatings, BinaryReadAgainstMapsMapsItsIdsLikeTheTextReader) {
    TempDir dir;
    const RatingsFile train = read_ratings(dir.write("train.txt", "a p 1\nb q 2\nc r 3\n"));
    // New users d, e and a new item s among known ones, in an order the maps do not follow.
    const Both test = write_both(dir, "test", "d q 1\nb s 2\ne p 3\nc q 4\nd s 5\n");
    ReadRatingsOptions options;
    options.users = &train.users;
    options.items = &train.items;
    const RatingsFile text = load_ratings(test.text, options);
    const RatingsFile binary = load_ratings(test.binary, options);
    expect_same(text, binary);
    EXPECT_EQ(binary.first_new_user, 3u);
    EXPECT_EQ(binary.new_users(), 2u);
    EXPECT_EQ(binary.new_items(), 1u);
    EXPECT_EQ(binary.ratings_with_new_ids, 4u);
    EXPECT_EQ(*binary.users.find("b"), 1u);
    // Only one map given: the other side's ids are all new, as in the text reader.
    options.items = nullptr;
    expect_same(load_ratings(test.text, options), load_ratings(test.binary, options));
}

TEST(LoadRatings, BinaryWithoutIdsCannotBeMapped) {
    TempDir dir;
    const RatingsFile f = read_ratings(dir.write("r.txt", "a p 1\n"));
    const std::string path = dir.file("noids.bin");
    write_ratings_binary(path, f.ratings, IdMap(), IdMap());
    EXPECT_EQ(load_ratings(path).ratings, f.ratings);
    ReadRatingsOptions options;
    options.users = &f.users;
    try {
        load_ratings(path, options);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.path(), path);
        EXPECT_NE(std::string(e.what()).find("holds no ids"), std::string::npos) << e.what();
    }
}

// The binary form is held to the same memory bound as the text: 3 ratings of 2 users and 2 items
// take 3 * 32 + 8 * 4 = 128 bytes; 128 admits them, 127 refuses the file before its arrays are
// built (naming it, exit 2), and the bound of a flag is a ConfigError naming it (exit 3).
TEST(LoadRatings, TheBinaryFormIsHeldToTheMemoryBound) {
    TempDir dir;
    const Both b = write_both(dir, "m", "u1 i1 3\nu2 i2 4\nu1 i2 5\n");
    ReadRatingsOptions o;
    o.limits = core::ReadLimits::for_memory(92, "", "");  // 3 ratings * 20 + 4 ids * 8
    EXPECT_EQ(load_ratings(b.binary, o).ratings.nnz(), 3u);
    o.limits = core::ReadLimits::for_memory(91, "", "");
    try {
        load_ratings(b.binary, o);
        FAIL() << "accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(b.binary + ": the ratings need about"),
                  std::string::npos)
            << e.what();
    }
    o.limits = core::ReadLimits::for_memory(91, "--max-memory", "--max-memory 91");
    EXPECT_THROW(load_ratings(b.binary, o), ConfigError);
}

TEST(LoadRatings, ErrorsNameTheFile) {
    TempDir dir;
    const std::string missing = dir.file("missing.txt");
    try {
        load_ratings(missing);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.path(), missing);
    }
    const std::string bad = dir.write("bad.txt", "a p 1\nb q x\n");
    try {
        load_ratings(bad);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(bad + ":2:5:"), std::string::npos) << e.what();
    }
    const std::string short_bin = dir.write("short.bin", "ROTORRAT\x01");
    EXPECT_THROW(load_ratings(short_bin), InputError);
}

}  // namespace
}  // namespace rotor::mf
