// `rotor ratings build | info | split` through the real binary: the binary form reads back equal
// to the text, the split files read back equal to split_ratings' parts, bad input exits 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "core/base/rng.h"
#include "core/mf/ratings_binary.h"
#include "core/mf/ratings_reader.h"
#include "core/mf/ratings_split.h"
#include "tests/apps/mf/rotor_cli_util.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::apps {
namespace {

using rotor::testing::read_all;
using rotor::testing::TempDir;
using testing::run_rotor;

/// A float as %.12g: more digits than %.9g, reading back as the same float.
std::string fmt_float(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.12g", static_cast<double>(v));
    return buf;
}

/// A MovieLens-like CSV: 40 users, 25 items, ~400 ratings with fractional values that need all
/// nine digits of %.9g, a header and a timestamp column.
std::string movielens_like() {
    Rng rng(7);
    std::string s = "userId,movieId,rating,timestamp\n";
    for (int u = 0; u < 40; ++u) {
        for (int i = 0; i < 25; ++i) {
            if (rng.uniform() > 0.4) continue;
            const float v = 0.5f + static_cast<float>(rng.uniform()) * 4.5f;
            s += "user" + std::to_string(u * 7 % 40) + "," + std::to_string(1000 + i * 13) + "," +
                 fmt_float(v) + ",964982703\n";
        }
    }
    return s;
}

class RatingsCli : public ::testing::Test {
  protected:
    testing::CommandResult rotor(const std::string& args) const { return run_rotor(dir_, args); }
    TempDir dir_;
};

TEST_F(RatingsCli, BuildThenInfoGiveTheSameMatrixAsTheText) {
    const std::string csv = dir_.write("r.csv", movielens_like());
    const std::string bin = dir_.file("r.bin");
    const auto b = rotor("ratings build --ratings " + csv + " --out " + bin);
    ASSERT_EQ(b.code, 0) << b.err;
    const mf::RatingsFile text = mf::read_ratings(csv);
    const mf::RatingsFile back = mf::read_ratings_binary(bin);
    EXPECT_EQ(back.ratings, text.ratings);
    EXPECT_EQ(back.users, text.users);
    EXPECT_EQ(back.items, text.items);

    const auto t = rotor("ratings info " + csv);
    const auto i = rotor("ratings info " + bin);
    ASSERT_EQ(t.code, 0) << t.err;
    ASSERT_EQ(i.code, 0) << i.err;
    EXPECT_EQ(t.out, i.out);
    const mf::Ratings& a = text.ratings;
    EXPECT_NE(t.out.find("users: " + std::to_string(a.num_users()) +
                         "\nitems: " + std::to_string(a.num_items()) +
                         "\nratings: " + std::to_string(a.nnz()) + "\n"),
              std::string::npos)
        << t.out;
    std::uint64_t max_user = 0;
    for (mf::UserId u = 0; u < a.num_users(); ++u) max_user = std::max(max_user, a.user_degree(u));
    EXPECT_NE(t.out.find("max " + std::to_string(max_user) + "; 0 with no rating\nitem degree"),
              std::string::npos)
        << t.out;
}

TEST_F(RatingsCli, SplitFilesReadBackAsSplitRatingsParts) {
    const std::string csv = dir_.write("r.csv", movielens_like());
    const mf::RatingsFile f = mf::read_ratings(csv);
    mf::ReadRatingsOptions against;
    against.users = &f.users;
    against.items = &f.items;
    for (const auto& [by, split_by] :
         {std::pair{"rating", mf::SplitBy::kRating}, std::pair{"user", mf::SplitBy::kUser}}) {
        SCOPED_TRACE(by);
        const std::string train = dir_.file(std::string("train_") + by + ".csv");
        const std::string test = dir_.file(std::string("test_") + by + ".csv");
        // From the text and from the binary form: the same files.
        for (const std::string& input : {csv, dir_.file("r.bin")}) {
            if (input != csv) {
                ASSERT_EQ(rotor("ratings build --ratings " + csv + " --out " + input).code, 0);
            }
            const auto r =
                rotor("ratings split --ratings " + input + " --test-fraction 0.25 --by " + by +
                      " --seed 9 --train-out " + train + " --test-out " + test);
            ASSERT_EQ(r.code, 0) << r.err;
            const mf::RatingsSplit want = mf::split_ratings(f.ratings, 0.25, 9, split_by);
            EXPECT_GT(want.test.nnz(), 0u);
            EXPECT_EQ(mf::read_ratings(train, against).ratings, want.train);
            EXPECT_EQ(mf::read_ratings(test, against).ratings, want.test);
            EXPECT_EQ(read_all(train).substr(0, 17), "user,item,rating\n");
        }
    }
}

TEST_F(RatingsCli, BadInputExitsTwoAndLeavesNoOutput) {
    const std::string bad = dir_.write("bad.csv", "u,i,r\nu1,i1,4\nu2,i2\n");
    const auto b = rotor("ratings build --ratings " + bad + " --out " + dir_.file("out.bin"));
    EXPECT_EQ(b.code, 2);
    EXPECT_NE(b.err.find(bad + ":3:6: missing rating"), std::string::npos) << b.err;
    const auto s = rotor("ratings split --ratings " + bad + " --train-out " + dir_.file("out.tr") +
                         " --test-out " + dir_.file("out.te"));
    EXPECT_EQ(s.code, 2);
    const auto dup = dir_.write("dup.csv", "u1 i1 4\nu2 i1 3\nu1 i1 5\n");
    const auto d = rotor("ratings info " + dup);
    EXPECT_EQ(d.code, 2);
    EXPECT_NE(d.err.find(dup + ":3:1: duplicate rating"), std::string::npos) << d.err;
    for (const auto& e : std::filesystem::directory_iterator(dir_.path()))
        EXPECT_FALSE(e.path().filename().string().starts_with("out")) << e.path();
}

TEST_F(RatingsCli, BadFlagsExitThree) {
    const std::string ok = dir_.write("ok.csv", "u1,i1,4\n");
    const std::string outs = " --train-out " + dir_.file("a") + " --test-out " + dir_.file("b");
    EXPECT_EQ(rotor("ratings split --ratings " + ok + " --test-fraction 1.5" + outs).code, 3);
    EXPECT_EQ(rotor("ratings split --ratings " + ok + " --by item" + outs).code, 3);
    EXPECT_EQ(rotor("ratings split --ratings " + ok + " --train-out " + dir_.file("a") +
                    " --test-out " + dir_.file("a"))
                  .code,
              3);
    // --ratings as every command names its input; without it, the error names it; the old
    // --input still works (hidden from --help).
    const auto none = rotor("ratings build --out " + dir_.file("c.bin"));
    EXPECT_EQ(none.code, 3);
    EXPECT_NE(none.err.find("--ratings"), std::string::npos) << none.err;
    EXPECT_EQ(rotor("ratings split" + outs).code, 3);
    EXPECT_EQ(rotor("ratings build --input " + ok + " --out " + dir_.file("c.bin")).code, 0);
    const auto help = rotor("ratings build --help");
    EXPECT_NE(help.out.find("--ratings"), std::string::npos) << help.out;
    EXPECT_EQ(help.out.find("--input"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace rotor::apps
