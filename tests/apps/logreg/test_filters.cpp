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

/// `calls` consecutive calls of train_delayed of o.iterations / calls iterations each, every
/// rank carrying its DelayedMemory from one to the next (as `rotor logreg train` between
/// evaluations) when `carry`.
FilteredRun run(const Examples& ex, int ranks, const KvLayout& layout, const DelayedOptions& o,
                std::uint64_t calls = 1, bool carry = true) {
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
        DelayedMemory memory;
        DelayedStart start;
        DelayedResult d;
        comm::KvStats stats;
        for (std::uint64_t call = 0; call < calls; ++call) {
            DelayedOptions each = o;
            each.first = o.iterations * call / calls;
            each.iterations = o.iterations * (call + 1) / calls;
            c.barrier();  // as the evaluation between two calls of `rotor logreg train`
            d = train_delayed(c, layout, part, each, start, carry ? &memory : nullptr);
            stats.add(d.stats);
            start.server_weights = d.server_weights;
            start.worker_weights = d.worker_weights;
        }
        const std::lock_guard lock(mu);
        r.w.insert(d.server_weights.begin(), d.server_weights.end());
        r.stats[static_cast<std::size_t>(c.rank())] = stats;
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

/// The sequential BlockProx after 4 × o.iterations: the optimum the filtered runs must reach.
ProxEvaluation optimum(const Examples& ex, const DelayedOptions& o) {
    std::vector<Shard> one{Shard(ex, true)};
    BlockProx reference(one, o.prox);
    for (std::uint64_t t = 0; t < 4 * o.iterations; ++t) reference.step(t);
    return reference.evaluate();
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
    const ProxEvaluation best = optimum(ex, o);
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

TEST(LogregFilters, Float32PushesReachTheOptimumOnOneAndThreeRanksInFewerBytes) {
    const Examples ex = testing::synthetic_examples(300, 60, 6, 33);
    DelayedOptions o;
    o.prox.lambda = 3.0;
    o.prox.blocks = 4;
    o.iterations = 1200;
    const ProxEvaluation best = optimum(ex, o);
    for (const std::int64_t delay : {0, 2}) {
        for (const int p : {1, 3}) {
            const KvLayout layout = p == 1 ? KvLayout::even({0}, {0}) : KvLayout::even({0}, {1, 2});
            o.delay = delay;
            o.push_values = PushValues::kExact;
            const FilteredRun exact = run(ex, p, layout, o);
            o.push_values = PushValues::kFloat32;
            const FilteredRun narrow = run(ex, p, layout, o);
            const double f = objective_of(ex, narrow.w, o.prox.lambda);
            EXPECT_LT(f, best.objective * (1 + 1e-3)) << "delay " << delay << " ranks " << p;
            EXPECT_GE(f, best.objective * (1 - 1e-9));
            EXPECT_NE(narrow.w, exact.w);  // the rounding shows: a different path
            // The workers' requests: 8 bytes a key pushed instead of 64.
            std::uint64_t exact_bytes = 0, narrow_bytes = 0;
            for (std::size_t r = 0; r < exact.stats.size(); ++r) {
                exact_bytes += exact.stats[r].request_bytes_sent;
                narrow_bytes += narrow.stats[r].request_bytes_sent;
            }
            EXPECT_LT(2 * narrow_bytes, exact_bytes);
        }
    }
    // kAuto: exact at τ = 0 (bitwise BlockProx, tested above), float32 with delay.
    o.push_values = PushValues::kAuto;
    o.delay = 0;
    EXPECT_TRUE(o.exact_pushes());
    o.delay = 1;
    EXPECT_FALSE(o.exact_pushes());
}

TEST(LogregFilters, TheFiltersMemoryCarriesOverConsecutiveCalls) {
    // Every filter, float32 pushes, in 4 calls: with the memory carried over, the key caches hit
    // from the second call on, the screen is not relearnt, and the stack still reaches the
    // optimum. τ = 0, so that the byte counts do not depend on the threads' timing.
    const Examples ex = testing::synthetic_examples(300, 60, 6, 32);
    DelayedOptions o;
    o.prox.lambda = 3.0;
    o.prox.blocks = 4;
    o.iterations = 1200;
    o.push_values = PushValues::kFloat32;
    o.filters.stack = parse_filters("all");
    o.filters.sigmod_threshold = 0.05;
    const ProxEvaluation best = optimum(ex, o);
    const KvLayout layout = KvLayout::even({0}, {1, 2});
    const FilteredRun carried = run(ex, 3, layout, o, 4, true);
    const FilteredRun fresh = run(ex, 3, layout, o, 4, false);
    for (const FilteredRun* r : {&carried, &fresh}) {
        const double f = objective_of(ex, r->w, o.prox.lambda);
        EXPECT_LT(f, best.objective * (1 + 1e-3));
        EXPECT_GE(f, best.objective * (1 - 1e-9));
    }
    EXPECT_LT(bytes_sent(carried), bytes_sent(fresh));
    std::uint64_t kkt_carried = 0, kkt_fresh = 0;
    for (std::size_t r = 1; r < 3; ++r) {
        ASSERT_EQ(carried.stats[r].filters[0].name, "kkt");
        kkt_carried += carried.stats[r].filters[0].entries_dropped;
        kkt_fresh += fresh.stats[r].filters[0].entries_dropped;
    }
    EXPECT_GT(kkt_carried, kkt_fresh);  // the screen is not relearnt at every call
}

TEST(LogregFilters, TheKeyCacheHoldsEveryBlocksListAndTheFinalPulls) {
    // A worker sends one key list a block every pass, and the final exact pull of all its keys
    // at the end of each call: B + 1 lists in turn. A least-recently-used cache one list short
    // of that cycle (the fixed 1,024 lists at B = 1,024) misses on every list, every pass.
    const std::size_t blocks = 1100;
    FilterOptions o;
    o.stack = {"keycache"};
    comm::KvFilterStack stack = make_filter_stack(o, nullptr, false, blocks);
    std::size_t cached = 0;
    for (int pass = 0; pass < 3; ++pass) {
        for (std::uint64_t b = 0; b <= blocks; ++b) {
            comm::KvEntries e;
            e.keys = {b, b + blocks + 1};
            e.width = 1;
            e.values.assign(2, 1.0);
            const comm::KvWire wire =
                stack.send({comm::KvChannel::kPullRequest, 0, 1, b, false}, e);
            cached += wire.keys_cached ? 1 : 0;
        }
    }
    EXPECT_EQ(cached, 2 * (blocks + 1));  // every list after the first pass
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
