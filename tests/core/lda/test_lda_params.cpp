#include "core/lda/lda_params.h"

#include <gtest/gtest.h>

#include <string>

#include "core/base/error.h"

namespace rotor::lda {
namespace {

std::string key_of(const LdaParams& p) {
    try {
        p.validate();
    } catch (const ConfigError& e) {
        return e.key();
    }
    return "";
}

TEST(LdaParams, DefaultsAreValidAndAlphaDefaultsTo50OverK) {
    LdaParams p;
    EXPECT_NO_THROW(p.validate());
    EXPECT_DOUBLE_EQ(p.resolved_alpha(), 0.5);
    p.num_topics = 1000;
    EXPECT_DOUBLE_EQ(p.resolved_alpha(), 0.05);
    p.alpha = 0.3;
    EXPECT_DOUBLE_EQ(p.resolved_alpha(), 0.3);
    EXPECT_EQ(p.topic_alphas().size(), 1000u);
    EXPECT_TRUE(p.symmetric_alpha());
}

TEST(LdaParams, ValidateNamesTheFlag) {
    LdaParams p;
    p.num_topics = 0;
    EXPECT_EQ(key_of(p), "--topics");
    p = LdaParams{};
    p.num_topics = kMaxTopics + 1;
    EXPECT_EQ(key_of(p), "--topics");
    p = LdaParams{};
    p.beta = 0;
    EXPECT_EQ(key_of(p), "--beta");
    p.beta = -1;
    EXPECT_EQ(key_of(p), "--beta");
    p = LdaParams{};
    p.alpha = std::numeric_limits<double>::infinity();
    EXPECT_EQ(key_of(p), "--alpha");
    p = LdaParams{};
    p.num_topics = 3;
    p.alpha_per_topic = {0.1, 0.2};
    EXPECT_EQ(key_of(p), "--alpha");
    p.alpha_per_topic = {0.1, 0.2, 0.0};
    EXPECT_EQ(key_of(p), "--alpha");
    p.alpha_per_topic = {0.1, 0.2, 0.3};
    EXPECT_EQ(key_of(p), "");
    EXPECT_FALSE(p.symmetric_alpha());
    EXPECT_DOUBLE_EQ(p.topic_alphas()[2], 0.3);
}

TEST(LdaParams, WithAlphasKeepsEqualValuesSymmetric) {
    LdaParams p;
    p.num_topics = 3;
    p.beta = 0.05;
    const LdaParams sym = p.with_alphas({0.4, 0.4, 0.4});
    EXPECT_TRUE(sym.symmetric_alpha());
    EXPECT_DOUBLE_EQ(sym.resolved_alpha(), 0.4);
    EXPECT_DOUBLE_EQ(sym.beta, 0.05);
    const LdaParams asym = sym.with_alphas({0.1, 0.2, 0.3});
    EXPECT_FALSE(asym.symmetric_alpha());
    EXPECT_EQ(asym.topic_alphas(), (std::vector<double>{0.1, 0.2, 0.3}));
    EXPECT_TRUE(asym.with_alphas({0.2, 0.2, 0.2}).symmetric_alpha());
}

}  // namespace
}  // namespace rotor::lda
