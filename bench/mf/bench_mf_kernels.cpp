// Throughput of the MF kernels, single-threaded, on a synthetic ratings matrix of 10,000 users x
// 2,000 items with 200,000 ratings (items drawn with a Zipf-like skew, values in [1, 5)), with
// biases and the weighted λ. items/s = ratings/s: the ratings of one CCD iteration (biases, then
// K rank-one updates with `inner` = 3) or of one SGD epoch (one block of every rating) over the
// wall time of that iteration or epoch. The work per rating is linear in K, so ratings·K/s
// (counter rK/s) should stay roughly flat as K grows, until W and H leave the caches.
//
//   bench_mf_kernels --benchmark_filter='Ccd/K:128'
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/base/rng.h"
#include "core/mf/ccd.h"
#include "core/mf/objective.h"
#include "core/mf/sgd.h"

namespace rotor::mf {
namespace {

constexpr std::uint32_t kUsers = 10000, kItems = 2000, kPerUser = 20;

struct Ratings {
    std::vector<std::uint64_t> offsets{0};
    std::vector<std::uint32_t> users, items;
    std::vector<float> values;
    SparseView view() const { return {offsets, items, values}; }
};

const Ratings& ratings() {
    static const Ratings r = [] {
        Ratings m;
        Rng rng(5);
        for (std::uint32_t i = 0; i < kUsers; ++i) {
            std::vector<bool> seen(kItems, false);
            for (std::uint32_t n = 0; n < kPerUser;) {
                // u^2 skews towards low item ids: popular items have many ratings
                const double u = rng.uniform();
                const auto j = static_cast<std::uint32_t>(u * u * kItems);
                if (seen[j]) continue;
                seen[j] = true;
                ++n;
            }
            for (std::uint32_t j = 0; j < kItems; ++j) {
                if (!seen[j]) continue;
                m.users.push_back(i);
                m.items.push_back(j);
                m.values.push_back(static_cast<float>(1 + 4 * rng.uniform()));
            }
            m.offsets.push_back(m.items.size());
        }
        return m;
    }();
    return r;
}

void report(benchmark::State& state, std::uint64_t ratings, std::uint32_t K) {
    state.SetItemsProcessed(static_cast<std::int64_t>(ratings));
    state.counters["rK/s"] =
        benchmark::Counter(static_cast<double>(ratings) * K, benchmark::Counter::kIsRate);
}

void Ccd(benchmark::State& state) {
    const auto K = static_cast<std::uint32_t>(state.range(0));
    const Ratings& m = ratings();
    Factors w(kUsers, K), h(kItems, K);
    w.init_uniform(1, 1, 0.0f, 1.0f / std::sqrt(static_cast<float>(K)));
    std::vector<float> b(kUsers, 0.0f), c(kItems, 0.0f), r(m.values.size());
    const double mu = rating_sum(m.values).value() / static_cast<double>(m.values.size());
    compute_residuals(m.view(), w, b, h, c, mu, r);
    const CcdPart all{m.view(), &w, b, r};
    CcdParams p;
    std::uint64_t done = 0;
    for (auto _ : state) {
        ccd_iteration(all, h, c, p);
        done += m.values.size();
    }
    report(state, done, K);
    state.counters["train_rmse"] = rmse(squared_error(r), r.size());
}

void Sgd(benchmark::State& state) {
    const auto K = static_cast<std::uint32_t>(state.range(0));
    const Ratings& m = ratings();
    Factors w(kUsers, K), h(kItems, K);
    const float scale = 1.0f / std::sqrt(static_cast<float>(K));
    w.init_uniform(1, 1, 0.0f, scale);
    h.init_uniform(1, 2, 0.0f, scale);
    SgdState ws(kUsers, true), hs(kItems, true);
    SgdSide rows = ws.side(w), cols = hs.side(h);
    const double mu = rating_sum(m.values).value() / static_cast<double>(m.values.size());
    const PackedBlock packed(m.users, m.items, m.values);
    const BlockView block = packed.view();
    SgdParams p;
    std::uint64_t done = 0;
    double loss = 0;
    for (auto _ : state) {
        loss = 0;
        done += sgd_block(block, rows, cols, mu, p, nullptr, &loss);
    }
    report(state, done, K);
    state.counters["train_rmse"] = rmse(loss, m.values.size());
}

BENCHMARK(Ccd)->ArgName("K")->Arg(16)->Arg(128)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(Sgd)->ArgName("K")->Arg(16)->Arg(128)->Arg(1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rotor::mf
