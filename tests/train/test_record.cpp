// Records and reporters: keys set and replaced in order, the JSON line every model writes, the
// progress line, and a metrics file that appears only when committed.
#include "train/record.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/whole_file.h"
#include "sched/worker_clock.h"
#include "train/reporter.h"

namespace rotor::train {
namespace {

RecordSchema tokens_schema() {
    RecordSchema s;
    s.count_key = "tokens_sampled";
    s.rate_key = "tokens_per_s";
    s.rate_unit = "tok/s";
    s.headline_key = "loglik_per_token";
    s.headline_label = "loglik/token";
    return s;
}

TEST(Record, SetReplacesAndKeepsOrder) {
    Record r;
    r.set("b", 1);
    r.set("a", 2);
    r.set("b", 3);
    ASSERT_EQ(r.values.size(), 2u);
    EXPECT_EQ(r.values[0].first, "b");
    EXPECT_EQ(r.values[0].second, 3);
    EXPECT_EQ(r.get("a"), 2);
    EXPECT_FALSE(r.get("c").has_value());
    r.set_array("x", {1, 2});
    r.set_array("x", {3});
    ASSERT_NE(r.array("x"), nullptr);
    EXPECT_EQ(*r.array("x"), std::vector<double>{3});
    EXPECT_EQ(r.array("y"), nullptr);
}

TEST(Record, FinishAndTimes) {
    Record r;
    r.processed = 50;
    const double compute[] = {1.0, 0.5};
    const double wait[] = {0.0, 0.25};
    r.set_times(sched::summarize_times(compute, wait, 1.0));
    r.finish(100);
    EXPECT_DOUBLE_EQ(r.iteration_s, 1.0);
    EXPECT_DOUBLE_EQ(r.per_s, 50.0);
    EXPECT_DOUBLE_EQ(r.processed_ratio, 0.5);
    EXPECT_DOUBLE_EQ(r.effective_ratio, 0.75);
    ASSERT_NE(r.array("thread_wait_s"), nullptr);
    EXPECT_EQ((*r.array("thread_wait_s"))[1], 0.25);
    Record empty;
    empty.finish(0);
    EXPECT_EQ(empty.per_s, 0.0);
    EXPECT_EQ(empty.processed_ratio, 1.0);
}

TEST(Record, JsonHasCommonAndModelKeys) {
    Record r;
    r.iter = 7;
    r.time_s = 1.5;
    r.processed = 1000;
    r.per_s = 2000;
    r.set("loglik", -12.5);
    r.set("bad", std::numeric_limits<double>::quiet_NaN());
    r.set_array("rank_tokens", {3, 4});
    const auto j = nlohmann::json::parse(record_json(r, tokens_schema()));
    EXPECT_EQ(j.at("iter"), 7);
    EXPECT_EQ(j.at("time_s"), 1.5);
    EXPECT_EQ(j.at("tokens_sampled"), 1000);
    EXPECT_EQ(j.at("tokens_per_s"), 2000);
    EXPECT_EQ(j.at("loglik"), -12.5);
    EXPECT_TRUE(j.at("bad").is_null());
    EXPECT_EQ(j.at("rank_tokens"), nlohmann::json::array({3, 4}));
    for (const char* key :
         {"effective_ratio", "load_cv", "overhead_ratio", "processed_ratio", "iteration_s"})
        EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_FALSE(j.contains("units_per_s"));
}

TEST(Reporter, TerminalLineShowsHeadlineOnlyWhenSet) {
    const std::string path = ::testing::TempDir() + "/terminal.txt";
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    {
        TerminalReporter t(f, tokens_schema());
        t.on_start("a run");
        Record r;
        r.iter = 1;
        r.time_s = 1;
        r.iteration_s = 1;
        r.processed = 2'500'000;
        t.on_iteration(r, 10);
        r.iter = 2;
        r.time_s = 2;
        r.set("loglik_per_token", -8.25);
        t.on_iteration(r, 10);
    }
    std::fclose(f);
    const std::string text = core::read_whole_file(path);
    EXPECT_NE(text.find("rotor: training on a run"), std::string::npos);
    EXPECT_NE(text.find("iter  1/10"), std::string::npos) << text;
    EXPECT_NE(text.find("2.50M tok/s"), std::string::npos) << text;
    EXPECT_NE(text.find("loglik/token -8.2500"), std::string::npos) << text;
    EXPECT_EQ(text.find("loglik/token", text.find("iter  1/10")),
              text.find("loglik/token -8.2500"));
}

/// Runs `records` through a TerminalReporter in `mode` and returns what it printed and its
/// summary.
std::pair<std::string, std::string> terminal_output(TerminalReporter::Mode mode,
                                                    const std::vector<Record>& records) {
    const std::string path = ::testing::TempDir() + "/terminal_mode.txt";
    std::FILE* f = std::fopen(path.c_str(), "w");
    RecordSchema schema = tokens_schema();
    schema.shown = {{"heldout_perplexity", "held-out perplexity"}};
    std::string summary;
    {
        TerminalReporter t(f, schema, mode);
        for (const Record& r : records) t.on_iteration(r, records.back().iter);
        summary = t.summary();
    }
    std::fclose(f);
    return {core::read_whole_file(path), summary};
}

std::vector<Record> four_records() {
    std::vector<Record> rs;
    for (std::uint32_t i = 1; i <= 4; ++i) {
        Record r;
        r.iter = i;
        r.time_s = 2.0 * i;
        r.iteration_s = 2.0;
        r.processed = 1'000'000;
        if (i % 2 == 0) {
            r.set("loglik_per_token", -8.0 - i);
            r.set("heldout_perplexity", 1234.5);
        }
        rs.push_back(r);
    }
    return rs;
}

TEST(Reporter, InPlaceOnATerminalKeepingEvaluationLines) {
    const auto [text, summary] = terminal_output(TerminalReporter::Mode::kInPlace, four_records());
    // Iterations 1 and 3 are overwritten ('\r', no newline); 2 and 4 (evaluations) stay.
    EXPECT_EQ(std::count(text.begin(), text.end(), '\r'), 4) << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
    EXPECT_EQ(text.find("\riter 1/4"), 0u) << text;
    EXPECT_NE(text.find("held-out perplexity 1234"), std::string::npos) << text;
    EXPECT_EQ(text.back(), '\n');
    EXPECT_EQ(summary,
              "4 iterations in 8.0s, 500.0k tok/s, loglik/token -12.0000, held-out perplexity "
              "1234.5000");
}

TEST(Reporter, ALinePerIterationElsewhere) {
    const auto [text, summary] = terminal_output(TerminalReporter::Mode::kLines, four_records());
    EXPECT_EQ(text.find('\r'), std::string::npos) << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4) << text;
    // The same summary whatever the mode; nothing to summarise without iterations.
    EXPECT_EQ(summary.substr(0, 13), "4 iterations ");
    EXPECT_EQ(terminal_output(TerminalReporter::Mode::kLines, {}).second, "");
}

TEST(Reporter, RateIsTheWindowsWorkOverItsSeconds) {
    const std::vector<std::pair<std::uint64_t, double>> window{{100, 1.0}, {300, 1.0}};
    EXPECT_DOUBLE_EQ(TerminalReporter::rate_over(window), 200.0);
    EXPECT_DOUBLE_EQ(TerminalReporter::rate_over({}), 0.0);
}

TEST(Reporter, JsonLinesAreWrittenAtEveryIterationAndTeeForwards) {
    const std::string path = ::testing::TempDir() + "/metrics.jsonl";
    std::filesystem::remove(path);
    {
        JsonLinesReporter j(path, tokens_schema());
        TeeReporter tee;
        tee.add(j);
        Record r;
        for (std::uint32_t i = 1; i <= 3; ++i) {
            r.iter = i;
            tee.on_iteration(r, 3);
            // On disk at once: a run killed now keeps its records.
            std::ifstream now(path);
            const std::string text((std::istreambuf_iterator<char>(now)), {});
            EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), i);
        }
        j.commit();
    }
    std::ifstream in(path);
    std::string line;
    int lines = 0;
    while (std::getline(in, line)) {
        EXPECT_EQ(nlohmann::json::parse(line).at("iter"), ++lines);
    }
    EXPECT_EQ(lines, 3);
}

TEST(Reporter, HumanUnits) {
    EXPECT_EQ(human_duration(4.12), "4.1s");
    EXPECT_EQ(human_duration(185), "3m05s");
    EXPECT_EQ(human_duration(7620), "2h07m");
    EXPECT_EQ(human_rate(1'234'567), "1.23M");
    EXPECT_EQ(human_rate(45'600), "45.6k");
    EXPECT_EQ(human_rate(789), "789");
}

}  // namespace
}  // namespace rotor::train
