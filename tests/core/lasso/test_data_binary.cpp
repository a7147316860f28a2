// Tests of the binary form of regression data: round trips (text -> RawData -> binary ->
// RawData, sparse and dense) and corrupt files, each built in the test, rejected with InputError
// naming the file.
#include "core/lasso/data_binary.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/lasso/dense_reader.h"
#include "core/lasso/libsvm_reader.h"
#include "tests/core/io/binary_file_util.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::lasso {
namespace {

using rotor::testing::read_all;
using rotor::testing::TempDir;

void expect_same(const RawData& a, const RawData& b) {
    EXPECT_EQ(a.features, b.features);
    EXPECT_EQ(a.row_offsets, b.row_offsets);
    EXPECT_EQ(a.cols, b.cols);
    EXPECT_EQ(a.values, b.values);
    EXPECT_EQ(a.targets, b.targets);
    EXPECT_EQ(a.dense, b.dense);
    EXPECT_EQ(a.feature_names, b.feature_names);
}

void expect_corrupt(const std::string& bytes, const std::string& what) {
    rotor::testing::expect_corrupt([](const std::string& p) { read_data_binary(p); }, bytes, what);
}

/// A small good sparse file: 3 samples, p = 4, 4 entries.
std::string good_bytes(const TempDir& dir) {
    const RawData d = read_libsvm(dir.write("d.svm", "1.5 1:2 3:-1\n-2 4:0.25\n0.5 2:1\n"));
    const std::string path = dir.file("good.bin");
    write_data_binary(path, d);
    return read_all(path);
}

TEST(DataBinary, SparseTextToBinaryRoundTrip) {
    TempDir dir;
    const RawData text = read_libsvm(
        dir.write("d.svm", "# comment\n1.5 qid:3 1:2 3:-1 7:1e-3\n-2\n+1 2:4 7:0.5\n0.25 1:1\n"));
    const std::string path = dir.file("d.bin");
    write_data_binary(path, text);
    EXPECT_EQ(dir.count(), 2u);  // d.svm and d.bin: no temporary left behind
    const RawData bin = read_data_binary(path);
    expect_same(bin, text);
    // Written twice, the same bytes.
    write_data_binary(dir.file("again.bin"), bin);
    EXPECT_EQ(read_all(dir.file("again.bin")), read_all(path));
    const std::string bytes = read_all(path), svm = read_all(dir.file("d.svm"));
    EXPECT_TRUE(has_data_binary_magic(std::as_bytes(std::span(bytes))));
    EXPECT_FALSE(has_data_binary_magic(std::as_bytes(std::span(svm))));
}

TEST(DataBinary, DenseWithHeaderRoundTrip) {
    TempDir dir;
    const RawData text = read_dense(dir.write("d.csv", "a,bb,c,y\n1,2,3,4\n5,0,7,8.5\n"));
    ASSERT_TRUE(text.dense);
    ASSERT_EQ(text.feature_names.size(), 3u);
    write_data_binary(dir.file("d.bin"), text);
    expect_same(read_data_binary(dir.file("d.bin")), text);
}

TEST(DataBinary, NoSamples) {
    TempDir dir;
    RawData empty;
    empty.features = 3;
    write_data_binary(dir.file("e.bin"), empty);
    const RawData back = read_data_binary(dir.file("e.bin"));
    EXPECT_EQ(back.samples(), 0u);
    EXPECT_EQ(back.features, 3u);
}

TEST(DataBinary, HeaderAndCrcMismatchesNameTheFile) {
    TempDir dir;
    const std::string good = good_bytes(dir);
    rotor::testing::expect_header_and_crc_checks([](const std::string& p) { read_data_binary(p); },
                                                 good, "binary Lasso data", 2);
    std::string bad = good;
    bad[60] = 1;
    expect_corrupt(bad, "nonzero reserved bytes");
}

TEST(DataBinary, RowsAreCheckedBehindAGoodCrc) {
    TempDir dir;
    const std::string good = good_bytes(dir);
    // Payload: 4 row offsets (0 2 3 4) at 64, 4 columns (0 2 3 1) at 96, 4 values at 112,
    // 3 targets at 144, names (count 0, bytes 0) at 168. Every patch keeps the CRC right, so the
    // row checks are what catch it.
    const auto patched = [&](std::size_t at, const void* v, std::size_t n) {
        return rotor::testing::patched(good, at, v, n);
    };
    const std::uint32_t col4 = 4;
    expect_corrupt(patched(96 + 4, &col4, 4), "sample 1: column 5 of 4 features");
    const std::uint32_t col0 = 0;
    expect_corrupt(patched(96 + 4, &col0, 4), "sample 1: column 1 after column 1");
    const std::uint64_t beyond = 9;  // beyond nnz = 4: must not be followed
    expect_corrupt(patched(64 + 8, &beyond, 8), "sample 1: row offsets 0 then 9");
    const std::uint64_t last = 3;
    expect_corrupt(patched(64 + 24, &last, 8), "row offsets run from 0 to 3, expected 0 to 4");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    expect_corrupt(patched(112 + 8, &nan, 8), "sample 1: the value of column 3 is not finite");
    expect_corrupt(patched(144 + 16, &nan, 8), "sample 3: the target is not finite");
    const std::uint64_t names = 2;
    expect_corrupt(patched(168, &names, 8), "feature names: 2 ids for a dimension of 4");
    const std::uint32_t dense = 1;  // flags: dense, but rows are not p wide
    expect_corrupt(patched(12, &dense, 4), "sample 1: 2 entries in a dense row of 4 features");
}

TEST(DataBinary, MemoryLimitRefusesFromTheHeader) {
    TempDir dir;
    const std::string path = dir.write("good.bin", good_bytes(dir));
    // 4 entries x 12 + 3 samples x 16 = 96 bytes.
    EXPECT_NO_THROW(read_data_binary(path, core::ReadLimits::for_memory(96, "--max-memory", "96")));
    EXPECT_THROW(read_data_binary(path, core::ReadLimits::for_memory(95, "--max-memory", "95")),
                 Error);
}

TEST(DataBinary, MissingFileIsAnInputError) {
    TempDir dir;
    EXPECT_THROW(read_data_binary(dir.file("none.bin")), InputError);
}

}  // namespace
}  // namespace rotor::lasso
