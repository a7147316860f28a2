#include "apps/logreg/trainer.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <thread>

#include "comm/agreed.h"
#include "core/base/error.h"
#include "core/base/timer.h"

namespace rotor::logreg {
namespace {

using comm::KvNode;
constexpr std::size_t kLimbs = ExactSum::kLimbs;
constexpr std::size_t kPushWidth = 2 * kLimbs;  // g's limbs, then u's

/// A server's state: w, and the sums of the iterations not yet complete.
struct ServerState {
    std::map<std::uint64_t, double> w;
    std::map<std::uint64_t, std::map<std::uint64_t, std::pair<ExactSum, ExactSum>>> pending;
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

/// A worker's state: its part, its blocks and its copy of w over its keys.
class Worker {
  public:
    Worker(Shard& part, const BlockProxOptions& o, const std::vector<double>& start)
        : part_(part), options_(o), w_(part.keys().size(), 0.0) {
        ROTOR_ASSERT(start.empty() || start.size() == w_.size(), "w over the part's keys");
        if (!start.empty()) w_ = start;
        blocks_ = split_blocks(part.keys(), o.blocks, o.seed);
        index_.resize(blocks_.size());
        const auto keys = part.keys();
        for (std::size_t b = 0; b < blocks_.size(); ++b) {
            for (const std::uint64_t k : blocks_[b]) {
                index_[b].push_back(static_cast<std::size_t>(
                    std::lower_bound(keys.begin(), keys.end(), k) - keys.begin()));
            }
        }
    }

    /// The block of iteration t and the values to push for it.
    std::uint32_t push_values(std::uint64_t t, std::vector<double>& values) {
        const std::uint32_t b = block_at(t, options_.blocks, options_.seed);
        const auto& keys = blocks_[b];
        std::vector<ExactSum> g(keys.size()), u(keys.size());
        push_block(part_, keys, options_.curvature, g, u, scratch_);
        values.clear();
        for (std::size_t i = 0; i < keys.size(); ++i) {
            for (const std::int64_t l : g[i].to_limbs()) values.push_back(static_cast<double>(l));
            for (const std::int64_t l : u[i].to_limbs()) values.push_back(static_cast<double>(l));
        }
        return b;
    }
    /// Takes block b's pulled weights: changes w and the margins.
    void apply(std::uint32_t b, std::span<const double> pulled) {
        std::vector<double> deltas(pulled.size());
        for (std::size_t i = 0; i < pulled.size(); ++i) {
            double& w = w_[index_[b][i]];
            deltas[i] = pulled[i] - w;
            w = pulled[i];
        }
        apply_deltas(part_, blocks_[b], deltas, scratch_.columns);
    }
    std::span<const std::uint64_t> block(std::uint32_t b) const { return blocks_[b]; }
    const std::vector<double>& weights() const { return w_; }

  private:
    Shard& part_;
    BlockProxOptions options_;
    std::vector<double> w_;
    std::vector<std::vector<std::uint64_t>> blocks_;
    std::vector<std::vector<std::size_t>> index_;
    BlockScratch scratch_;
};

/// Sleeps (factor - 1) times `compute_s` (--simulate-straggler).
void straggle(double factor, double compute_s) {
    if (factor <= 1) return;
    std::this_thread::sleep_for(std::chrono::duration<double>((factor - 1) * compute_s));
}

/// Runs iterations [o.first, o.iterations); the kv engine counts them from 0.
void run_worker(KvNode& node, Worker& worker, const DelayedOptions& o, double straggler_factor) {
    std::deque<std::pair<std::uint64_t, std::pair<std::uint32_t, std::uint64_t>>> pulls;
    std::vector<double> values;
    double compute_s = 0;  // of this iteration: pushes and applied pulls
    const auto take = [&] {
        const auto [t, bp] = pulls.front();
        pulls.pop_front();
        const std::vector<double> pulled = node.wait_pull(bp.second);
        Stopwatch apply;
        worker.apply(bp.first, pulled);
        compute_s += apply.seconds();
    };
    for (std::uint64_t g = o.first; g < o.iterations; ++g) {
        const std::uint64_t t = g - o.first;
        node.begin_iteration(t);
        // Pulls that arrived meanwhile are applied before computing (fresher margins).
        while (!pulls.empty() && node.pull_ready(pulls.front().second.second)) take();
        Stopwatch compute;
        const std::uint32_t b = worker.push_values(g, values);
        straggle(straggler_factor, compute_s + compute.seconds());
        compute_s = 0;
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
                            const DelayedOptions& o, const DelayedStart& start) {
    ServerState state;
    const auto self = std::find(layout.servers.begin(), layout.servers.end(), comm.rank());
    if (self != layout.servers.end()) {
        const auto s = static_cast<std::size_t>(self - layout.servers.begin());
        for (const auto& [k, w] : start.server_weights)
            if (layout.server_of(k) == s) state.w.emplace(k, w);
    }
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
            Worker worker(*part, o.prox, start.worker_weights);
            run_worker(node, worker, o, comm.rank() == o.straggler_rank ? o.straggler_factor : 1.0);
            result.worker_weights = worker.weights();
        }
        node.finish();
    } catch (const comm::AgreedError&) {
        throw;
    } catch (const Error& e) {
        node.fail(e);
        throw;
    }
    result.server_weights = std::move(state.w);
    result.stats = node.stats();
    result.schedule = node.schedule();
    return result;
}

}  // namespace rotor::logreg
