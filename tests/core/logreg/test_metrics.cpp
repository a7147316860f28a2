// Tests of the metrics: log-loss, accuracy and AUC (ties count one half) on hand-worked cases.
#include "core/logreg/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace rotor::logreg {
namespace {

TEST(LogregMetrics, HandWorkedValues) {
    const std::vector<double> m{2.0, -1.0, 0.5, 0.5, -3.0};
    const std::vector<std::int8_t> y{1, -1, -1, 1, 1};
    const Metrics r = compute_metrics(m, y);
    EXPECT_EQ(r.examples, 5u);
    EXPECT_DOUBLE_EQ(r.accuracy, 3.0 / 5.0);
    const double expected =
        (std::log1p(std::exp(-2.0)) + std::log1p(std::exp(-1.0)) + std::log1p(std::exp(0.5)) +
         std::log1p(std::exp(-0.5)) + std::log1p(std::exp(3.0))) /
        5;
    EXPECT_NEAR(r.logloss, expected, 1e-14);
    // Positives 2.0, 0.5, −3.0 against negatives −1.0, 0.5: pairs won 2 + 1 + 0, tie 0.5 + ...
    // 2.0 beats both (2); 0.5 beats −1 and ties 0.5 (1.5); −3 beats none (0): 3.5 of 6.
    EXPECT_DOUBLE_EQ(r.auc, 3.5 / 6.0);
}

TEST(LogregMetrics, PerfectRankingAndOneClass) {
    EXPECT_DOUBLE_EQ(
        compute_metrics(std::vector<double>{-1, 1, 2}, std::vector<std::int8_t>{-1, 1, 1}).auc,
        1.0);
    EXPECT_DOUBLE_EQ(
        compute_metrics(std::vector<double>{-1, 1}, std::vector<std::int8_t>{1, 1}).auc, 0.5);
    EXPECT_EQ(compute_metrics({}, {}).examples, 0u);
}

}  // namespace
}  // namespace rotor::logreg
