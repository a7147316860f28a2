// Tests of the logistic regression kernels: the pushed gradient against central finite
// differences of the loss, u as a majoriser of the loss on a block (Curvature::kBound) and as a
// bound of the diagonal Hessian (kLocal), the proximal step against its optimality conditions
// and hand-worked values, margins kept by apply_deltas equal to margins recomputed.
#include "core/logreg/objective.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/base/rng.h"
#include "core/logreg/sigmoid.h"
#include "tests/core/logreg/logreg_test_util.h"

namespace rotor::logreg {
namespace {

double loss_at(Shard& part, std::span<const std::uint64_t> keys, std::span<const double> w) {
    set_margins(part, keys, w);
    core::ExactSum s;
    push_loss(part, s);
    return s.value();
}

struct Pushed {
    std::vector<double> g, u;
};

Pushed push_all(const Shard& part, std::span<const std::uint64_t> keys, Curvature c) {
    std::vector<core::ExactSum> g(keys.size()), u(keys.size());
    BlockScratch scratch;
    push_block(part, keys, c, g, u, scratch);
    Pushed p;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        p.g.push_back(g[i].value());
        p.u.push_back(u[i].value());
    }
    return p;
}

TEST(LogregObjective, GradientMatchesFiniteDifferences) {
    Shard part(testing::synthetic_examples(60, 15, 4, 3), true);
    const std::vector<std::uint64_t> keys(part.keys().begin(), part.keys().end());
    ASSERT_EQ(keys.back(), kInterceptKey);
    Rng rng(5);
    std::vector<double> w(keys.size());
    for (double& v : w) v = rng.uniform() - 0.5;
    set_margins(part, keys, w);
    const Pushed p = push_all(part, keys, Curvature::kBound);
    const double h = 1e-5;
    for (std::size_t k = 0; k < keys.size(); ++k) {
        std::vector<double> plus = w, minus = w;
        plus[k] += h;
        minus[k] -= h;
        const double fd = (loss_at(part, keys, plus) - loss_at(part, keys, minus)) / (2 * h);
        EXPECT_NEAR(p.g[k], fd, 1e-6 * std::max(1.0, std::fabs(fd))) << "key " << k;
    }
}

TEST(LogregObjective, BoundCurvatureMajorisesTheLossOnABlock) {
    Shard part(testing::synthetic_examples(50, 20, 6, 4), true);
    const std::vector<std::uint64_t> all(part.keys().begin(), part.keys().end());
    const auto blocks = split_blocks(all, 3, 9);
    Rng rng(6);
    std::vector<double> w(all.size());
    for (double& v : w) v = rng.uniform() * 2 - 1;
    const double base = loss_at(part, all, w);
    for (const auto& block : blocks) {
        set_margins(part, all, w);
        const Pushed p = push_all(part, block, Curvature::kBound);
        for (const double scale : {1e-3, 0.1, 1.0, 10.0}) {
            std::vector<double> moved = w;
            double model = base;
            for (std::size_t t = 0; t < block.size(); ++t) {
                const double d = scale * (rng.uniform() * 2 - 1);
                const auto at = std::lower_bound(all.begin(), all.end(), block[t]) - all.begin();
                moved[at] += d;
                model += p.g[t] * d + 0.5 * p.u[t] * d * d;
            }
            EXPECT_LE(loss_at(part, all, moved), model + 1e-9 * std::fabs(model)) << scale;
        }
    }
}

TEST(LogregObjective, LocalCurvatureBoundsTheDiagonalHessian) {
    Shard part(testing::synthetic_examples(40, 10, 3, 7), false);
    const std::vector<std::uint64_t> keys(part.keys().begin(), part.keys().end());
    std::vector<double> w(keys.size(), 0.3);
    set_margins(part, keys, w);
    const Pushed p = push_all(part, keys, Curvature::kLocal);
    const double h = 1e-4;
    for (std::size_t k = 0; k < keys.size(); ++k) {
        std::vector<double> plus = w, minus = w;
        plus[k] += h;
        minus[k] -= h;
        const double hkk =
            (loss_at(part, keys, plus) - 2 * loss_at(part, keys, w) + loss_at(part, keys, minus)) /
            (h * h);
        EXPECT_GE(p.u[k], hkk - 1e-4) << "key " << k;
    }
}

TEST(LogregObjective, ProxStepSatisfiesItsOptimalityConditions) {
    EXPECT_EQ(prox_step(1.0, 2.0, 4.0, 1.0, 1.0), 0.25);        // S(0.5, 0.25)
    EXPECT_EQ(prox_step(1.0, 6.0, 4.0, 1.0, 1.0), -0.25);       // S(-0.5, 0.25)
    EXPECT_EQ(prox_step(0.1, 0.0, 4.0, 1.0, 1.0), 0.0);         // |0.1| <= 0.25
    EXPECT_EQ(prox_step(0.1, 0.0, 4.0, 0.0, 1.0), 0.1);         // unpenalised: no shrinkage
    EXPECT_EQ(prox_step(3.0, 1.0, 0.0, 1.0, 1.0), 0.0);         // a key without data
    EXPECT_EQ(prox_step(1.0, 2.0, 4.0, 1.0, 1.0, 1.0), 0.25);   // within the trust region
    EXPECT_EQ(prox_step(1.0, 2.0, 4.0, 1.0, 1.0, 0.5), 0.5);    // 1 − 0.75 clamped
    EXPECT_EQ(prox_step(1.0, -40.0, 4.0, 1.0, 1.0, 0.5), 1.5);  // S(11, 0.25) clamped
    EXPECT_EQ(prox_step(1.0, 40.0, 4.0, 1.0, 1.0, 0.5), 0.5);   // S(-9, 0.25) clamped
    Rng rng(11);
    for (int trial = 0; trial < 1000; ++trial) {
        const double w = rng.uniform() * 4 - 2, g = rng.uniform() * 4 - 2;
        const double u = rng.uniform() * 3 + 0.01, l = rng.uniform(), eta = rng.uniform() + 0.1;
        const double x = prox_step(w, g, u, l, eta);
        // x minimises g (x − w) + u / (2η) (x − w)² + λ |x|.
        const double smooth = g + u / eta * (x - w);
        if (x != 0) {
            EXPECT_NEAR(smooth + std::copysign(l, x), 0.0, 1e-12);
        } else {
            EXPECT_LE(std::fabs(g - u / eta * w), l + 1e-12);
        }
    }
}

TEST(LogregObjective, ApplyDeltasKeepsTheMarginsOfW) {
    Shard part(testing::synthetic_examples(30, 12, 4, 8), true);
    const std::vector<std::uint64_t> keys(part.keys().begin(), part.keys().end());
    std::vector<double> w(keys.size(), 0.0), deltas(keys.size());
    std::vector<std::int64_t> columns;
    Rng rng(2);
    for (int round = 0; round < 3; ++round) {
        for (std::size_t k = 0; k < keys.size(); ++k) {
            deltas[k] = k % 2 == 0 ? rng.uniform() - 0.5 : 0.0;
            w[k] += deltas[k];
        }
        apply_deltas(part, keys, deltas, columns);
    }
    const std::vector<double> kept(part.margins().begin(), part.margins().end());
    set_margins(part, keys, w);
    for (std::size_t i = 0; i < kept.size(); ++i) EXPECT_NEAR(kept[i], part.margins()[i], 1e-12);
}

TEST(LogregObjective, StableLossAndKkt) {
    EXPECT_NEAR(log1pexp_neg(0), std::log(2.0), 1e-15);
    EXPECT_NEAR(log1pexp_neg(-800), 800, 1e-12);
    EXPECT_NEAR(log1pexp_neg(30), std::exp(-30.0), 1e-25);
    const std::vector<std::uint64_t> keys{1, 2, kInterceptKey};
    const std::vector<double> w{0.0, 1.0, 0.5}, g{0.5, -2.0, 0.25};
    EXPECT_DOUBLE_EQ(kkt_violation(keys, w, g, 1.0), 1.0);  // |−2 + 1| = 1
    EXPECT_DOUBLE_EQ(kkt_violation(keys, w, std::vector<double>{0.5, -1.0, 0.0}, 1.0), 0.0);
    EXPECT_DOUBLE_EQ(penalty(keys, w, 2.0), 2.0);  // the intercept is not penalised
}

TEST(LogregObjective, SkippedKeysArePushedAsIfNotInTheBlock) {
    Shard part(testing::synthetic_examples(80, 20, 5, 9), true);
    const std::vector<std::uint64_t> keys(part.keys().begin(), part.keys().end());
    Rng rng(3);
    std::vector<double> w(keys.size());
    for (double& v : w) v = rng.uniform() - 0.5;
    set_margins(part, keys, w);
    std::vector<std::uint8_t> skip(keys.size());
    std::vector<std::uint64_t> kept;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        skip[i] = i % 3 == 1 ? 1 : 0;
        if (skip[i] == 0) kept.push_back(keys[i]);
    }
    for (const Curvature c : {Curvature::kBound, Curvature::kLocal}) {
        BlockScratch scratch;
        scratch.reserve(part.examples());
        std::vector<core::ExactSum> g(keys.size()), u(keys.size());
        scratch.next_block();
        push_slices(part, column_slices(part, keys, 0, part.examples()), c, g, u, scratch, skip);
        const Pushed ref = push_all(part, kept, c);  // n_ib counts the kept keys only
        std::size_t r = 0;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            if (skip[i] != 0) {
                EXPECT_EQ(g[i].value(), 0.0);
                EXPECT_EQ(u[i].value(), 0.0);
                continue;
            }
            EXPECT_EQ(g[i].value(), ref.g[r]) << "key " << keys[i];
            EXPECT_EQ(u[i].value(), ref.u[r]) << "key " << keys[i];
            ++r;
        }
        // Without a mask: exactly push_block over every key.
        std::vector<core::ExactSum> g2(keys.size()), u2(keys.size());
        scratch.next_block();
        push_slices(part, column_slices(part, keys, 0, part.examples()), c, g2, u2, scratch);
        const Pushed all = push_all(part, keys, c);
        for (std::size_t i = 0; i < keys.size(); ++i) {
            EXPECT_EQ(g2[i].value(), all.g[i]);
            EXPECT_EQ(u2[i].value(), all.u[i]);
        }
    }
}

