#include "train/cli_text.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace rotor::train {
namespace {

TEST(EditDistance, LevenshteinWithTranspositions) {
    EXPECT_EQ(edit_distance("", "abc"), 3u);
    EXPECT_EQ(edit_distance("--topcs", "--topics"), 1u);
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
    EXPECT_EQ(edit_distance("otu", "out"), 1u);
    EXPECT_EQ(edit_distance("trian", "train"), 1u);
}

TEST(Suggest, CloseFlagsOnly) {
    const std::vector<std::string> flags{"--topics", "--top", "--threads", "--out", "--iterations"};
    EXPECT_EQ(suggest("--topcs", flags), "--topics");
    EXPECT_EQ(suggest("--topics=5", flags), "");  // an exact name is no typo
    EXPECT_EQ(suggest("--tpoics=5", flags), "--topics");
    EXPECT_EQ(suggest("--iter", flags), "--iterations");  // a unique prefix
    EXPECT_EQ(suggest("--zebra", flags), "");
    EXPECT_EQ(suggest("--x", flags), "");
}

/// Parses `args` (argv without the program name) and returns the hint after the parse error.
std::string hint_after(std::vector<std::string> args) {
    CLI::App app{"test"};
    app.require_subcommand(1);
    auto* lda = app.add_subcommand("lda", "");
    lda->require_subcommand(1);
    auto* train = lda->add_subcommand("train", "");
    lda->add_subcommand("topics", "");
    int topics = 0;
    std::string out;
    train->add_option("--topics,-k", topics);
    train->add_option("--out", out);
    std::reverse(args.begin(), args.end());
    try {
        app.parse(args);
    } catch (const CLI::ParseError&) {
        return typo_hint(app);
    }
    return "parsed";
}

TEST(TypoHint, SuggestsTheFlagOfTheSubcommandGiven) {
    EXPECT_EQ(hint_after({"lda", "train", "--topcs", "5", "--out", "m"}), "did you mean --topics?");
    EXPECT_EQ(hint_after({"lda", "train", "--out", "m", "--otu=x"}), "did you mean --out?");
    EXPECT_EQ(hint_after({"lda", "trian"}), "did you mean train?");
    EXPECT_EQ(hint_after({"lda", "train", "--zebra"}), "");
}

}  // namespace
}  // namespace rotor::train
