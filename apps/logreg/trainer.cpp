#include "apps/logreg/trainer.h"

#include <algorithm>
#include <array>
#include <deque>
#include <unordered_map>

#include "apps/logreg/worker.h"
#include "comm/agreed.h"
#include "core/base/error.h"

namespace rotor::logreg {
namespace {

using comm::KvNode;
constexpr std::size_t kLimbs = ExactSum::kLimbs;

/// A server's state: w, and the sums of the iterations not yet complete. Hash maps: a block's
/// keys are spread over the key space, and the proximal step of a key does not depend on the
/// others, so the order of visiting them does not matter.
struct ServerState {
    std::unordered_map<std::uint64_t, double> w;
    std::map<std::uint64_t, std::unordered_map<std::uint64_t, std::pair<ExactSum, ExactSum>>>
        pending;
};

ExactSum from_values(std::span<const double> v) {
    std::array<std::int64_t, kLimbs> limbs{};
    for (std::size_t i = 0; i < kLimbs; ++i) limbs[i] = static_cast<std::int64_t>(v[i]);
    return ExactSum::from_limbs(limbs);
}

comm::KvServerHandler server_handler(ServerState& s, const BlockProxOptions& o) {
    return {
        .on_push =
            [&s](std::uint64_t t, int, std::span<const std::uint64_t> keys,
                 std::span<const double> values) {
                auto& sums = s.pending[t];
                if (sums.empty()) sums.reserve(keys.size());
                for (std::size_t i = 0; i < keys.size(); ++i) {
                    auto& [g, u] = sums[keys[i]];
                    g.add(from_values(values.subspan(i * kPushWidth, kLimbs)));
                    u.add(from_values(values.subspan(i * kPushWidth + kLimbs, kLimbs)));
                }
            },
        .on_complete =
            [&s, o](std::uint64_t t) {
                const auto it = s.pending.find(t);
                if (it == s.pending.end()) return;
                for (const auto& [key, gu] : it->second) {
                    double& w = s.w[key];
                    w = prox_step(w, gu.first.value(), gu.second.value(), penalty_of(key, o.lambda),
                                  o.eta);
                }
                s.pending.erase(it);
            },
        .on_pull =
            [&s](std::span<const std::uint64_t> keys, std::vector<double>& out) {
                for (const std::uint64_t k : keys) {
                    const auto it = s.w.find(k);
                    out.push_back(it == s.w.end() ? 0.0 : it->second);
                }
            },
    };
}

void run_worker(KvNode& node, Worker& worker, const DelayedOptions& o) {
    std::deque<std::pair<std::uint64_t, std::pair<std::uint32_t, std::uint64_t>>> pulls;
    std::vector<double> values;
    const auto take = [&] {
        const auto [t, bp] = pulls.front();
        pulls.pop_front();
        worker.apply(bp.first, node.wait_pull(bp.second));
    };
    for (std::uint64_t t = 0; t < o.iterations; ++t) {
        node.begin_iteration(t);
        // Pulls that arrived meanwhile are applied before computing (fresher margins).
        while (!pulls.empty() && node.pull_ready(pulls.front().second.second)) take();
        const std::uint32_t b = worker.push_values(t, values);
        node.push(t, worker.block(b), values);
        pulls.emplace_back(t, std::make_pair(b, node.pull(t, worker.block(b))));
        while (!pulls.empty() && o.delay != comm::kInfiniteDelay &&
               pulls.front().first + static_cast<std::uint64_t>(o.delay) <= t) {
            take();
        }
        node.end_iteration(t);
    }
    while (!pulls.empty()) take();
}

}  // namespace

DelayedResult train_delayed(comm::Communicator& comm, const comm::KvLayout& layout, Shard* part,
                            const DelayedOptions& o) {
    ServerState state;
    comm::KvOptions kv;
    kv.delay = o.delay;
    kv.push_width = kPushWidth;
    kv.pull_width = 1;
    kv.timeout_s = o.timeout_s;
    KvNode node(comm, layout, kv, server_handler(state, o.prox));
    ROTOR_ASSERT(node.is_worker() == (part != nullptr), "a part exactly on workers");
    DelayedResult result;
    try {
        if (node.is_worker()) {
            Worker worker(*part, o.prox, o.threads);
            run_worker(node, worker, o);
            result.worker_weights = worker.weights();
        }
        node.finish();
    } catch (const comm::AgreedError&) {
        throw;
    } catch (const Error& e) {
        node.fail(e);
        throw;
    }
    result.server_weights.insert(state.w.begin(), state.w.end());
    result.stats = node.stats();
    result.schedule = node.schedule();
    return result;
}

}  // namespace rotor::logreg
