// train/metrics_file.h: the --metrics file of every model. Records on disk as they are made, a
// resumed run keeping those up to its checkpoint (one record per iteration), a failed write
// that keeps the whole records and is reported at commit.
#include "train/metrics_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/base/error.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::train {
namespace {

std::string rec(int iter, double time_s) {
    return "{\"iter\":" + std::to_string(iter) + ",\"time_s\":" + std::to_string(time_s) + "}";
}

TEST(MetricsFile, RecordsAreOnDiskAtOnceAndANewRunStartsOver) {
    rotor::testing::TempDir dir;
    const std::string path = dir.file("m.jsonl");
    {
        MetricsFile m(path);
        m.append(1, rec(1, 0.5));
        EXPECT_EQ(rotor::testing::read_all(path), rec(1, 0.5) + "\n");  // before closing
        m.append(2, rec(2, 1.0));
        m.commit();
    }
    EXPECT_EQ(rotor::testing::read_all(path), rec(1, 0.5) + "\n" + rec(2, 1.0) + "\n");
    { MetricsFile fresh(path); }
    EXPECT_EQ(rotor::testing::read_all(path), "");
    EXPECT_THROW(MetricsFile(dir.file("no/such/dir/m.jsonl")), SystemError);
}

// A run killed after iteration 5, checkpointed at 3, wrote records 4 and 5 and half of 6: the
// resumed run keeps 1..3 and appends from 4, so the file holds one record per iteration; its
// time_s continues from the last kept record's.
TEST(MetricsFile, AResumedRunKeepsTheRecordsUpToItsCheckpointAndAppends) {
    rotor::testing::TempDir dir;
    std::string killed;
    for (int i = 1; i <= 5; ++i) killed += rec(i, i * 1.5) + "\n";
    const std::string path = dir.write("m.jsonl", killed + "{\"iter\":6,\"ti");
    {
        MetricsFile m(path, 3);
        EXPECT_EQ(m.kept(), 3u);
        EXPECT_DOUBLE_EQ(m.resumed_time_s(), 4.5);
        m.append(4, rec(4, 9));
        m.commit();
    }
    EXPECT_EQ(rotor::testing::read_all(path),
              rec(1, 1.5) + "\n" + rec(2, 3) + "\n" + rec(3, 4.5) + "\n" + rec(4, 9) + "\n");
    // The half-written line alone is dropped when the checkpoint is the last record's.
    dir.write("h.jsonl", killed + "{\"iter\":6,\"ti");
    {
        MetricsFile m(dir.file("h.jsonl"), 5);
        EXPECT_EQ(m.kept(), 5u);
    }
    EXPECT_EQ(rotor::testing::read_all(dir.file("h.jsonl")), killed);
    // A missing file is created; a line that is no record ends what is kept.
    {
        MetricsFile m(dir.file("new.jsonl"), 7);
        EXPECT_EQ(m.kept(), 0u);
        EXPECT_DOUBLE_EQ(m.resumed_time_s(), 0);
    }
    EXPECT_TRUE(std::filesystem::exists(dir.file("new.jsonl")));
    dir.write("g.jsonl", rec(1, 1) + "\nnot json\n" + rec(2, 2) + "\n");
    { MetricsFile m(dir.file("g.jsonl"), 2); }
    EXPECT_EQ(rotor::testing::read_all(dir.file("g.jsonl")), rec(1, 1) + "\n");
}

TEST(MetricsFile, AFailedWriteDoesNotThrowUntilCommitWhichNamesTheFile) {
    MetricsFile full("/dev/full");  // every write fails with ENOSPC
    full.append(1, rec(1, 1));
    EXPECT_TRUE(full.failed());
    full.append(2, rec(2, 2));  // dropped, silently
    try {
        full.commit();
        FAIL() << "commit() did not report the failed write";
    } catch (const SystemError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot write /dev/full: No space left on device"),
                  std::string::npos)
            << e.what();
    }
}

TEST(MetricsFile, ParseMetricsLine) {
    EXPECT_EQ(parse_metrics_line(R"({"iter":4,"time_s":2.5})")->iter, 4u);
    EXPECT_DOUBLE_EQ(parse_metrics_line(R"({"iter":4,"time_s":2.5})")->time_s, 2.5);
    EXPECT_FALSE(parse_metrics_line(R"({"iteration":4})"));
    EXPECT_FALSE(parse_metrics_line(R"({"iter":-1})"));
    EXPECT_FALSE(parse_metrics_line(R"([1])"));
    EXPECT_FALSE(parse_metrics_line(R"({"iter":4)"));
}

}  // namespace
}  // namespace rotor::train
