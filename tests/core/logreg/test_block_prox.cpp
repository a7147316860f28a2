// Tests of the sequential block proximal gradient: the objective never increases with the
// majorising curvature, it converges to the KKT conditions, and 1 part and 3 parts give bitwise
// the same weights and margins.
#include "core/logreg/block_prox.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/core/logreg/logreg_test_util.h"

namespace rotor::logreg {
namespace {

TEST(BlockAt, EveryPassVisitsEveryBlockOnce) {
    for (std::uint64_t pass = 0; pass < 4; ++pass) {
        std::vector<int> seen(7, 0);
        for (std::uint64_t t = pass * 7; t < pass * 7 + 7; ++t) ++seen[block_at(t, 7, 3)];
        EXPECT_EQ(seen, std::vector<int>(7, 1));
    }
    EXPECT_EQ(block_at(5, 1, 3), 0u);
}

TEST(BlockProx, DescendsAndConvergesToKkt) {
    const Examples ex = testing::synthetic_examples(200, 30, 5, 1);
    std::vector<Shard> parts{Shard(ex, true)};
    BlockProxOptions o;
    o.lambda = 2.0;
    o.blocks = 4;
    BlockProx solver(parts, o);
    double last = solver.evaluate().objective;
    std::uint64_t t = 0;
    for (int pass = 0; pass < 400; ++pass) {
        for (std::uint32_t b = 0; b < o.blocks; ++b) solver.step(t++);
        const double now = solver.evaluate().objective;
        EXPECT_LE(now, last * (1 + 1e-15)) << "pass " << pass;
        last = now;
    }
    const ProxEvaluation ev = solver.evaluate();
    EXPECT_LT(ev.kkt_violation, 1e-6);
    EXPECT_GT(ev.nonzeros, 1u);
    EXPECT_LT(ev.nonzeros, 31u);  // λ zeroes some of the 30 features
}

TEST(BlockProx, OnePartAndThreePartsAreBitwiseTheSame) {
    const Examples ex = testing::synthetic_examples(150, 40, 6, 2);
    std::vector<Shard> one{Shard(ex, true)};
    std::vector<Shard> three{Shard(testing::slice(ex, 0, 40), true),
                             Shard(testing::slice(ex, 40, 41), true),
                             Shard(testing::slice(ex, 41, 150), true)};
    BlockProxOptions o;
    o.lambda = 0.5;
    o.blocks = 5;
    o.curvature = Curvature::kLocal;
    BlockProx a(one, o), b(three, o);
    for (std::uint64_t t = 0; t < 60; ++t) {
        a.step(t);
        b.step(t);
    }
    ASSERT_EQ(a.keys().size(), b.keys().size());
    for (std::size_t k = 0; k < a.keys().size(); ++k) {
        EXPECT_EQ(a.keys()[k], b.keys()[k]);
        EXPECT_EQ(a.weights()[k], b.weights()[k]) << "key " << k;
    }
    std::size_t i = 0;
    for (const Shard& p : three) {
        for (const double m : p.margins()) EXPECT_EQ(m, one[0].margins()[i++]);
    }
    EXPECT_EQ(a.evaluate().objective, b.evaluate().objective);
}

}  // namespace
}  // namespace rotor::logreg
