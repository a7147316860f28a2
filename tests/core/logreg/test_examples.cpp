// Tests of the svmlight reader for logistic regression: labels (±1, 0/1), 64-bit keys, qid,
// comments, BOM, hashing of string features, and malformed input with path:line:col.
#include "core/logreg/examples.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/error.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::logreg {
namespace {

using rotor::testing::TempDir;

Examples read_text(const std::string& text, const ReadExamplesOptions& options = {}) {
    TempDir dir;
    return read_examples(dir.write("d.svm", text), options);
}

void expect_error(const std::string& text, const std::string& where, const std::string& what,
                  const ReadExamplesOptions& options = {}) {
    TempDir dir;
    const std::string path = dir.write("bad.svm", text);
    try {
        read_examples(path, options);
        FAIL() << "no error for: " << text;
    } catch (const InputError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(path + ":" + where + ": "), std::string::npos) << text << " -> " << msg;
        EXPECT_NE(msg.find(what), std::string::npos) << text << " -> " << msg;
        EXPECT_EQ(e.exit_code(), ExitCode::kInput);
    }
}

TEST(ReadExamples, LabelsKeysAndValues) {
    const Examples ex = read_text(
        "\xEF\xBB\xBF+1 3:2 18446744073709551614:-1\n0 qid:4 0:0.5 7:0\n# only a comment\n"
        "\n-1\t1:1e1 # trailing\n1.0\n");
    ASSERT_EQ(ex.size(), 4u);
    EXPECT_EQ(ex.labels, (std::vector<std::int8_t>{1, -1, -1, 1}));
    EXPECT_EQ(ex.offsets, (std::vector<std::uint64_t>{0, 2, 3, 4, 4}));
    EXPECT_EQ(ex.keys, (std::vector<std::uint64_t>{3, 18446744073709551614ULL, 0, 1}));
    EXPECT_EQ(ex.values, (std::vector<double>{2, -1, 0.5, 10}));
}

TEST(ReadExamples, KeysOfEveryLengthAndSeparator) {
    // 19-digit keys take the one-scan path of "key:value" fields, 20-digit ones the general
    // path; leading zeros, tabs and runs of blanks are the same on both.
    const Examples ex = read_text(
        "1 0007:1 9999999999999999999:2\t10000000000000000000:3  18446744073709551614:4\n"
        "-1\t\t5:0.25 6:-0\n");
    ASSERT_EQ(ex.size(), 2u);
    EXPECT_EQ(ex.keys,
              (std::vector<std::uint64_t>{7, 9999999999999999999ULL, 10000000000000000000ULL,
                                          18446744073709551614ULL, 5}));
    EXPECT_EQ(ex.values, (std::vector<double>{1, 2, 3, 4, 0.25}));
}

TEST(ReadExamples, GzipIsReadByItsMagicBytes) {
    TempDir dir;
    const Examples ex = read_examples(dir.write_gz("d.svm.gz", "1 2:0.5\n0 7:1\n"));
    ASSERT_EQ(ex.size(), 2u);
    EXPECT_EQ(ex.labels, (std::vector<std::int8_t>{1, -1}));
    EXPECT_EQ(ex.keys, (std::vector<std::uint64_t>{2, 7}));
}

TEST(ReadExamples, HashedStringFeaturesMergeCollisions) {
    ReadExamplesOptions o;
    o.hash_features = true;
    const Examples ex = read_text("1 word:2 other word:1.5\n0 other\n", o);
    ASSERT_EQ(ex.size(), 2u);
    const std::uint64_t w = hash_feature("word"), other = hash_feature("other");
    ASSERT_EQ(ex.keys_of(0).size(), 2u);
    const bool word_first = w < other;
    EXPECT_EQ(ex.keys_of(0)[word_first ? 0 : 1], w);
    EXPECT_EQ(ex.values_of(0)[word_first ? 0 : 1], 3.5);
    EXPECT_EQ(ex.values_of(0)[word_first ? 1 : 0], 1.0);
    EXPECT_EQ(ex.keys_of(1)[0], other);
    EXPECT_NE(hash_feature("a"), hash_feature("b"));
    EXPECT_EQ(hash_feature("word"), w);
}

TEST(ReadExamples, MalformedInputNamesPathLineAndColumn) {
    expect_error("2 1:1\n", "1:1", "label \"2\" is not +1, -1 or 0");
    expect_error("1 1:1\nx 1:1\n", "2:1", "label \"x\" is not a finite number");
    expect_error("1 1:1 2\n", "1:7", "expected key:value");
    expect_error("1 5:1 5:2\n", "1:7", "does not increase");
    expect_error("1 5:1 3:2\n", "1:7", "does not increase");
    expect_error("1 9999999999999999999:1 10:2\n", "1:25", "does not increase");
    expect_error("1 3:\n", "1:5", "feature value \"\" is not a finite number");
    expect_error("1 3:1 4:2x\n", "1:9", "feature value \"2x\"");
    expect_error("1 3x:1\n", "1:3", "is not an unsigned integer");
    expect_error("1 -3:1\n", "1:3", "is not an unsigned integer");
    expect_error("1 18446744073709551615:1\n", "1:3", "is too large");
    expect_error("1 18446744073709551616:1\n", "1:3", "is too large");
    expect_error("1 3:nan\n", "1:5", "feature value \"nan\" is not a finite number");
    expect_error("1 3:1e999\n", "1:5", "is not a finite number");
    expect_error("1 :1\n", "1:3", "empty feature name");
    expect_error("1 qid:x 1:1\n", "1:7", "qid \"x\" is not an unsigned integer");
    ReadExamplesOptions o;
    o.hash_features = true;
    expect_error("1 a:1 b:z\n", "1:9", "feature value \"z\"", o);
}

}  // namespace
}  // namespace rotor::logreg
