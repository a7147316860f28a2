// apps/logreg/metrics_log.h: records as JSON (integers without a fraction, non-finite as null),
// each flushed at once, a resumed run appending.
#include "apps/logreg/metrics_log.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/base/error.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::logreg {
namespace {

TEST(LogregMetricsLog, JsonOfARecord) {
    EXPECT_EQ(metrics_json({{"iteration", 40}, {"objective", 0.5}, {"gap", NAN}}),
              R"({"iteration":40,"objective":0.5,"gap":null})");
    EXPECT_EQ(metrics_json({{"x", 0.1}}), R"({"x":0.10000000000000001})");  // round-trips
}

TEST(LogregMetricsLog, FlushedAtOnceAndAppendedOnResume) {
    rotor::testing::TempDir dir;
    const std::string path = dir.file("m.jsonl");
    {
        MetricsLog log(path, false);
        log.write({{"iteration", 1}});
        EXPECT_EQ(rotor::testing::read_all(path), "{\"iteration\":1}\n");  // before closing
    }
    {
        MetricsLog log(path, true);
        log.write({{"iteration", 2}});
    }
    EXPECT_EQ(rotor::testing::read_all(path), "{\"iteration\":1}\n{\"iteration\":2}\n");
    {
        MetricsLog log(path, false);  // a new run starts the file over
    }
    EXPECT_EQ(rotor::testing::read_all(path), "");
    EXPECT_THROW(MetricsLog(dir.file("no/such/dir/m.jsonl"), false), SystemError);
}

}  // namespace
}  // namespace rotor::logreg
