// Tests of the logistic regression model file: a bitwise round trip, margins, and malformed files
// refused with path:line:col.
#include "core/logreg/model_file.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/error.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::logreg {
namespace {

using rotor::testing::TempDir;

TEST(LogregModelFile, RoundTripsBitwise) {
    Model m;
    m.lambda = 0.1;
    m.hashed = true;
    m.iterations = 42;
    m.objective = 1234.5678901234567;
    m.intercept = -0.3;
    m.keys = {3, 17, 18446744073709551614ULL};
    m.weights = {1.0 / 3.0, -2e-300, 5.5};
    TempDir dir;
    const std::string path = (dir.path() / "m.txt").string();
    write_model(path, m);
    const Model r = read_model(path);
    EXPECT_EQ(r.lambda, m.lambda);
    EXPECT_TRUE(r.hashed);
    EXPECT_EQ(r.iterations, 42u);
    EXPECT_EQ(r.objective, m.objective);
    EXPECT_EQ(r.intercept, m.intercept);
    EXPECT_EQ(r.keys, m.keys);
    EXPECT_EQ(r.weights, m.weights);
    const std::vector<std::uint64_t> k{2, 17, 18446744073709551614ULL};
    const std::vector<double> v{10, 3, 2};
    EXPECT_DOUBLE_EQ(r.margin(k, v), -0.3 - 6e-300 + 11);
}

void expect_bad(const std::string& text, const std::string& where, const std::string& what) {
    TempDir dir;
    const std::string path = dir.write("m.txt", text);
    try {
        read_model(path);
        FAIL() << "accepted: " << text;
    } catch (const InputError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(path + ":" + where + ": "), std::string::npos) << msg;
        EXPECT_NE(msg.find(what), std::string::npos) << msg;
    }
}

TEST(LogregModelFile, MalformedFilesNamePathLineAndColumn) {
    const std::string head =
        "rotor-logreg-model 1\nlambda 1\nhashed 0\niterations 3\nobjective 2\nintercept 0\n";
    expect_bad("rotor-lasso-model 1\n", "1:1", "not a \"rotor-logreg-model 2\" file");
    // Version 2 ends with its crc32 line; version 1 (below) has none.
    expect_bad("rotor-logreg-model 2\nlambda 1\n", "2:1", "the last line is not the crc32 line");
    expect_bad("rotor-logreg-model 1\nlambda x\n", "2:8", "\"x\" is not a finite number");
    expect_bad("rotor-logreg-model 1\nlambda 1\nhashed 2\n", "3:8", "hashed is 0 or 1");
    expect_bad(head + "weights 2\n1\t0.5\n", "8:1", "missing weight lines");
    expect_bad(head + "weights 2\n5\t0.5\n5\t1\n", "9:1", "keys do not increase");
    expect_bad(head + "weights 1\n5\t0\n", "8:3", "a zero weight");
    expect_bad(head + "weights 1\n5 0.5\n", "8:1", "expected \"<key>\\t<weight>\"");
    expect_bad(head + "weights 0\n1\t2\n", "8:1", "more lines than the weights announced");
}

}  // namespace
}  // namespace rotor::logreg
