#include "core/mf/objective.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/base/error.h"
#include "tests/core/mf/mf_test_util.h"

namespace rotor::mf {
namespace {

// 2 users x 2 items, K = 1: a_00 = 3, a_01 = 5, a_11 = 2; W = (1, 2), H = (0.5, 1),
// b = (0.1, -0.2), c = (0.3, 0), μ = 3.
struct Tiny {
    testing::Csr m;
    Factors w{2, 1}, h{2, 1};
    std::vector<float> b{0.1f, -0.2f}, c{0.3f, 0.0f};
    double mu = 3;

    Tiny() {
        m.cols = 2;
        m.add(0, 3.0f);
        m.add(1, 5.0f);
        m.end_row();
        m.add(1, 2.0f);
        m.end_row();
        w.at(0, 0) = 1;
        w.at(1, 0) = 2;
        h.at(0, 0) = 0.5f;
        h.at(1, 0) = 1;
    }
};

TEST(Objective, ResidualsByHand) {
    Tiny t;
    std::vector<float> r(3);
    compute_residuals(t.m.view(), t.w, t.b, t.h, t.c, t.mu, r);
    // predictions 3.9, 4.1, 4.8
    EXPECT_NEAR(r[0], -0.9, 1e-6);
    EXPECT_NEAR(r[1], 0.9, 1e-6);
    EXPECT_NEAR(r[2], -2.8, 1e-6);
    EXPECT_NEAR(squared_error(r), 9.46, 1e-5);
    EXPECT_NEAR(rmse(squared_error(r), 3), std::sqrt(9.46 / 3), 1e-6);
    EXPECT_NEAR(train_rmse(r), std::sqrt(9.46 / 3), 1e-6);
    EXPECT_EQ(rmse(0, 0), 0.0);
}

TEST(Objective, BothLambdaFormsByHand) {
    Tiny t;
    std::vector<float> r(3);
    compute_residuals(t.m.view(), t.w, t.b, t.h, t.c, t.mu, r);
    ObjectiveParams p;
    p.lambda = 0.1;
    p.lambda_bias = 0.5;
    p.form = LambdaForm::kPlain;
    // 9.46 + 0.1 (1 + 4 + 0.25 + 1) + 0.5 (0.01 + 0.04 + 0.09 + 0)
    EXPECT_NEAR(objective(t.m.view(), r, t.w, t.b, t.h, t.c, p), 10.155, 1e-5);
    p.form = LambdaForm::kWeighted;
    // |Ω_i| = (2, 1), |Ω_j| = (1, 2): 9.46 + 0.1 (2 + 4 + 0.25 + 2) + 0.5 (0.02 + 0.04 + 0.09)
    EXPECT_NEAR(objective(t.m.view(), r, t.w, t.b, t.h, t.c, p), 10.36, 1e-5);
}

TEST(Objective, WithoutBiasIsTheStradsObjective) {
    Tiny t;
    std::vector<float> r(3);
    compute_residuals(t.m.view(), t.w, {}, t.h, {}, 0.0, r);  // predictions 0.5, 1, 2
    ObjectiveParams p;
    p.lambda = 0.1;
    p.form = LambdaForm::kPlain;
    p.bias = false;
    // 2.5² + 4² + 0² + 0.1 (‖W‖² + ‖H‖²); the biases, even if given, are not penalised
    EXPECT_NEAR(objective(t.m.view(), r, t.w, {}, t.h, {}, p), 22.875, 1e-5);
    EXPECT_NEAR(penalty(t.w, t.b, {}, p), 0.5, 1e-6);
}

TEST(Objective, Counts) {
    Tiny t;
    EXPECT_EQ(row_counts(t.m.view()), (std::vector<std::uint64_t>{2, 1}));
    std::vector<std::uint64_t> cols(2, 0);
    add_column_counts(t.m.view(), cols);
    add_column_counts(t.m.view(), cols);
    EXPECT_EQ(cols, (std::vector<std::uint64_t>{2, 4}));
}

TEST(Objective, PredictsUnseenUsersAndItemsFromTheKnownBias) {
    Tiny t;
    const ModelView model{t.mu, &t.w, &t.h, t.b, t.c};
    EXPECT_NEAR(model.predict(1, 1), 3 - 0.2 + 0 + 2, 1e-6);
    EXPECT_NEAR(model.predict(7, 0), 3 + 0.3, 1e-6);  // unseen user: μ + c_j
    EXPECT_NEAR(model.predict(0, 9), 3 + 0.1, 1e-6);  // unseen item: μ + b_i
    EXPECT_NEAR(model.predict(7, 9), 3, 1e-12);       // neither: μ
    const ModelView no_bias{0, &t.w, &t.h, {}, {}};
    EXPECT_NEAR(no_bias.predict(1, 0), 1, 1e-6);
    EXPECT_EQ(no_bias.predict(5, 0), 0);
    EXPECT_EQ(ModelView{}.predict(0, 0), 0);
}

TEST(Objective, EvaluatesRmseAndMae) {
    Tiny t;
    const std::vector<std::uint32_t> users{0, 1, 9}, items{0, 1, 9};
    const std::vector<float> values{4.0f, 5.0f, 2.0f};
    // predictions 3.9, 4.8, 3: errors 0.1, 0.2, -1
    const ErrorStats s = evaluate(users, items, values, ModelView{t.mu, &t.w, &t.h, t.b, t.c});
    EXPECT_EQ(s.count, 3u);
    EXPECT_NEAR(s.squared_sum, 0.01 + 0.04 + 1, 1e-5);
    EXPECT_NEAR(s.rmse, std::sqrt(1.05 / 3), 1e-6);
    EXPECT_NEAR(s.mae, 1.3 / 3, 1e-6);
    const ErrorStats f =
        evaluate(users, items, values, [](std::uint32_t u, std::uint32_t) { return 2.0 * u; });
    EXPECT_NEAR(f.mae, (4 + 3 + 16) / 3.0, 1e-12);
    EXPECT_EQ(evaluate({}, {}, {}, ModelView{}).rmse, 0.0);
}

TEST(Objective, RatingSumDoesNotDependOnTheSplit) {
    const testing::Csr m = testing::random_csr(50, 40, 0.3, 3);
    const core::ExactSum all = rating_sum(m.values);
    const testing::Split split = testing::split_rows(m, 3, 4);
    core::ExactSum parts;
    for (const testing::Csr& part : split.parts) parts.add(rating_sum(part.values));
    EXPECT_TRUE(parts == all);
    double plain = 0;
    for (float v : m.values) plain += v;
    EXPECT_NEAR(all.value(), plain, 1e-9 * plain);
}

TEST(Objective, ValidatesLambdas) {
    ObjectiveParams p;
    EXPECT_NO_THROW(p.validate());
    p.lambda = -0.1;
    EXPECT_THROW(p.validate(), ConfigError);
    p.lambda = 0;
    p.lambda_bias = INFINITY;
    try {
        p.validate();
        FAIL() << "no throw";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "--lambda-bias");
    }
}

}  // namespace
}  // namespace rotor::mf
