// The delayed block proximal gradient (apps/logreg/trainer.h) on 1..4 in-process ranks, with
// every rank both server and worker and with separate servers and workers: τ = 0 gives bitwise
// the weights and margins of the sequential BlockProx over the same examples; τ = 1 and τ = 2
// keep the delay bound and still approach the optimum; every delay ends eventually consistent.
#include "apps/logreg/trainer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "comm/inprocess_communicator.h"
#include "tests/comm/kv_cases.h"
#include "tests/core/logreg/logreg_test_util.h"

namespace rotor::logreg {
namespace {

using comm::KvLayout;

struct DelayedRun {
    std::map<std::uint64_t, double> w;                ///< every server's keys
    std::vector<std::vector<double>> worker_margins;  ///< per worker index
    std::vector<std::vector<double>> worker_weights;  ///< per worker index
    std::vector<std::vector<std::uint64_t>> worker_keys;
    comm::testing::Schedules schedules;
};

DelayedRun run_delayed(const Examples& ex, int ranks, const KvLayout& layout,
                       const DelayedOptions& o) {
    const std::size_t workers = layout.workers.size();
    std::vector<Shard> parts;
    for (std::size_t w = 0; w < workers; ++w) {
        parts.emplace_back(
            testing::slice(ex, ex.size() * w / workers, ex.size() * (w + 1) / workers), true);
    }
    DelayedRun run;
    run.worker_weights.resize(workers);
    run.schedules.resize(workers);
    std::mutex mu;
    comm::run_ranks(ranks, [&](comm::Communicator& c) {
        const auto it = std::find(layout.workers.begin(), layout.workers.end(), c.rank());
        const auto w = static_cast<std::size_t>(it - layout.workers.begin());
        Shard* part = it == layout.workers.end() ? nullptr : &parts[w];
        DelayedResult r = train_delayed(c, layout, part, o);
        const std::lock_guard lock(mu);
        run.w.insert(r.server_weights.begin(), r.server_weights.end());
        if (part != nullptr) {
            run.worker_weights[w] = r.worker_weights;
            run.schedules[w] = r.schedule;
        }
    });
    for (const Shard& p : parts) {
        run.worker_margins.emplace_back(p.margins().begin(), p.margins().end());
        run.worker_keys.emplace_back(p.keys().begin(), p.keys().end());
    }
    return run;
}

class DelayedRanks : public ::testing::TestWithParam<int> {};

TEST_P(DelayedRanks, DelayZeroIsTheSequentialBlockProximalGradientBitForBit) {
    const Examples ex = testing::synthetic_examples(120, 40, 6, 21);
    DelayedOptions o;
    o.prox.lambda = 0.7;
    o.prox.blocks = 5;
    o.prox.curvature = Curvature::kLocal;
    o.iterations = 40;
    std::vector<Shard> one{Shard(ex, true)};
    BlockProx reference(one, o.prox);
    for (std::uint64_t t = 0; t < o.iterations; ++t) reference.step(t);
    const int p = GetParam();
    for (const KvLayout& layout : comm::testing::kv_layouts(p)) {
        const DelayedRun run = run_delayed(ex, p, layout, o);
        std::size_t nonzero = 0;
        for (std::size_t k = 0; k < reference.keys().size(); ++k) {
            const auto it = run.w.find(reference.keys()[k]);
            const double w = it == run.w.end() ? 0.0 : it->second;
            EXPECT_EQ(w, reference.weights()[k]) << "key " << k;
            nonzero += w != 0;
        }
        EXPECT_GT(nonzero, 3u);
        std::size_t i = 0;
        for (std::size_t w = 0; w < run.worker_margins.size(); ++w) {
            for (const double m : run.worker_margins[w]) EXPECT_EQ(m, one[0].margins()[i++]);
            for (std::size_t k = 0; k < run.worker_keys[w].size(); ++k) {
                EXPECT_EQ(run.worker_weights[w][k], run.w.at(run.worker_keys[w][k]));
            }
        }
        EXPECT_EQ(i, ex.size());
        EXPECT_LE(comm::testing::max_lead(run.schedules), 0);
    }
    DelayedOptions threaded = o;  // threads inside the workers: the same bits
    threaded.threads = 2;
    const DelayedRun run = run_delayed(ex, p, comm::testing::kv_layouts(p).front(), threaded);
    for (std::size_t k = 0; k < reference.keys().size(); ++k) {
        const auto it = run.w.find(reference.keys()[k]);
        EXPECT_EQ(it == run.w.end() ? 0.0 : it->second, reference.weights()[k]) << "key " << k;
    }
}

INSTANTIATE_TEST_SUITE_P(Ranks, DelayedRanks, ::testing::Values(1, 2, 3, 4));

TEST(Delayed, DelayZeroWithFeatureGroupsIsBlockProxWithTheSameGroups) {
    const Examples ex = testing::synthetic_examples(120, 40, 6, 21);
    std::unordered_map<std::uint64_t, std::uint32_t> group_of;
    for (std::uint64_t k = 0; k < 20; ++k)  // synthetic_examples' keys; the rest hashed
        group_of.emplace((k + 1) * 0x9E3779B97F4A7C1ULL, static_cast<std::uint32_t>(k % 2));
    DelayedOptions o;
    o.prox.lambda = 0.7;
    o.prox.blocks = 2 + 3;
    o.prox.groups = std::make_shared<const BlockGroups>(std::move(group_of),
                                                        std::vector<std::string>{"a", "b"}, 1);
    o.prox.curvature = Curvature::kLocal;
    o.iterations = 40;
    std::vector<Shard> one{Shard(ex, true)};
    BlockProx reference(one, o.prox);
    for (std::uint64_t t = 0; t < o.iterations; ++t) reference.step(t);
    DelayedOptions hashed = o;  // the same blocks by the hash alone: another model
    hashed.prox.groups.reset();
    BlockProx other(one, hashed.prox);
    for (const KvLayout& layout : comm::testing::kv_layouts(3)) {
        const DelayedRun run = run_delayed(ex, 3, layout, o);
        std::size_t nonzero = 0;
        for (std::size_t k = 0; k < reference.keys().size(); ++k) {
            const auto it = run.w.find(reference.keys()[k]);
            const double w = it == run.w.end() ? 0.0 : it->second;
            EXPECT_EQ(w, reference.weights()[k]) << "key " << k;
            nonzero += w != 0;
        }
        EXPECT_GT(nonzero, 3u);
    }
    bool differs = false;
    for (std::uint32_t b = 0; b < 5; ++b)
        differs = differs || !std::ranges::equal(reference.block(b), other.block(b));
    EXPECT_TRUE(differs);
}

TEST(Delayed, BoundedDelaysApproachTheOptimumAndEveryDelayEndsConsistent) {
    const Examples ex = testing::synthetic_examples(200, 30, 5, 22);
    DelayedOptions o;
    o.prox.lambda = 2.0;
    o.prox.blocks = 4;
    o.iterations = 800;
    std::vector<Shard> one{Shard(ex, true)};
    BlockProx reference(one, o.prox);
    for (std::uint64_t t = 0; t < 4 * o.iterations; ++t) reference.step(t);
    const double optimum = reference.evaluate().objective;
    for (const std::int64_t delay : {std::int64_t{1}, std::int64_t{2}, comm::kInfiniteDelay}) {
        o.delay = delay;
        const DelayedRun run = run_delayed(ex, 3, KvLayout::even({0}, {1, 2}), o);
        // Eventually consistent: every block's last pull came after its last update.
        for (std::size_t w = 0; w < run.worker_keys.size(); ++w) {
            for (std::size_t k = 0; k < run.worker_keys[w].size(); ++k) {
                EXPECT_EQ(run.worker_weights[w][k], run.w.at(run.worker_keys[w][k]));
            }
        }
        // Without a bound, stale gradients pushed again and again overshoot: no claim on the
        // objective (Li et al. bound the delay for convergence).
        if (delay == comm::kInfiniteDelay) continue;
        if (delay >= 0) {
            EXPECT_LE(comm::testing::max_lead(run.schedules), delay);
        }
        Shard all(ex, true);
        std::vector<std::uint64_t> keys;
        std::vector<double> w;
        for (const auto& [k, v] : run.w) {
            keys.push_back(k);
            w.push_back(v);
        }
        set_margins(all, keys, w);
        core::ExactSum loss;
        push_loss(all, loss);
        const double objective = loss.value() + penalty(keys, w, o.prox.lambda);
        EXPECT_LT(objective, optimum * (1 + 1e-3)) << "delay " << delay;
        EXPECT_GE(objective, optimum * (1 - 1e-9)) << "delay " << delay;
    }
}

}  // namespace
}  // namespace rotor::logreg