/// g and u of `keys` term by term, each term added to an core::ExactSum on its own (the
/// definition).
Pushed push_term_by_term(const Shard& part, std::span<const std::uint64_t> keys, Curvature c) {
    std::vector<std::uint32_t> count(part.examples(), 0);
    std::vector<std::int64_t> columns;
    part.match(keys, columns);
    const auto offsets = part.offsets();
    const auto rows = part.rows();
    const auto values = part.values();
    for (const std::int64_t col : columns) {
        if (col < 0) continue;
        for (std::uint64_t e = offsets[col]; e < offsets[col + 1]; ++e) ++count[rows[e]];
    }
    Pushed p;
    for (const std::int64_t col : columns) {
        core::ExactSum g, u;
        for (std::uint64_t e = col < 0 ? 0 : offsets[col]; col >= 0 && e < offsets[col + 1]; ++e) {
            const std::uint32_t i = rows[e];
            const double y = part.labels()[i];
            const double sm = sigmoid_neg(y * part.margins()[i]);  // the kernel's σ(−y m)
            const double curve = c == Curvature::kBound ? 0.25 : sm * (1.0 - sm);
            g.add(-y * sm * values[e]);
            u.add(curve * count[i] * values[e] * values[e]);
        }
        p.g.push_back(g.value());
        p.u.push_back(u.value());
    }
    return p;
}

