// apps/logreg/metrics_log.h: records as JSON (integers without a fraction, non-finite as null).
// The file they go to is train::MetricsFile's (tests/train/test_metrics_file.cpp).
#include "apps/logreg/metrics_log.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace rotor::logreg {
namespace {

TEST(LogregMetricsLog, JsonOfARecord) {
    EXPECT_EQ(metrics_json({{"iter", 40}, {"objective", 0.5}, {"gap", NAN}}),
              R"({"iter":40,"objective":0.5,"gap":null})");
    EXPECT_EQ(metrics_json({{"x", 0.1}}), R"({"x":0.10000000000000001})");  // round-trips
}

}  // namespace
}  // namespace rotor::logreg
