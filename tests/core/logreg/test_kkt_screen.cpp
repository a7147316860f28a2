// The KKT filter's rule (core/logreg/kkt_screen.h): it skips only zero weights whose gradient
// is at most λ − δ in size, never the intercept, nothing on refresh passes; and a skipped key
// loses nothing: for |g| ≤ λ the proximal step keeps w = 0 exactly.
#include "core/logreg/kkt_screen.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::logreg {
namespace {

TEST(KktScreen, ProxKeepsZeroWhenTheGradientIsBelowLambda) {
    Rng rng(7);
    for (int i = 0; i < 100000; ++i) {
        const double lambda =
            std::ldexp(rng.uniform() + 0.01, static_cast<int>(rng.below(20)) - 10);
        // |g| <= lambda, the boundary included.
        const double g =
            i % 10 == 0 ? (i % 20 == 0 ? lambda : -lambda) : (rng.uniform() * 2 - 1) * lambda;
        const double u = std::ldexp(rng.uniform() + 1e-3, static_cast<int>(rng.below(40)) - 20);
        const double eta = 1.0 - rng.uniform() * 0.999;
        ASSERT_EQ(prox_step(0.0, g, u, lambda, eta), 0.0)
            << "g " << g << " lambda " << lambda << " u " << u << " eta " << eta;
    }
}

TEST(KktScreen, TheRuleSkipsOnlyWhatItAllows) {
    Rng rng(11);
    int skipped = 0;
    for (int i = 0; i < 100000; ++i) {
        const double lambda = rng.uniform() * 3 + 0.01;
        const double delta = rng.uniform() * lambda;
        const double w = rng.below(3) == 0 ? rng.uniform() - 0.5 : 0.0;
        const double g = (rng.uniform() * 2 - 1) * 2 * lambda;
        const bool skip = kkt_skippable(w, g, lambda, delta);
        skipped += skip ? 1 : 0;
        if (skip) {
            ASSERT_EQ(w, 0.0);
            ASSERT_LE(std::fabs(g), lambda - delta);
        } else {
            ASSERT_TRUE(w != 0 || std::fabs(g) > lambda - delta);
        }
        ASSERT_FALSE(kkt_skippable(0.0, 0.0, 0.0, 0.0)) << "the intercept never skips";
    }
    EXPECT_GT(skipped, 10000);  // the property was exercised
}

TEST(KktScreen, ScreensObservedKeysOutsideRefreshPasses) {
    KktOptions o;
    o.lambda = 1;
    o.delta = 0.1;
    o.blocks = 4;
    o.refresh = 3;
    KktScreen screen(o);
    screen.observe(5, 0.0, 0.5);   // skips
    screen.observe(6, 0.0, 0.95);  // within δ of λ: pushes
    screen.observe(7, 0.2, 0.0);   // nonzero: pushes
    screen.observe(kInterceptKey, 0.0, 0.0);
    for (std::uint64_t t = 0; t < 40; ++t) {
        const bool refresh = (t / 4) % 3 == 0;
        EXPECT_EQ(screen.skips(t, 5), !refresh) << t;
        EXPECT_FALSE(screen.skips(t, 6));
        EXPECT_FALSE(screen.skips(t, 7));
        EXPECT_FALSE(screen.skips(t, 8)) << "never observed";
        EXPECT_FALSE(screen.skips(t, kInterceptKey));
    }
    screen.observe(5, 0.0, -1.0);
    EXPECT_FALSE(screen.skips(4, 5));
    o.delta = -1;
    EXPECT_THROW(KktScreen{o}, ConfigError);
}

TEST(KktScreen, ReopenedKeysPushUntilTheNextObservation) {
    KktScreen screen(KktOptions{.lambda = 1, .delta = 0, .blocks = 4, .refresh = 0});
    screen.observe(5, 0.0, 0.5);
    screen.observe(6, 0.0, 0.25);
    ASSERT_TRUE(screen.skips(4, 5));
    ASSERT_TRUE(screen.skips(4, 6));
    const std::uint64_t keys[] = {5, 9};  // 9: never observed
    screen.reopen(keys);
    EXPECT_FALSE(screen.skips(4, 5)) << "reopened";
    EXPECT_TRUE(screen.skips(4, 6)) << "not in the list";
    EXPECT_FALSE(screen.skips(4, 9));
    screen.observe(5, 0.0, 0.5);  // a pull answer tells ĝ again
    EXPECT_TRUE(screen.skips(4, 5));
}

}  // namespace
}  // namespace rotor::logreg