TEST(LogregObjective, PushSumsEveryTermAsAnExactSumWhateverItsScale) {
    // push_slices adds runs of bounded terms in int64s (a run's length set by the key's largest
    // |x_ik|), and falls back to a check per term when terms may reach 2^13: both must give the
    // core::ExactSum of the terms. Scales: runs of thousands, runs of a few terms, no runs at all.
    for (const double scale : {1.0, 8.0, 20.0, 300.0, 5e4}) {
        Examples ex = testing::synthetic_examples(300, 12, 6, 21);
        for (double& v : ex.values) v *= scale;
        Shard part(ex, true);
        const std::vector<std::uint64_t> keys(part.keys().begin(), part.keys().end());
        std::vector<double> w(keys.size());
        Rng rng(22);
        for (double& v : w) v = (rng.uniform() - 0.5) / scale;
        set_margins(part, keys, w);
        for (const Curvature c : {Curvature::kBound, Curvature::kLocal}) {
            const Pushed got = push_all(part, keys, c);
            const Pushed want = push_term_by_term(part, keys, c);
            for (std::size_t i = 0; i < keys.size(); ++i) {
                EXPECT_EQ(got.g[i], want.g[i]) << "scale " << scale << " key " << keys[i];
                EXPECT_EQ(got.u[i], want.u[i]) << "scale " << scale << " key " << keys[i];
            }
        }
    }
}

