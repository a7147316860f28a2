// The iteration loop on a toy driver: evaluation cadence, sync points, hook order, spans.
#include "train/loop.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rotor::train {
namespace {

/// Counts iterations; records what the loop asked of it.
struct CountingDriver {
    std::uint32_t done = 0;
    std::vector<std::uint32_t> evaluated;
    std::uint32_t iterations_done() const { return done; }
    Record iterate() {
        Record r;
        r.iter = ++done;
        r.processed = 10;
        return r;
    }
    void evaluate_record(Record& r) {
        evaluated.push_back(r.iter);
        r.set("score", r.iter * 2.0);
    }
};

/// The same, able to run spans; records each span's length.
struct SpanCountingDriver : CountingDriver {
    std::vector<std::uint32_t> spans;
    Record iterate_span(std::uint32_t n, const std::function<void(Record&)>& on_sweep) {
        spans.push_back(n);
        for (std::uint32_t i = 1; i < n; ++i) {
            Record r = iterate();
            on_sweep(r);
        }
        return iterate();
    }
};

struct Collect : Reporter {
    std::vector<std::pair<std::uint32_t, bool>> calls;  // iter, has score
    void on_iteration(const Record& r, std::uint32_t) override {
        calls.emplace_back(r.iter, r.has("score"));
    }
};

/// A span driver with a stopping rule: converged once an evaluation scores `stop_at` or more.
struct StoppingSpanDriver : SpanCountingDriver {
    double stop_at = 0;
    bool converged_ = false;
    void evaluate_record(Record& r) {
        SpanCountingDriver::evaluate_record(r);
        converged_ = r.get("score").value_or(0) >= stop_at;
    }
    bool converged() const { return converged_; }
};

static_assert(Driver<CountingDriver>);
static_assert(StoppingDriver<StoppingSpanDriver>);
static_assert(!StoppingDriver<SpanCountingDriver>);
static_assert(!SpanDriver<CountingDriver>);
static_assert(SpanDriver<SpanCountingDriver>);

TEST(Loop, EvaluatesEveryNAndAtTheLast) {
    CountingDriver d;
    Collect c;
    std::vector<std::uint32_t> evaluated_hook;
    Hooks hooks;
    hooks.on_evaluate = [&](Record& r) {
        EXPECT_TRUE(r.has("score"));  // after the driver's own evaluation
        evaluated_hook.push_back(r.iter);
    };
    run_iterations(d, {.last = 7, .eval_every = 3}, c, hooks);
    EXPECT_EQ(d.done, 7u);
    EXPECT_EQ(d.evaluated, (std::vector<std::uint32_t>{3, 6, 7}));
    EXPECT_EQ(evaluated_hook, d.evaluated);
    ASSERT_EQ(c.calls.size(), 7u);
    for (std::uint32_t i = 0; i < 7; ++i) EXPECT_EQ(c.calls[i].first, i + 1);
    EXPECT_TRUE(c.calls[2].second);
    EXPECT_FALSE(c.calls[3].second);
}

TEST(Loop, SpansEndAtSyncPointsAndHooksRunInOrder) {
    SpanCountingDriver d;
    Collect c;
    std::vector<std::uint32_t> after;
    Hooks hooks;
    hooks.after_iteration = [&](const Record& r) { after.push_back(r.iter); };
    hooks.needs_state = [](std::uint32_t i) { return i == 5; };
    run_iterations(d, {.last = 12, .eval_every = 4}, c, hooks);
    // Sync points: 4 (eval), 5 (hook needs state), 8 (eval), 12 (last).
    EXPECT_EQ(d.spans, (std::vector<std::uint32_t>{4, 1, 3, 4}));
    EXPECT_EQ(d.evaluated, (std::vector<std::uint32_t>{4, 8, 12}));
    ASSERT_EQ(after.size(), 12u);
    for (std::uint32_t i = 0; i < 12; ++i) EXPECT_EQ(after[i], i + 1);
}

TEST(Loop, NoReportWhenOffAndNothingPastLast) {
    SpanCountingDriver d;
    d.done = 5;
    Collect c;
    run_iterations(d, {.last = 5, .eval_every = 1, .report = true}, c, {});
    EXPECT_TRUE(c.calls.empty());
    EXPECT_TRUE(d.spans.empty());
    run_iterations(d, {.last = 6, .eval_every = 0, .report = false}, c, {});
    EXPECT_TRUE(c.calls.empty());
    EXPECT_EQ(d.evaluated, (std::vector<std::uint32_t>{6}));
}

TEST(Loop, AStoppingDriverEndsAtTheEvaluationThatConverged) {
    StoppingSpanDriver d;
    d.stop_at = 12;  // the score at iteration 6, an evaluation iteration
    Collect c;
    std::vector<std::uint32_t> before;
    Hooks hooks;
    hooks.before_report = [&](Record& r) {
        before.push_back(r.iter);
        r.set("lambda", 0.5);
    };
    const Record last = run_iterations(d, {.last = 20, .eval_every = 3}, c, hooks);
    EXPECT_EQ(d.done, 6u);
    EXPECT_TRUE(d.spans.empty());  // the rule is looked at after every iteration: no spans
    EXPECT_EQ(d.evaluated, (std::vector<std::uint32_t>{3, 6}));
    EXPECT_EQ(before, (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(last.iter, 6u);
    EXPECT_EQ(last.get("score"), std::optional<double>(12.0));
    EXPECT_EQ(last.get("lambda"), std::optional<double>(0.5));
    ASSERT_EQ(c.calls.size(), 6u);
    EXPECT_TRUE(c.calls.back().second);
    // Converged already: nothing runs, the record returned is empty.
    EXPECT_EQ(run_iterations(d, {.last = 20, .eval_every = 3}, c, hooks).iter, 0u);
    EXPECT_EQ(d.done, 6u);
}

TEST(Loop, NextSyncPoint) {
    Hooks none;
    EXPECT_EQ(next_sync_point(0, 10, 0, none), 10u);
    EXPECT_EQ(next_sync_point(3, 10, 5, none), 5u);
    Hooks every;
    every.after_iteration = [](const Record&) {};
    EXPECT_EQ(next_sync_point(3, 10, 0, every), 4u);  // no needs_state: every iteration
}

}  // namespace
}  // namespace rotor::train
