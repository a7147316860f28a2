// Tests of feature-group files (core/logreg/block_groups.h) and of split_blocks with groups:
// groups numbered in order of first appearance, hashed names, the digest, malformed files with
// path:line:col, and blocks that hold exactly one group each (unlisted keys in the hash blocks).
#include "core/logreg/block_groups.h"

#include <gtest/gtest.h>

#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/logreg/block_prox.h"
#include "core/logreg/shard.h"
#include "tests/core/io/temp_dir.h"
#include "tests/core/logreg/logreg_test_util.h"

namespace rotor::logreg {
namespace {

using rotor::testing::TempDir;

void expect_error(const std::string& text, const std::string& where, const std::string& what,
                  bool hashed = false) {
    TempDir dir;
    const std::string path = dir.write("bad.blocks", text);
    try {
        read_block_file(path, hashed);
        FAIL() << "no error for: " << text;
    } catch (const InputError& e) {
        const std::string msg = e.what();
        const std::string at = where.empty() ? path + ": " : path + ":" + where + ": ";
        EXPECT_NE(msg.find(at), std::string::npos) << text << " -> " << msg;
        EXPECT_NE(msg.find(what), std::string::npos) << text << " -> " << msg;
        EXPECT_EQ(e.exit_code(), ExitCode::kInput);
    }
}

TEST(BlockFile, GroupsInOrderOfFirstAppearance) {
    TempDir dir;
    const std::string path = dir.write("g.blocks", "7\tverbs\n3\tnouns\r\n9\tverbs\n0\tx y\n");
    const BlockGroups g = read_block_file(path, false);
    ASSERT_EQ(g.groups(), 3u);
    EXPECT_EQ(g.name(0), "verbs");
    EXPECT_EQ(g.name(1), "nouns");
    EXPECT_EQ(g.name(2), "x y");
    EXPECT_EQ(g.group_of(7), 0u);
    EXPECT_EQ(g.group_of(9), 0u);
    EXPECT_EQ(g.group_of(3), 1u);
    EXPECT_EQ(g.group_of(0), 2u);
    EXPECT_FALSE(g.group_of(4).has_value());
    EXPECT_EQ(g.digest(), block_file_digest(path));
    const std::string other = dir.write("h.blocks", "7\tverbs\n3\tnouns\n9\tverbs\n0\tx z\n");
    EXPECT_NE(block_file_digest(other), g.digest());
    // The same lines without the '\r' and from gzip: the same digest.
    const std::string gz = dir.write_gz("g.blocks.gz", "7\tverbs\n3\tnouns\n9\tverbs\n0\tx y\n");
    EXPECT_EQ(block_file_digest(gz), g.digest());
}

TEST(BlockFile, HashedNames) {
    TempDir dir;
    const BlockGroups g = read_block_file(dir.write("g.blocks", "word\ta\n42\tb\n"), true);
    EXPECT_EQ(g.group_of(hash_feature("word")), 0u);
    EXPECT_EQ(g.group_of(hash_feature("42")), 1u);
    EXPECT_FALSE(g.group_of(42).has_value());
}

TEST(BlockFile, MalformedFilesNamePathLineAndColumn) {
    expect_error("1\ta\n2 b\n", "2:1", "expected key<TAB>group");
    expect_error("1\ta\tb\n", "1:4", "more than one tab");
    expect_error("\ta\n", "1:1", "empty key");
    expect_error("1\t\n", "1:3", "empty group");
    expect_error("1\ta\nx\tb\n", "2:1", "is not an unsigned integer");
    expect_error("18446744073709551615\ta\n", "1:1", "is too large");
    expect_error("5\ta\n6\tb\n5\tb\n", "3:1", "already listed on line 1");
    expect_error("w\ta\nw\tb\n", "2:1", "already listed on line 1", true);
    expect_error("", "", "no groups");
    expect_error("\n", "1:1", "expected key<TAB>group");
}

TEST(BlockFile, EachGroupIsOneBlockAndTheRestAreHashed) {
    // synthetic_examples' keys: (k + 1) * 0x9E3779B97F4A7C1; the first 30 listed, in group k % 3.
    std::vector<std::uint64_t> keys;
    std::map<std::uint64_t, std::uint64_t> index_of;
    std::string text;
    for (std::uint64_t k = 0; k < 60; ++k) {
        keys.push_back((k + 1) * 0x9E3779B97F4A7C1ULL);
        index_of[keys.back()] = k;
        if (k < 30) text += std::to_string(keys.back()) + "\tg" + std::to_string(k % 3) + "\n";
    }
    TempDir dir;
    const BlockGroups g = read_block_file(dir.write("g.blocks", text), false);
    const auto blocks = split_blocks(keys, 3 + 4, 11, &g);
    ASSERT_EQ(blocks.size(), 7u);
    for (std::uint32_t b = 0; b < 3; ++b) {
        ASSERT_EQ(blocks[b].size(), 10u);
        for (const std::uint64_t k : blocks[b]) EXPECT_EQ(index_of.at(k) % 3, b) << "key " << k;
    }
    const auto hashed = split_blocks(std::span(keys).subspan(30), 4, 11);
    for (std::uint32_t b = 0; b < 4; ++b) EXPECT_EQ(blocks[3 + b], hashed[b]);
    // BlockProx takes the same split of the keys its examples hold.
    const Examples ex = testing::synthetic_examples(50, 60, 8, 3);
    std::vector<Shard> one{Shard(ex, false)};
    BlockProxOptions o;
    o.blocks = 7;
    o.seed = 11;
    o.groups = std::make_shared<const BlockGroups>(g);
    BlockProx prox(one, o);
    std::size_t seen = 0;
    for (std::uint32_t b = 0; b < 7; ++b) {
        for (const std::uint64_t k : prox.block(b)) {
            const std::uint64_t i = index_of.at(k);
            EXPECT_EQ(b < 3 ? i < 30 && i % 3 == b : i >= 30, true)
                << "key " << k << " block " << b;
            ++seen;
        }
    }
    EXPECT_EQ(seen, prox.keys().size());
    EXPECT_GT(prox.block(0).size(), 5u);
}

}  // namespace
}  // namespace rotor::logreg
