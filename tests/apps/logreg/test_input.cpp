// apps/logreg/input.h: the data fingerprint does not depend on the split and tells data apart;
// counts bound what is read; the memory plan grows with the data.
#include "apps/logreg/input.h"
#include "apps/logreg/train_run.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/logreg/examples_binary.h"
#include "tests/core/io/temp_dir.h"
#include "tests/core/logreg/logreg_test_util.h"

namespace rotor::logreg {
namespace {

TEST(LogregInput, FingerprintIsTheSameForAnySplitAndTellsDataApart) {
    const Examples ex = testing::synthetic_examples(101, 30, 5, 9);
    const DataFingerprint whole = fingerprint(ex);
    for (std::size_t parts = 1; parts <= 7; ++parts) {
        std::vector<DataFingerprint> prints;
        for (std::size_t p = 0; p < parts; ++p)
            prints.push_back(fingerprint(share_of(ex, p, parts)));
        EXPECT_EQ(combine(prints), whole) << parts;
    }
    Examples swapped;  // the same examples, two of them swapped
    for (std::size_t i = 0; i < ex.size(); ++i) {
        const std::size_t j = i == 0 ? 1 : i == 1 ? 0 : i;
        swapped.add(ex.labels[j], ex.keys_of(j), ex.values_of(j));
    }
    EXPECT_NE(fingerprint(swapped).hash, whole.hash);
    Examples changed = ex;
    changed.values[7] = std::nextafter(changed.values[7], 10.0);
    EXPECT_NE(fingerprint(changed).hash, whole.hash);
}

TEST(LogregInput, CountsBoundThePartsReadFromTextAndBinary) {
    rotor::testing::TempDir dir;
    const Examples ex = testing::synthetic_examples(90, 30, 5, 4);
    std::string text;
    for (std::size_t i = 0; i < ex.size(); ++i) {
        text += ex.labels[i] > 0 ? "1" : "-1";
        for (std::size_t e = 0; e < ex.keys_of(i).size(); ++e)
            text +=
                " " + std::to_string(ex.keys_of(i)[e]) + ":" + std::to_string(ex.values_of(i)[e]);
        text += "\n";
    }
    const std::string txt = dir.write("t.svm", text);
    const std::string bin = dir.file("t.bin");
    write_examples_binary(bin, ex, false, 30);
    for (const std::string& path : {txt, bin}) {
        std::uint64_t line = 1, examples = 0;
        for (std::size_t w = 0; w < 4; ++w) {
            const PartCount c = count_part(path, w, 4);
            bool hashed = true;
            const Examples part = read_part(path, c, w, 4, line, {}, hashed);
            EXPECT_FALSE(hashed);
            EXPECT_LE(part.size(), c.examples);
            EXPECT_LE(part.nonzeros(), c.nonzeros);
            if (path == bin) {
                EXPECT_EQ(part.size(), c.examples);
                EXPECT_EQ(part.nonzeros(), c.nonzeros);
            }
            line += c.newlines;
            examples += part.size();
        }
        EXPECT_EQ(examples, ex.size()) << path;
    }
}

TEST(LogregInput, DefaultBlocksFollowTheKeysThreadsAndRanks) {
    EXPECT_EQ(auto_blocks(80, 1), 10u);          // about 8 keys a block
    EXPECT_EQ(auto_blocks(3, 1), 1u);            // at least one
    EXPECT_EQ(auto_blocks(171680, 1), 1024u);    // at most 1,024 on one thread and rank
    EXPECT_EQ(auto_blocks(171680, 2), 256u);     // 256 with threads
    EXPECT_EQ(auto_blocks(171680, 1, 3), 256u);  // and with ranks
    EXPECT_EQ(auto_blocks(800, 1, 3), 100u);
}

TEST(LogregInput, MemoryPlanGrowsWithTheData) {
    PlanInputs small;
    small.count.examples = 1000;
    small.count.nonzeros = 10000;
    small.all_keys = 500;
    small.all_examples = 1000;
    PlanInputs big = small;
    big.count.nonzeros *= 10;
    big.count.examples *= 10;
    EXPECT_LT(estimate_memory(small), estimate_memory(big));
    EXPECT_GT(estimate_memory(big) - estimate_memory(small), 28u * 90000);
    PlanInputs server = small;
    server.server = true;
    server.rank0 = true;
    EXPECT_GT(estimate_memory(server), estimate_memory(small));
    // Every thread holds its column slices (24 bytes a key), and with threads one more set
    // over every row.
    PlanInputs threads = small;
    threads.threads = 3;
    EXPECT_EQ(estimate_memory(threads) - estimate_memory(small), 3u * 24 * 500);
}

}  // namespace
}  // namespace rotor::logreg
