// The trace writer: valid trace-event JSON with one track per worker and one slice per run.
#include "train/trace.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rotor::train {
namespace {

nlohmann::json read_json(const std::string& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

TEST(Trace, OneProcessWithWorkersAndRuns) {
    const std::string path = ::testing::TempDir() + "/trace.json";
    const std::vector<BlockRun> runs = {{1, 0, 2, 3, 0.5, 0.75}, {1, 1, 0, 1, 0.5, 1.0}};
    write_chrome_trace(path, runs, 2, "rotor test train");
    const auto j = read_json(path);
    int slices = 0, threads = 0;
    for (const auto& e : j.at("traceEvents")) {
        if (e.at("ph") == "X") {
            ++slices;
            EXPECT_EQ(e.at("pid"), 0);
            if (e.at("tid") == 0) {
                EXPECT_EQ(e.at("name"), "block (2,3)");
                EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), 0.5e6);
                EXPECT_DOUBLE_EQ(e.at("dur").get<double>(), 0.25e6);
            }
        } else if (e.at("name") == "thread_name") {
            ++threads;
        } else if (e.at("name") == "process_name") {
            EXPECT_EQ(e.at("args").at("name"), "rotor test train");
        }
    }
    EXPECT_EQ(slices, 2);
    EXPECT_EQ(threads, 2);
}

TEST(Trace, OneProcessPerRank) {
    const std::string path = ::testing::TempDir() + "/trace_ranks.json";
    const std::vector<std::vector<BlockRun>> by_rank = {{{1, 0, 0, 0, 0, 1}},
                                                        {{1, 0, 0, 1, 0, 1}, {2, 0, 1, 1, 1, 2}}};
    write_chrome_trace_ranks(path, by_rank, 1);
    const auto j = read_json(path);
    std::vector<int> per_rank(2, 0);
    for (const auto& e : j.at("traceEvents"))
        if (e.at("ph") == "X") ++per_rank.at(e.at("pid").get<int>());
    EXPECT_EQ(per_rank, (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace rotor::train
