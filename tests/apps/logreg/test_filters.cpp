// The delayed trainer with filters (apps/logreg/filters.h, trainer.h) on in-process ranks:
// with the lossless ones (keycache, zstd) τ = 0 stays bitwise the sequential BlockProx; with
// kkt, sigmod and random skip stacked, training still reaches the optimum within 1e-3 while
// sending fewer bytes; the --filters list is checked.
#include "apps/logreg/filters.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "apps/logreg/trainer.h"
#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "tests/comm/kv_cases.h"
#include "tests/core/logreg/logreg_test_util.h"

namespace rotor::logreg {
namespace {

using comm::KvLayout;

struct FilteredRun {
    std::map<std::uint64_t, double> w;  ///< every server's keys
    std::vector<Shard> parts;           ///< per worker, after training
    std::vector<comm::KvStats> stats;   ///< per rank
    std::vector<std::vector<double>> worker_weights;
};

FilteredRun run(const Examples& ex, int ranks, const KvLayout& layout, const DelayedOptions& o) {
    FilteredRun r;
    const std::size_t workers = layout.workers.size();
    for (std::size_t w = 0; w < workers; ++w) {
        r.parts.emplace_back(
            testing::slice(ex, ex.size() * w / workers, ex.size() * (w + 1) / workers), true);
    }
    r.stats.resize(static_cast<std::size_t>(ranks));
    r.worker_weights.resize(workers);
    std::mutex mu;
    comm::run_ranks(ranks, [&](comm::Communicator& c) {
        const auto it = std::find(layout.workers.begin(), layout.workers.end(), c.rank());
        const auto w = static_cast<std::size_t>(it - layout.workers.begin());
        Shard* part = it == layout.workers.end() ? nullptr : &r.parts[w];
        const DelayedResult d = train_delayed(c, layout, part, o);
        const std::lock_guard lock(mu);
        r.w.insert(d.server_weights.begin(), d.server_weights.end());
        r.stats[static_cast<std::size_t>(c.rank())] = d.stats;
        if (part != nullptr) r.worker_weights[w] = d.worker_weights;
    });
    return r;
}

double objective_of(const Examples& ex, const std::map<std::uint64_t, double>& wmap,
                    double lambda) {
    Shard all(ex, true);
    std::vector<std::uint64_t> keys;
    std::vector<double> w;
    for (const auto& [k, v] : wmap) {
        keys.push_back(k);
        w.push_back(v);
    }
    set_margins(all, keys, w);
    core::ExactSum loss;
    push_loss(all, loss);
    return loss.value() + penalty(keys, w, lambda);
}

std::uint64_t bytes_sent(const FilteredRun& r) {
    std::uint64_t n = 0;
    for (const comm::KvStats& s : r.stats) n += s.bytes_sent;
    return n;
}

TEST(LogregFilters, LosslessFiltersKeepDelayZeroBitwiseBlockProx) {
    const Examples ex = testing::synthetic_examples(150, 40, 6, 31);
    DelayedOptions o;
    o.prox.lambda = 0.7;
    o.prox.blocks = 5;
    o.prox.curvature = Curvature::kLocal;
    o.iterations = 40;
    std::vector<Shard> one{Shard(ex, true)};
    BlockProx reference(one, o.prox);
    for (std::uint64_t t = 0; t < o.iterations; ++t) reference.step(t);
    for (const auto& stack :
         {std::vector<std::string>{"keycache"}, std::vector<std::string>{"zstd", "keycache"},
          std::vector<std::string>{"keycache", "zstd"}}) {
        o.filters.stack = stack;
        for (const int p : {1, 3}) {
            for (const KvLayout& layout : comm::testing::kv_layouts(p)) {
                const FilteredRun r = run(ex, p, layout, o);
                std::size_t nonzero = 0;
                for (std::size_t k = 0; k < reference.keys().size(); ++k) {
                    const auto it = r.w.find(reference.keys()[k]);
                    const double w = it == r.w.end() ? 0.0 : it->second;
                    ASSERT_EQ(w, reference.weights()[k]) << "key " << k << " ranks " << p;
                    nonzero += w != 0;
                }
                EXPECT_GT(nonzero, 3u);
                std::size_t i = 0;
                for (const Shard& part : r.parts) {
                    for (const double m : part.margins()) ASSERT_EQ(m, one[0].margins()[i++]);
                }
                EXPECT_EQ(i, ex.size());
            }
        }
    }
}

TEST(LogregFilters, LossyFiltersStillReachTheOptimumWithFewerBytes) {
    const Examples ex = testing::synthetic_examples(300, 60, 6, 32);
    DelayedOptions o;
    o.prox.lambda = 3.0;
    o.prox.blocks = 4;
    o.iterations = 1200;
    o.filters.kkt_delta = 0.3;
    o.filters.sigmod_threshold = 0.05;
    o.filters.skip_rate = 0.2;
    std::vector<Shard> one{Shard(ex, true)};
    BlockProx reference(one, o.prox);
    for (std::uint64_t t = 0; t < 4 * o.iterations; ++t) reference.step(t);
    const ProxEvaluation best = reference.evaluate();
    ASSERT_LT(best.nonzeros, 50u);  // some keys are zero at the optimum: kkt has work
    const KvLayout layout = KvLayout::even({0}, {1, 2});
    o.filters.stack = {};
    const std::uint64_t plain = bytes_sent(run(ex, 3, layout, o));
    for (const auto& stack :
         {std::vector<std::string>{"kkt"}, std::vector<std::string>{"sigmod"},
          std::vector<std::string>{"skip"},
          std::vector<std::string>{"keycache", "zstd", "kkt", "sigmod", "skip"}}) {
        o.filters.stack = stack;
        const FilteredRun r = run(ex, 3, layout, o);
        const double f = objective_of(ex, r.w, o.prox.lambda);
        EXPECT_LT(f, best.objective * (1 + 1e-3)) << stack.front() << " of " << stack.size();
        EXPECT_GE(f, best.objective * (1 - 1e-9));
        EXPECT_LT(bytes_sent(r), plain) << stack.front() << " of " << stack.size();
        // Every filter that drops did drop something, and the workers end with the servers' w.
        for (const comm::KvFilterStats& s : r.stats[1].filters) {
            if (s.name == "kkt" || s.name == "skip") {
                EXPECT_GT(s.entries_dropped, 0u) << s.name;
            }
        }
        for (const comm::KvFilterStats& s : r.stats[0].filters) {
            if (s.name == "sigmod") {
                EXPECT_GT(s.entries_dropped, 0u);
            }
        }
        for (std::size_t w = 0; w < r.parts.size(); ++w) {
            const auto keys = r.parts[w].keys();
            for (std::size_t k = 0; k < keys.size(); ++k) {
                const auto it = r.w.find(keys[k]);
                ASSERT_EQ(r.worker_weights[w][k], it == r.w.end() ? 0.0 : it->second);
            }
        }
    }
}

TEST(LogregFilters, TheListIsChecked) {
    EXPECT_EQ(parse_filters("keycache,zstd,kkt"),
              (std::vector<std::string>{"keycache", "zstd", "kkt"}));
    EXPECT_TRUE(parse_filters("").empty());
    EXPECT_TRUE(parse_filters("none").empty());
    EXPECT_THROW(parse_filters("keycache,gzip"), ConfigError);
    EXPECT_THROW(parse_filters("zstd,zstd"), ConfigError);
    EXPECT_THROW(parse_filters("zstd,"), ConfigError);
}

}  // namespace
}  // namespace rotor::logreg
