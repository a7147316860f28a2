// train/lambda_path.h: the λ grid, the folds (deterministic by seed, balanced, stratified) and
// the choice of λ (glmnet's lambda.min and lambda.1se).
#include "train/lambda_path.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/base/error.h"

namespace rotor::train {
namespace {

TEST(LambdaGrid, LogSpacedFromLambdaMaxDownToEps) {
    const std::vector<double> g = lambda_grid(8.0, 5, 1e-2);
    ASSERT_EQ(g.size(), 5U);
    EXPECT_EQ(g.front(), 8.0);
    EXPECT_NEAR(g.back(), 0.08, 1e-15);
    for (std::size_t k = 1; k < g.size(); ++k) EXPECT_NEAR(g[k] / g[k - 1], std::sqrt(0.1), 1e-12);
    EXPECT_EQ(lambda_grid(3.0, 1, 0.5), std::vector<double>{3.0});
    EXPECT_THROW(check_grid(0, 0.1), ConfigError);
    EXPECT_THROW(check_grid(3, 1.0), ConfigError);
    EXPECT_THROW(check_grid(3, 0.0), ConfigError);
    EXPECT_NO_THROW(check_grid(1, 0.5));
}

TEST(AssignFolds, DeterministicBySeedBalancedAndStratified) {
    std::vector<std::int8_t> labels(103, -1);
    for (std::size_t i = 0; i < 31; ++i) labels[i * 3] = 1;  // 31 positives, 72 negatives
    const std::vector<std::uint32_t> a = assign_folds(labels, 5, 7);
    EXPECT_EQ(a, assign_folds(labels, 5, 7));
    EXPECT_NE(a, assign_folds(labels, 5, 8));
    std::vector<int> size(5), pos(5);
    for (std::size_t i = 0; i < a.size(); ++i) {
        ASSERT_LT(a[i], 5U);
        ++size[a[i]];
        pos[a[i]] += labels[i] > 0 ? 1 : 0;
    }
    for (int k = 0; k < 5; ++k) {
        EXPECT_TRUE(size[k] == 20 || size[k] == 21) << size[k];
        EXPECT_TRUE(pos[k] == 6 || pos[k] == 7) << pos[k];
    }
    EXPECT_THROW(assign_folds(labels, 1, 7), ConfigError);
    EXPECT_THROW(assign_folds(std::vector<std::int8_t>(3, 1), 4, 7), ConfigError);
}

// lambda.min is the least mean; lambda.1se the largest λ (first index) within one standard
// error (sd / √folds) of it.
TEST(CrossValidate, ChoosesMinAndOneStandardError) {
    // Three folds, five λ (largest first). Means 1.0, 0.62, 0.6, 0.5, 0.7; at k = 3 the folds
    // are 0.4, 0.5, 0.6: sd 0.1, se 0.1 / √3 = 0.0577, bound 0.5577: k = 2 (0.6) is not within,
    // so lambda.1se is lambda.min.
    std::vector<std::vector<double>> e = {
        {1.0, 0.62, 0.6, 0.4, 0.7}, {1.0, 0.62, 0.6, 0.5, 0.7}, {1.0, 0.62, 0.6, 0.6, 0.7}};
    CrossValidation cv = cross_validate(e);
    EXPECT_EQ(cv.best, 3U);
    EXPECT_EQ(cv.one_se, 3U);
    EXPECT_NEAR(cv.sd[3], 0.1, 1e-12);
    EXPECT_EQ(cv.sd[0], 0.0);
    // Wider folds at k = 3 (0.2, 0.5, 0.8: sd 0.3, bound 0.673): k = 1 (0.62) is the largest λ
    // within.
    e[0][3] = 0.2;
    e[2][3] = 0.8;
    cv = cross_validate(e);
    EXPECT_EQ(cv.best, 3U);
    EXPECT_EQ(cv.one_se, 1U);
}

}  // namespace
}  // namespace rotor::train
