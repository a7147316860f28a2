// Tests of the binary form of regression data: round trips (text -> RawData -> binary ->
// RawData, sparse and dense) and corrupt files, each built in the test, rejected with InputError
// naming the file.
#include "core/lasso/data_binary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/lasso/dense_reader.h"
#include "core/lasso/libsvm_reader.h"
#include "core/lasso/slice_design.h"
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

TEST(DataBinary, MemoryLimitRefusesBeforeCopying) {
    TempDir dir;
    const std::string path = dir.write("good.bin", good_bytes(dir));
    // 4 entries x 12 + 3 samples x 16 = 96 bytes.
    EXPECT_NO_THROW(read_data_binary(path, core::ReadLimits::for_memory(96, "--max-memory", "96")));
    EXPECT_THROW(read_data_binary(path, core::ReadLimits::for_memory(95, "--max-memory", "95")),
                 Error);
}

TEST(DataBinary, MappedDataCopiesOnlyTheRowsAskedFor) {
    TempDir dir;
    const RawData text = read_libsvm(
        dir.write("d.svm", "1 1:2 3:-1\n-2 4:0.25\n0.5 2:1\n3\n4 1:1 2:2 3:3 4:4\n-1 3:7\n"));
    const std::string path = dir.file("d.bin");
    write_data_binary(path, text);
    const MappedData m(path);
    EXPECT_EQ(m.samples(), 6u);
    EXPECT_EQ(m.features(), 4u);
    EXPECT_EQ(m.entries(), 9u);
    EXPECT_FALSE(m.dense());
    // The whole arrays where they lie, as a reader copies them.
    EXPECT_TRUE(std::ranges::equal(m.row_offsets(), text.row_offsets));
    EXPECT_TRUE(std::ranges::equal(m.cols(), text.cols));
    EXPECT_TRUE(std::ranges::equal(m.values(), text.values));
    EXPECT_TRUE(std::ranges::equal(m.targets(), text.targets));
    // Every cut, empty slices and the sample without entries included, equals slice_rows.
    for (std::uint32_t lo = 0; lo <= 6; ++lo) {
        for (std::uint32_t hi = lo; hi <= 6; ++hi) {
            SCOPED_TRACE(::testing::Message() << lo << ".." << hi);
            expect_same(m.rows(lo, hi), slice_rows(text, lo, hi));
        }
    }
    // The limit is the slice's memory: samples 5-6 hold 5 entries, 5 x 12 + 2 x 16 = 92 bytes.
    EXPECT_NO_THROW(m.rows(4, 6, core::ReadLimits::for_memory(92, "--max-memory", "92")));
    EXPECT_THROW(m.rows(4, 6, core::ReadLimits::for_memory(91, "--max-memory", "91")), Error);
}

TEST(DataBinary, MappedDataChecksOffsetsWholeAndRowsWhereCopied) {
    TempDir dir;
    const std::string good = good_bytes(dir);  // layout in RowsAreCheckedBehindAGoodCrc
    const double nan = std::numeric_limits<double>::quiet_NaN();
    // A bad value in sample 2 (entry 2): maps, samples 1 and 3 copy, and the row that holds it
    // names it by its number in the file.
    const std::string bad = dir.write("bad.bin", rotor::testing::patched(good, 112 + 16, &nan, 8));
    const MappedData m(bad);
    EXPECT_NO_THROW(m.rows(0, 1));
    EXPECT_NO_THROW(m.rows(2, 3));
    try {
        m.rows(1, 3);
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(bad + ": sample 2: the value of column 4 is not "
                                                   "finite"),
                  std::string::npos)
            << e.what();
    }
    // Offsets past the entries are refused on mapping, whichever rows are asked for later.
    const std::uint64_t beyond = 9;
    const std::string off =
        dir.write("off.bin", rotor::testing::patched(good, 64 + 16, &beyond, 8));
    EXPECT_THROW(MappedData{off}, InputError);
}

TEST(DataBinary, MissingFileIsAnInputError) {
    TempDir dir;
    EXPECT_THROW(read_data_binary(dir.file("none.bin")), InputError);
}

}  // namespace
}  // namespace rotor::lasso
