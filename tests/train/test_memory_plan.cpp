// The memory plan: sizes parsed strictly (no overflow), limits and the refusal message.
#include "train/memory_plan.h"

#include <gtest/gtest.h>

#include <string>

#include "comm/inprocess_communicator.h"
#include "core/base/error.h"

namespace rotor::train {
namespace {

TEST(MemoryPlan, ParsesSizes) {
    EXPECT_EQ(parse_bytes("1024", "--max-memory"), 1024u);
    EXPECT_EQ(parse_bytes("512M", "--max-memory"), 512ull << 20);
    EXPECT_EQ(parse_bytes("16g", "--max-memory"), 16ull << 30);
    EXPECT_EQ(parse_bytes("1.5K", "--max-memory"), 1536u);
    EXPECT_EQ(parse_bytes("2T", "--max-memory"), 2ull << 40);
}

TEST(MemoryPlan, RefusesNonSizesAndOverflow) {
    for (const char* bad : {"", "G", "12X", "-5G", "0", "1e400", "nan", "inf", "5 G", "5GB",
                            "99999999999999999999G", "2000000T"}) {
        try {
            parse_bytes(bad, "--max-memory");
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const ConfigError& e) {
            EXPECT_NE(std::string(e.what()).find("--max-memory"), std::string::npos) << e.what();
        }
    }
}

TEST(MemoryPlan, HumanBytes) {
    EXPECT_EQ(human_bytes(3ull << 30), "3.0 GiB");
    EXPECT_EQ(human_bytes(12ull << 20), "12.0 MiB");
    EXPECT_EQ(human_bytes(3072), "3.0 KiB");
    EXPECT_EQ(human_bytes(1024), "1.0 KiB");
    EXPECT_EQ(human_bytes(40), "40 bytes");
    EXPECT_EQ(human_bytes(1), "1 byte");
}

TEST(MemoryPlan, LimitAndCheck) {
    EXPECT_EQ(memory_limit("1G"), 1ull << 30);
    const std::uint64_t ram = physical_memory();
    EXPECT_GT(ram, 0u);
    EXPECT_EQ(memory_limit("", 1), ram / 10 * 9);
    EXPECT_EQ(memory_limit("", 3), ram / 10 * 9 / 3);
    EXPECT_NO_THROW(check_memory(100, 100, "advice"));
    EXPECT_NO_THROW(check_memory(100, 0, "advice"));  // no limit known
    try {
        check_memory(2ull << 30, 1ull << 30, "use fewer topics", true);
        ADD_FAILURE() << "not refused";
    } catch (const ConfigError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("each rank needs about 2.0 GiB"), std::string::npos) << what;
        EXPECT_NE(what.find("limit is 1.0 GiB"), std::string::npos) << what;
        EXPECT_NE(what.find("use fewer topics"), std::string::npos) << what;
    }
}

TEST(MemoryPlan, RanksOnThisHost) {
    std::vector<int> counts(3, 0);
    comm::run_ranks(3, [&](comm::Communicator& c) { counts[c.rank()] = ranks_on_this_host(c); });
    EXPECT_EQ(counts, (std::vector<int>{3, 3, 3}));
}

}  // namespace
}  // namespace rotor::train
