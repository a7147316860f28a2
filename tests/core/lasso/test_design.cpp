// Tests of the design matrix: CSR -> CSC, glmnet's standardisation (sparse: scaled, centring in
// the shifts; dense: centred and scaled; no intercept: nothing centred), constant columns, the
// raw-feature model, and the per-part CSC of split_design().
#include "core/lasso/design.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/base/error.h"
#include "tests/core/lasso/lasso_test_util.h"

namespace rotor::lasso {
namespace {

using testing::dense_z;
using testing::random_data;

void expect_standardised(const Design& d, bool centred) {
    const std::uint32_t n = d.samples(), p = d.features();
    const std::vector<double> z = dense_z(d);
    for (std::uint32_t j = 0; j < p; ++j) {
        double s = 0, ss = 0;
        for (std::uint32_t i = 0; i < n; ++i) {
            s += z[std::size_t{i} * p + j];
            ss += z[std::size_t{i} * p + j] * z[std::size_t{i} * p + j];
        }
        if (centred) {
            EXPECT_NEAR(s / n, 0, 1e-12) << j;
        }
        EXPECT_NEAR(ss / n, 1, 1e-12) << j;
        EXPECT_NEAR(d.sq_norms()[j], ss / n, 1e-14) << j;
    }
    double ys = 0, yss = 0;
    for (double y : d.targets()) ys += y, yss += y * y;
    if (centred) {
        EXPECT_NEAR(ys / n, 0, 1e-12);
    }
    EXPECT_NEAR(yss / n, 1, 1e-12);
    EXPECT_NEAR(d.target_sum(), ys, 1e-12);
}

TEST(Design, SparseIsScaledWithoutCentringInStorage) {
    const RawData raw = random_data(50, 8, 0.3, 3, 1);
    const Design d = build_design(raw);
    EXPECT_FALSE(d.dense());
    EXPECT_EQ(d.columns().nnz(), raw.values.size());  // no fill-in: zeros stay implicit
    expect_standardised(d, true);
    bool some_shift = false;
    for (double c : d.shifts()) some_shift |= c != 0;
    EXPECT_TRUE(some_shift);
}

TEST(Design, DenseIsCentredInStorage) {
    const Design d = build_design(random_data(40, 5, 1, 2, 2));
    EXPECT_TRUE(d.dense());
    for (double c : d.shifts()) EXPECT_EQ(c, 0);
    expect_standardised(d, true);
}

TEST(Design, NoInterceptCentresNothing) {
    StandardizeOptions o;
    o.intercept = false;
    const Design d = build_design(random_data(40, 5, 0.5, 2, 3), o);
    for (double c : d.shifts()) EXPECT_EQ(c, 0);
    EXPECT_EQ(d.standardization().y_mean, 0);
    for (double m : d.standardization().means) EXPECT_EQ(m, 0);
    expect_standardised(d, false);
}

TEST(Design, ConstantColumnsGetNoCoordinate) {
    RawData raw;
    raw.features = 3;
    for (int i = 0; i < 4; ++i) {
        const std::vector<std::uint32_t> c{0, 1};
        const std::vector<double> v{0.1, static_cast<double>(i)};
        raw.add_sample(i * 2.0, c, v);
    }
    const Design d = build_design(raw);  // column 0 constant 0.1, column 2 all zero
    EXPECT_EQ(d.sq_norms()[0], 0);
    EXPECT_NEAR(d.sq_norms()[1], 1, 1e-15);
    EXPECT_EQ(d.sq_norms()[2], 0);
    EXPECT_EQ(d.standardization().scales[0], 1);
    StandardizeOptions o;
    o.intercept = false;  // uncentred, a constant nonzero column is a real feature
    EXPECT_NEAR(build_design(raw, o).sq_norms()[0], 1, 1e-15);
}

TEST(Design, RawModelPredictsLikeTheStandardisedOne) {
    for (const double density : {0.4, 1.0}) {
        const RawData raw = random_data(30, 6, density, 2, 4);
        const Design d = build_design(raw);
        const Standardization& st = d.standardization();
        const std::vector<double> b{0.3, 0, -1.2, 0.05, 0, 2};
        const std::vector<double> z = dense_z(d);
        const double b0 = st.raw_intercept(b);
        for (std::uint32_t i = 0; i < raw.samples(); ++i) {
            double std_pred = 0, raw_pred = b0;
            for (std::uint32_t j = 0; j < 6; ++j) std_pred += z[i * 6 + j] * b[j];
            for (std::uint64_t e = raw.row_offsets[i]; e < raw.row_offsets[i + 1]; ++e) {
                raw_pred += raw.values[e] * st.raw_coefficient(raw.cols[e], b[raw.cols[e]]);
            }
            EXPECT_NEAR(raw_pred, st.y_mean + st.y_scale * std_pred, 1e-12) << i;
        }
    }
}

TEST(Design, PartsHoldTheirRowsByColumn) {
    const Design d = build_design(random_data(23, 7, 0.4, 2, 5));
    const std::vector<DesignPart> parts = split_design(d, 3);
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[0].rows(), 8u);
    EXPECT_EQ(parts[1].rows(), 8u);
    EXPECT_EQ(parts[2].rows(), 7u);
    const ColumnsView x = d.columns();
    for (std::uint32_t j = 0; j < d.features(); ++j) {
        std::vector<std::pair<std::uint32_t, double>> whole, joined;
        for (std::uint64_t e = x.offsets[j]; e < x.offsets[j + 1]; ++e) {
            whole.emplace_back(x.rows[e], x.values[e]);
        }
        for (const DesignPart& part : parts) {
            const ColumnsView px = part.columns();
            for (std::uint64_t e = px.offsets[j]; e < px.offsets[j + 1]; ++e) {
                EXPECT_LT(px.rows[e], part.rows());
                joined.emplace_back(px.rows[e] + part.row_begin(), px.values[e]);
            }
        }
        EXPECT_EQ(whole, joined) << j;
    }
    EXPECT_EQ(parts[2].targets()[0], d.targets()[16]);
}

TEST(Design, NoSamplesOrNonFiniteValuesAreInputErrors) {
    RawData raw;
    raw.features = 1;
    EXPECT_THROW(build_design(raw), InputError);
    const std::vector<std::uint32_t> c{0};
    const std::vector<double> v{INFINITY};
    raw.add_sample(1, c, v);
    EXPECT_THROW(build_design(raw), InputError);
}

}  // namespace
}  // namespace rotor::lasso