TEST(LogregObjective, ANanMarginPoisonsItsKeysOnlyAndIsRedoneWhenItHeals) {
    // σ is taken two examples at a time; a NaN margin must make exactly the sums of the keys
    // that touch it NaN (the checked path), and its cached NaN must not outlive the margin.
    Examples ex = testing::synthetic_examples(41, 30, 5, 23);
    Shard part(ex, true);
    const std::vector<std::uint64_t> keys(part.keys().begin(), part.keys().end());
    std::vector<double> w(keys.size());
    Rng rng(24);
    for (double& v : w) v = rng.uniform() - 0.5;
    set_margins(part, keys, w);
    const double healthy = part.margins()[17];
    part.margins()[17] = std::numeric_limits<double>::quiet_NaN();
    BlockScratch scratch;
    scratch.reserve(part.examples());
    const auto push = [&] {
        std::vector<core::ExactSum> g(keys.size()), u(keys.size());
        scratch.next_block();
        push_slices(part, column_slices(part, keys, 0, part.examples()), Curvature::kLocal, g, u,
                    scratch);
        Pushed p;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            p.g.push_back(g[i].value());
            p.u.push_back(u[i].value());
        }
        return p;
    };
    const Pushed sick = push();
    const Pushed want_sick = push_term_by_term(part, keys, Curvature::kLocal);
    std::size_t poisoned = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        ASSERT_EQ(std::isnan(sick.g[i]), std::isnan(want_sick.g[i])) << "key " << keys[i];
        if (std::isnan(sick.g[i])) {
            ++poisoned;
            continue;
        }
        EXPECT_EQ(sick.g[i], want_sick.g[i]) << "key " << keys[i];
        EXPECT_EQ(sick.u[i], want_sick.u[i]) << "key " << keys[i];
    }
    EXPECT_GT(poisoned, 0u);
    EXPECT_LT(poisoned, keys.size());
    part.margins()[17] = healthy;
    const Pushed healed = push();
    const Pushed want = push_term_by_term(part, keys, Curvature::kLocal);
    EXPECT_EQ(healed.g, want.g);
    EXPECT_EQ(healed.u, want.u);
}

TEST(LogregObjective, BlockCountsStayRightWhenTheScratchStampsWrap) {
    // n_ib lives in the scratch under a block stamp: a count of an earlier block must read as 0.
    // Block A (stamp 1) leaves counts on its examples; B runs at the last stamp; C wraps to
    // stamp 1 again with A's keys, so counts left by A would inflate u unless cleared.
    Shard part(testing::synthetic_examples(60, 30, 6, 4), true);
    const std::vector<std::uint64_t> all(part.keys().begin(), part.keys().end());
    std::vector<std::uint64_t> a, b;
    for (std::size_t i = 0; i < all.size(); ++i) (i % 2 == 0 ? a : b).push_back(all[i]);
    const Pushed ref = push_all(part, a, Curvature::kLocal);
    BlockScratch scratch;
    scratch.reserve(part.examples());
    const auto push = [&](const std::vector<std::uint64_t>& keys) {
        std::vector<core::ExactSum> g(keys.size()), u(keys.size());
        scratch.next_block();
        push_slices(part, column_slices(part, keys, 0, part.examples()), Curvature::kLocal, g, u,
                    scratch);
        return std::vector<core::ExactSum>(u);
    };
    push(a);
    EXPECT_EQ(scratch.block, 1u);
    scratch.block = std::numeric_limits<std::uint32_t>::max() - 1;
    push(b);
    const std::vector<core::ExactSum> u = push(a);
    EXPECT_EQ(scratch.block, 1u);
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(u[i].value(), ref.u[i]) << "key " << a[i];
}

}  // namespace
}  // namespace rotor::logreg
