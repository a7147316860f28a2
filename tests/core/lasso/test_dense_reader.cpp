// Tests of the dense CSV/TSV reader: headers, target selection, separators, BOM, gzip, and every
// malformed case, checked for InputError `<path>:<line>:<col>` (or ConfigError for --target).
#include "core/lasso/dense_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/error.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::lasso {
namespace {

using rotor::testing::TempDir;

RawData read_text(const std::string& text, const ReadDenseOptions& options = {}) {
    TempDir dir;
    return read_dense(dir.write("d.csv", text), options);
}

void expect_error(const std::string& text, const std::string& where, const std::string& what) {
    TempDir dir;
    const std::string path = dir.write("bad.csv", text);
    try {
        read_dense(path);
        FAIL() << "no error for: " << text;
    } catch (const InputError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(path + ":" + where + ": "), std::string::npos) << text << " -> " << msg;
        EXPECT_NE(msg.find(what), std::string::npos) << text << " -> " << msg;
        EXPECT_EQ(e.exit_code(), ExitCode::kInput);
    }
}

TEST(ReadDense, CsvWithHeaderTargetLastByDefault) {
    const RawData d = read_text("\"a\",b,y\n1,2,3\n4, 0 ,6\n");
    EXPECT_TRUE(d.dense);
    EXPECT_EQ(d.features, 2u);
    EXPECT_EQ(d.feature_names, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(d.targets, (std::vector<double>{3, 6}));
    EXPECT_EQ(d.values, (std::vector<double>{1, 2, 4, 0}));  // zeros stored: dense
    EXPECT_EQ(d.cols, (std::vector<std::uint32_t>{0, 1, 0, 1}));
}

TEST(ReadDense, TargetByNameOrNumber) {
    ReadDenseOptions o;
    o.target = "a";
    RawData d = read_text("a,b,y\n1,2,3\n", o);
    EXPECT_EQ(d.targets, (std::vector<double>{1}));
    EXPECT_EQ(d.values, (std::vector<double>{2, 3}));
    EXPECT_EQ(d.feature_names, (std::vector<std::string>{"b", "y"}));
    o.target = "2";
    d = read_text("1\t2\t3\n4\t5\t6\n", o);  // TSV, no header
    EXPECT_EQ(d.targets, (std::vector<double>{2, 5}));
    EXPECT_EQ(d.values, (std::vector<double>{1, 3, 4, 6}));
    EXPECT_TRUE(d.feature_names.empty());
}

TEST(ReadDense, HeaderModesBomCommentsGzip) {
    ReadDenseOptions o;
    o.header = DenseHeader::kPresent;
    EXPECT_EQ(read_text("1,2\n3,4\n", o).samples(), 1u);
    o.header = DenseHeader::kAbsent;
    EXPECT_THROW(read_text("a,b\n3,4\n", o), InputError);
    TempDir dir;
    const RawData d =
        read_dense(dir.write_gz("d.csv.gz", "\xEF\xBB\xBFx,y\r\n# note\n\n1,+2\n-1,2e0\n"));
    EXPECT_EQ(d.samples(), 2u);
    EXPECT_EQ(d.targets, (std::vector<double>{2, 2}));
    EXPECT_EQ(d.feature_names, (std::vector<std::string>{"x"}));
}

TEST(ReadDense, BadTargetIsAConfigError) {
    ReadDenseOptions o;
    o.target = "z";
    EXPECT_THROW(read_text("a,b\n1,2\n", o), ConfigError);
    o.target = "3";
    EXPECT_THROW(read_text("a,b\n1,2\n", o), ConfigError);
    o.target = "0";
    EXPECT_THROW(read_text("a,b\n1,2\n", o), ConfigError);
    o.target = "a";
    EXPECT_THROW(read_text("1,2\n1,2\n", o), ConfigError);  // no header
}

TEST(ReadDense, MalformedLines) {
    expect_error("1\n", "1:1", "one column");
    expect_error("1,2\n3\n", "2:2", "1 fields, the first line has 2");
    expect_error("1,2\n3,4,5\n", "2:5", "3 fields");
    expect_error("1,2\n3,\n", "2:3", "empty field");
    expect_error("a,b\n1,x\n", "2:3", "\"x\" is not a finite number");
    expect_error("a,b\n1,inf\n", "2:3", "not a finite number");
    expect_error("a,b\n\"1\",2\n", "2:1", "not a finite number");
    expect_error("1\t2\n3 4\n", "2:4", "1 fields");
}

// The memory bound holds while the file is read (as the LIBSVM reader's): a header and 3 samples
// of 2 features take 3 * (2 * 12 + 16) = 120 bytes; a bound of 119 refuses the line of the third
// sample (line 4), 120 admits it; the bound of a flag is a ConfigError naming it (exit 3).
TEST(ReadDense, TheMemoryBoundIsCheckedAtEachLine) {
    const std::string text = "a,b,y\n1,2,3\n4,5,6\n7,8,9\n";
    ReadDenseOptions o;
    o.limits = core::ReadLimits::for_memory(120, "", "");
    EXPECT_EQ(read_text(text, o).samples(), 3u);
    TempDir dir;
    const std::string path = dir.write("d.csv", text);
    o.limits = core::ReadLimits::for_memory(119, "", "");
    try {
        read_dense(path, o);
        FAIL() << "accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(path + ":4:1: the samples need about"),
                  std::string::npos)
            << e.what();
    }
    o.limits = core::ReadLimits::for_memory(100, "--max-memory", "--max-memory 100");
    EXPECT_THROW(read_dense(path, o), ConfigError);
}

}  // namespace
}  // namespace rotor::lasso
