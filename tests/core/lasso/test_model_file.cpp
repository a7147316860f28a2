// core/lasso/model_file: round trip bit for bit, predictions on raw features, strict reading of
// every corruption (each error names path:line:col), atomic writing.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/base/error.h"
#include "core/lasso/model_file.h"
#include "tests/core/lasso/lasso_test_util.h"

namespace rotor::lasso {
namespace {

Model sample_model() {
    const RawData raw = testing::random_data(30, 5, 1.0, 2, 3);
    const Design d = build_design(raw);
    const std::vector<double> b{0.25, 0, -1.0 / 3, 0, 1e-300};
    Model m = Model::from_standardized(b, d.standardization());
    m.samples = 30;
    m.lambda = 0.125;
    m.schedule = "strads";
    m.iterations = 17;
    m.objective = 0.1 + 0.2;
    m.relative_gap = 3e-9;
    m.feature_names = {"a", "b", "", "d e", "f"};
    return m;
}

std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("rotor_lasso_" + name)).string();
}

TEST(LassoModelFile, RoundTripsBitForBit) {
    const Model m = sample_model();
    const std::string path = temp_path("model.txt");
    write_model(path, m);
    const Model r = read_model(path);
    EXPECT_EQ(r.features, 5u);
    EXPECT_EQ(r.samples, 30u);
    EXPECT_EQ(r.lambda, m.lambda);
    EXPECT_EQ(r.schedule, "strads");
    EXPECT_EQ(r.iterations, 17u);
    EXPECT_EQ(r.objective, m.objective);
    EXPECT_EQ(r.beta, m.beta);
    EXPECT_EQ(r.intercept, m.intercept);
    EXPECT_EQ(r.standardization.means, m.standardization.means);
    EXPECT_EQ(r.standardization.scales, m.standardization.scales);
    EXPECT_EQ(r.standardization.y_scale, m.standardization.y_scale);
    EXPECT_EQ(r.feature_names, m.feature_names);
    EXPECT_EQ(r.nonzeros(), 3u);
    EXPECT_EQ(model_text(r), model_text(m));
    std::filesystem::remove(path);
}

TEST(LassoModelFile, PredictsOnRawFeatures) {
    const RawData raw = testing::random_data(30, 5, 1.0, 2, 3);
    const Design d = build_design(raw);
    const std::vector<double> b{0.25, 0, -1.0 / 3, 0, 0.5};
    const Model m = Model::from_standardized(b, d.standardization());
    const std::vector<double> z = testing::dense_z(d);
    const Standardization& st = d.standardization();
    for (std::uint32_t i = 0; i < raw.samples(); ++i) {
        double want = 0;  // ŷ = ȳ + σ_y Σ z_ij b_j
        for (std::uint32_t j = 0; j < 5; ++j) want += z[i * 5 + j] * b[j];
        want = st.y_mean + st.y_scale * want;
        const auto e0 = static_cast<std::ptrdiff_t>(raw.row_offsets[i]);
        const auto n = static_cast<std::size_t>(raw.row_offsets[i + 1] - raw.row_offsets[i]);
        const double got = m.predict({raw.cols.data() + e0, n}, {raw.values.data() + e0, n});
        EXPECT_NEAR(got, want, 1e-12 * (1 + std::fabs(want))) << i;
    }
    // An unseen feature is ignored.
    const std::vector<std::uint32_t> c{7};
    const std::vector<double> v{100};
    EXPECT_EQ(m.predict(c, v), m.intercept);
}

/// Expects parse_model(text) to throw InputError whose message has `where` and `what`.
void expect_bad(const std::string& text, const std::string& where, const std::string& what) {
    try {
        parse_model(text, "m.txt");
        ADD_FAILURE() << "accepted: " << where << " " << what;
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
    const std::size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
}

TEST(LassoModelFile, RejectsEveryCorruption) {
    const std::string good = model_text(sample_model());
    EXPECT_NO_THROW(parse_model(good, "m.txt"));
    expect_bad("hello\n", "m.txt:1:1", "not a rotor Lasso model");
    expect_bad(replace(good, "version\t1", "version\t2"), "m.txt:2:9", "unsupported version");
    expect_bad(replace(good, "lambda\t0.125", "lambda\t0.126"), "m.txt:", "CRC-32 mismatch");
    expect_bad(replace(good, "lambda\t0.125", "lambda\tx"), "m.txt:5:8", "not a finite number");
    expect_bad(replace(good, "samples", "sample"), "m.txt:4:1", "expected 'samples'");
    expect_bad(replace(good, "intercept\t1", "intercept\t2"), "m.txt:10:11", "must be 0 or 1");
    expect_bad(replace(good, "feature\t2\t", "feature\t3\t"), "m.txt:17:9", "expected feature 2");
    expect_bad(good.substr(0, good.size() - 1), "m.txt:20:1", "no newline");
    expect_bad(good.substr(0, good.find("crc32")), "m.txt:20:1", "the file ends");
    expect_bad(good + "x\n", "m.txt:20:1", "text after the crc32 line");
    EXPECT_THROW(read_model(temp_path("does_not_exist")), InputError);
}

TEST(LassoModelFile, WritesAtomicallyAndRefusesBadModels) {
    Model m = sample_model();
    m.beta[1] = std::nan("");
    const std::string path = temp_path("bad_model.txt");
    std::filesystem::remove(path);
    EXPECT_THROW(write_model(path, m), InputError);
    EXPECT_FALSE(std::filesystem::exists(path));
    m = sample_model();
    m.feature_names[0] = "tab\there";
    EXPECT_THROW(write_model(path, m), InputError);
    EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace rotor::lasso
