// Tests of the LIBSVM/svmlight reader: what it accepts (qid, comments, BOM, '+' targets, zeros,
// gzip, empty samples) and every malformed case, checked for InputError `<path>:<line>:<col>`.
#include "core/lasso/libsvm_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/error.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::lasso {
namespace {

using rotor::testing::TempDir;

RawData read_text(const std::string& text, const ReadLibsvmOptions& options = {}) {
    TempDir dir;
    return read_libsvm(dir.write("d.svm", text), options);
}

void expect_error(const std::string& text, const std::string& where, const std::string& what) {
    TempDir dir;
    const std::string path = dir.write("bad.svm", text);
    try {
        read_libsvm(path);
        FAIL() << "no error for: " << text;
    } catch (const InputError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(path + ":" + where + ": "), std::string::npos) << text << " -> " << msg;
        EXPECT_NE(msg.find(what), std::string::npos) << text << " -> " << msg;
        EXPECT_EQ(e.exit_code(), ExitCode::kInput);
    }
}

TEST(ReadLibsvm, SamplesTargetsAndOneBasedIndices) {
    const RawData d = read_text("1.5 1:2 4:-1\n-3 2:0.5\n0\n+2 qid:7 3:1e1 # a comment\n");
    ASSERT_EQ(d.samples(), 4u);
    EXPECT_EQ(d.features, 4u);
    EXPECT_FALSE(d.dense);
    EXPECT_EQ(d.targets, (std::vector<double>{1.5, -3, 0, 2}));
    EXPECT_EQ(d.row_offsets, (std::vector<std::uint64_t>{0, 2, 3, 3, 4}));
    EXPECT_EQ(d.cols, (std::vector<std::uint32_t>{0, 3, 1, 2}));
    EXPECT_EQ(d.values, (std::vector<double>{2, -1, 0.5, 10}));
}

TEST(ReadLibsvm, CommentsBlankLinesBomTabsCrlfAndZeros) {
    const RawData d = read_text("\xEF\xBB\xBF# header comment\n\n  \t\n2\t1:0  2:3\r\n# end\n");
    ASSERT_EQ(d.samples(), 1u);
    EXPECT_EQ(d.features, 2u);
    EXPECT_EQ(d.cols, (std::vector<std::uint32_t>{1}));  // the explicit zero is not stored
    EXPECT_EQ(d.values, (std::vector<double>{3}));
}

TEST(ReadLibsvm, MinFeaturesAndGzip) {
    TempDir dir;
    ReadLibsvmOptions o;
    o.min_features = 10;
    const RawData d = read_libsvm(dir.write_gz("d.svm.gz", "1 2:1\n"), o);
    EXPECT_EQ(d.features, 10u);
    EXPECT_EQ(d.samples(), 1u);
}

TEST(ReadLibsvm, MalformedLines) {
    expect_error("1 1:1\nx 1:1\n", "2:1", "target \"x\" is not a finite number");
    expect_error("nan 1:1\n", "1:1", "target");
    expect_error("1 0:1\n", "1:3", "indices are 1-based");
    expect_error("1 2:1 2:3\n", "1:7", "does not increase (previous 2)");
    expect_error("1 3:1 2:3\n", "1:7", "does not increase");
    expect_error("1 2:1 x\n", "1:7", "expected index:value");
    expect_error("1 a:1\n", "1:3", "feature index \"a\" is not an unsigned integer");
    expect_error("1 -1:1\n", "1:3", "feature index");
    expect_error("1 4294967296:1\n", "1:3", "too large");
    expect_error("1 2:abc\n", "1:5", "feature value \"abc\"");
    expect_error("1 2:\n", "1:5", "feature value");
    expect_error("1 2:1e999\n", "1:5", "feature value");
    expect_error("1 qid:x 1:1\n", "1:7", "qid");
    expect_error("1 1:1 qid:2\n", "1:7", "feature index \"qid\"");
}

// The memory bound holds while the file is read (as the UCI reader's): 3 samples of 2 entries
// take 3 * (2 * 12 + 16) = 120 bytes; a bound of 119 refuses the third line, 120 admits it; the
// bound of a flag is a ConfigError naming it (exit 3).
TEST(ReadLibsvm, TheMemoryBoundIsCheckedAtEachLine) {
    const std::string text = "1 1:1 2:1\n2 1:2 3:1\n3 2:1 3:2\n";
    ReadLibsvmOptions o;
    o.limits = core::ReadLimits::for_memory(120, "", "");
    EXPECT_EQ(read_text(text, o).samples(), 3u);
    TempDir dir;
    const std::string path = dir.write("d.svm", text);
    o.limits = core::ReadLimits::for_memory(119, "", "");
    try {
        read_libsvm(path, o);
        FAIL() << "accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(path + ":3:1: the samples need about"),
                  std::string::npos)
            << e.what();
    }
    o.limits = core::ReadLimits::for_memory(100, "--max-memory", "--max-memory 100");
    EXPECT_THROW(read_libsvm(path, o), ConfigError);
}

TEST(ReadLibsvm, MissingFileIsAnInputError) {
    EXPECT_THROW(read_libsvm("/nonexistent/rotor/d.svm"), InputError);
}

}  // namespace
}  // namespace rotor::lasso
