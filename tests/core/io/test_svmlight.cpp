// The shared LIBSVM/svmlight line reader (core/io/svmlight.h) in its three key modes: the same
// line read as 1-based indices, 64-bit keys and hashed names; the largest key counting zero
// values; the fast path and the general path agreeing; and each mode's own refusals. The Lasso's
// and logistic regression's reader tests cover the rest of the rules through it.
#include "core/io/svmlight.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::core {
namespace {

using rotor::testing::TempDir;

struct Line {
    double target = 0;
    std::vector<std::uint64_t> keys;
    std::vector<double> values;
    std::uint64_t largest = 0;
};

std::uint64_t length_hash(std::string_view name) { return 100 + name.size(); }

std::vector<Line> read_all(const std::string& text, SvmlightKeys kind) {
    TempDir dir;
    LineReader reader(dir.write("d.svm", text));
    SvmlightReader lines(reader, kind, &length_hash);
    std::vector<Line> out;
    while (lines.next("target")) {
        out.push_back({lines.target(),
                       {lines.keys().begin(), lines.keys().end()},
                       {lines.values().begin(), lines.values().end()},
                       lines.largest_key()});
    }
    return out;
}

std::string error_of(const std::string& text, SvmlightKeys kind) {
    try {
        read_all(text, kind);
    } catch (const InputError& e) {
        const std::string msg = e.what();
        return msg.substr(msg.find(".svm:") + 5);
    }
    return "no error";
}

TEST(SvmlightReader, OneLineInEachKeyMode) {
    const std::string text = "-1.5 qid:3 1:2 7:0 9:-1 # comment\n\n+2\n";
    const std::vector<Line> index = read_all(text, SvmlightKeys::kIndex);
    ASSERT_EQ(index.size(), 2u);
    EXPECT_EQ(index[0].target, -1.5);
    EXPECT_EQ(index[0].keys, (std::vector<std::uint64_t>{1, 9}));
    EXPECT_EQ(index[0].values, (std::vector<double>{2, -1}));
    EXPECT_EQ(index[0].largest, 9u);
    EXPECT_EQ(index[1].target, 2);
    EXPECT_TRUE(index[1].keys.empty());
    EXPECT_EQ(index[1].largest, 0u);
    // A zero value still counts for the largest key (the Lasso's p).
    EXPECT_EQ(read_all("0 2:1 30:0\n", SvmlightKeys::kIndex)[0].largest, 30u);

    const std::vector<Line> key = read_all("1 0:1 18446744073709551614:2\n", SvmlightKeys::kKey);
    EXPECT_EQ(key[0].keys, (std::vector<std::uint64_t>{0, 18446744073709551614u}));

    // Hashed: names of equal length collide and merge; sorted by key; a bare name is value 1.
    const std::vector<Line> hashed = read_all("1 ab:2 zzz cd:0.5 x:0\n", SvmlightKeys::kHashed);
    EXPECT_EQ(hashed[0].keys, (std::vector<std::uint64_t>{102, 103}));
    EXPECT_EQ(hashed[0].values, (std::vector<double>{2.5, 1}));
}

TEST(SvmlightReader, FastAndGeneralPathsAgree) {
    // Keys of 20 digits and keys after blanks of several kinds take the general path.
    const std::vector<Line> a =
        read_all("1 5:1 00000000000000000006:2\t 7:3\n", SvmlightKeys::kKey);
    const std::vector<Line> b = read_all("1 5:1 6:2 7:3\n", SvmlightKeys::kKey);
    EXPECT_EQ(a[0].keys, b[0].keys);
    EXPECT_EQ(a[0].values, b[0].values);
}

TEST(SvmlightReader, EachModeRefusesItsOwnKeys) {
    EXPECT_EQ(error_of("1 0:1\n", SvmlightKeys::kIndex),
              "1:3: feature index 0: indices are 1-based");
    EXPECT_EQ(error_of("1 4294967295:1\n", SvmlightKeys::kIndex),
              "1:3: feature index 4294967295 is too large");
    EXPECT_EQ(error_of("1 18446744073709551615:1\n", SvmlightKeys::kKey),
              "1:3: feature key 18446744073709551615 is too large");
    EXPECT_EQ(error_of("1 3:1 2:1\n", SvmlightKeys::kIndex),
              "1:7: feature index 2 does not increase (previous 3)");
    EXPECT_EQ(error_of("1 3:1 3:1\n", SvmlightKeys::kKey),
              "1:7: feature key 3 does not increase (previous 3)");
    EXPECT_EQ(error_of("1 a\n", SvmlightKeys::kIndex), "1:3: expected index:value, got \"a\"");
    EXPECT_EQ(error_of("1 a\n", SvmlightKeys::kKey), "1:3: expected key:value, got \"a\"");
    EXPECT_EQ(error_of("1 :1\n", SvmlightKeys::kHashed), "1:3: empty feature name");
    EXPECT_EQ(error_of("x 1:1\n", SvmlightKeys::kHashed),
              "1:1: target \"x\" is not a finite number");
    EXPECT_EQ(error_of("1 1:nan\n", SvmlightKeys::kKey),
              "1:5: feature value \"nan\" is not a finite number");
}

}  // namespace
}  // namespace rotor::core
