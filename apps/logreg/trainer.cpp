#include "apps/logreg/trainer.h"

#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <optional>
#include <set>

#include "comm/agreed.h"
#include "core/base/error.h"

namespace rotor::logreg {
namespace {

using comm::KvNode;
constexpr std::size_t kLimbs = ExactSum::kLimbs;
constexpr std::size_t kPushWidth = 2 * kLimbs;  // g's limbs, then u's

/// A server's state: w, and the sums of the iterations not yet complete.
struct ServerState {
    std::map<std::uint64_t, double> w;
    std::map<std::uint64_t, std::map<std::uint64_t, std::pair<ExactSum, ExactSum>>> pending;
    // Filters: keys a worker's filter dropped from an incomplete iteration (not updated in it),
    // and the last aggregated gradient of each key (sent with w when the pulls carry it).
    std::map<std::uint64_t, std::set<std::uint64_t>> dropped;
    std::map<std::uint64_t, double> g_last;
};

ExactSum from_values(std::span<const double> v) {
    std::array<std::int64_t, kLimbs> limbs{};
    for (std::size_t i = 0; i < kLimbs; ++i) limbs[i] = static_cast<std::int64_t>(v[i]);
    return ExactSum::from_limbs(limbs);
}

/// The value a pull answer carries after w_k under the KKT filter: the last aggregated gradient
/// ĝ_k reduced to what the workers' rule (core/logreg/kkt_screen.h) reads: 0 when w_k = 0 and
/// |ĝ_k| ≤ λ_k − δ (screened), +∞ when not, or when no ĝ_k exists yet, 0 where w_k ≠ 0 (the rule
/// skips only zeros). The rule answers on it as on ĝ_k itself, and these answers compress,
/// where the exact ĝ_k (a random double a key) would double the servers' bytes.
double screen_value(const ServerState& s, std::uint64_t key, double w, double lambda,
                    double delta) {
    if (w != 0) return 0;
    const auto g = s.g_last.find(key);
    if (g == s.g_last.end()) return std::numeric_limits<double>::infinity();
    return kkt_skippable(0.0, g->second, penalty_of(key, lambda), delta)
               ? 0.0
               : std::numeric_limits<double>::infinity();
}

comm::KvServerHandler server_handler(ServerState& s, const BlockProxOptions& o, bool gradient,
                                     double kkt_delta) {
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
            [&s, o, gradient](std::uint64_t t) {
                const auto it = s.pending.find(t);
                const auto dropped = s.dropped.find(t);
                if (it != s.pending.end()) {
                    for (const auto& [key, gu] : it->second) {
                        if (dropped != s.dropped.end() && dropped->second.contains(key)) continue;
                        double& w = s.w[key];
                        w = prox_step(w, gu.first.value(), gu.second.value(),
                                      penalty_of(key, o.lambda), o.eta);
                        if (gradient) s.g_last[key] = gu.first.value();
                    }
                    s.pending.erase(it);
                }
                if (dropped != s.dropped.end()) s.dropped.erase(dropped);
            },
        .on_pull =
            [&s, o, gradient, kkt_delta](std::span<const std::uint64_t> keys,
                                         std::vector<double>& out) {
                for (const std::uint64_t k : keys) {
                    const auto it = s.w.find(k);
                    const double w = it == s.w.end() ? 0.0 : it->second;
                    out.push_back(w);
                    if (!gradient) continue;
                    out.push_back(screen_value(s, k, w, o.lambda, kkt_delta));
                }
            },
        .on_push_dropped =
            [&s](std::uint64_t t, int, std::span<const std::uint64_t> keys) {
                s.dropped[t].insert(keys.begin(), keys.end());
            },
    };
}

/// A worker's state: its part, its blocks and its copy of w over its keys.
class Worker {
  public:
    /// `screen` (null without the KKT filter) learns w_k and ĝ_k from pulls of `pull_width`
    /// values per key (w_k, then ĝ_k when 2).
    Worker(Shard& part, const BlockProxOptions& o, KktScreen* screen, std::size_t pull_width)
        : part_(part),
          options_(o),
          w_(part.keys().size(), 0.0),
          screen_(screen),
          pull_width_(pull_width) {
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
        std::vector<double> deltas(blocks_[b].size());
        for (std::size_t i = 0; i < deltas.size(); ++i) {
            double& w = w_[index_[b][i]];
            const double next = pulled[i * pull_width_];
            deltas[i] = next - w;
            w = next;
            if (screen_ != nullptr)
                screen_->observe(blocks_[b][i], next, pulled[i * pull_width_ + 1]);
        }
        apply_deltas(part_, blocks_[b], deltas, scratch_.columns);
    }
    /// Takes every key's pulled weight (an exact pull of part.keys()).
    void apply_all(std::span<const double> pulled) {
        std::vector<double> deltas(w_.size());
        for (std::size_t i = 0; i < w_.size(); ++i) {
            deltas[i] = pulled[i * pull_width_] - w_[i];
            w_[i] = pulled[i * pull_width_];
        }
        apply_deltas(part_, part_.keys(), deltas, scratch_.columns);
    }
    std::span<const std::uint64_t> keys() const { return part_.keys(); }
    std::span<const std::uint64_t> block(std::uint32_t b) const { return blocks_[b]; }
    const std::vector<double>& weights() const { return w_; }

  private:
    Shard& part_;
    BlockProxOptions options_;
    std::vector<double> w_;
    std::vector<std::vector<std::uint64_t>> blocks_;
    std::vector<std::vector<std::size_t>> index_;
    BlockScratch scratch_;
    KktScreen* screen_;
    std::size_t pull_width_;
};

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
    if (o.filters.lossy_pulls() && o.iterations > 0) {  // filters: end with the servers' w
        worker.apply_all(node.wait_pull(node.pull(o.iterations - 1, worker.keys(), true)));
    }
}

}  // namespace

DelayedResult train_delayed(comm::Communicator& comm, const comm::KvLayout& layout, Shard* part,
                            const DelayedOptions& o) {
    ServerState state;
    comm::KvOptions kv;
    kv.delay = o.delay;
    kv.push_width = kPushWidth;
    const bool gradient = o.filters.pulls_gradient();
    kv.pull_width = gradient ? 2 : 1;
    kv.timeout_s = o.timeout_s;
    // Filters: a worker's KKT screen, read by its kkt filter, fed by its pulls.
    std::optional<KktScreen> screen;
    if (part != nullptr && o.filters.has("kkt")) {
        screen.emplace(KktOptions{.lambda = o.prox.lambda,
                                  .delta = o.filters.kkt_delta,
                                  .blocks = o.prox.blocks,
                                  .refresh = o.filters.kkt_refresh});
    }
    KvNode node(comm, layout, kv, server_handler(state, o.prox, gradient, o.filters.kkt_delta),
                make_filter_stack(o.filters, screen ? &*screen : nullptr));
    ROTOR_ASSERT(node.is_worker() == (part != nullptr), "a part exactly on workers");
    DelayedResult result;
    try {
        if (node.is_worker()) {
            Worker worker(*part, o.prox, screen ? &*screen : nullptr, kv.pull_width);
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
    result.server_weights = std::move(state.w);
    result.stats = node.stats();
    result.schedule = node.schedule();
    return result;
}

}  // namespace rotor::logreg
