#include "apps/logreg/trainer.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <deque>
#include <limits>
#include <optional>
#include <span>
#include <thread>
#include <unordered_map>

#include "apps/logreg/worker.h"
#include "comm/agreed.h"
#include "core/base/error.h"

namespace rotor::logreg {
namespace {

using comm::KvNode;
constexpr std::size_t kLimbs = core::ExactSum::kLimbs;

/// The sums pushed for one key of an iteration: exact (limbs pushed) or in double, added in
/// order of arrival (float32 pushed).
struct PendingSum {
    std::uint64_t key;
    core::ExactSum g, u;
    double gf = 0, uf = 0;

    double gradient(bool exact) const noexcept { return exact ? g.value() : gf; }
    double curvature(bool exact) const noexcept { return exact ? u.value() : uf; }
};

/// A server's state: w (a hash map: a block's keys are spread over the key space, and the
/// proximal step of a key does not depend on the others, so the order of visiting them does not
/// matter), and the sums of the iterations not yet complete, each sorted by key (pushes arrive
/// sorted and are merged: no allocation per key).
struct ServerState {
    std::unordered_map<std::uint64_t, double> w;
    std::map<std::uint64_t, std::vector<PendingSum>> pending;
    std::vector<PendingSum> merged;  ///< scratch of on_push
    // Filters: keys a worker's filter dropped from an incomplete iteration (not updated in it;
    // appended as they come, sorted once when the iteration completes), and the last
    // aggregated gradient of each key (sent with w when the pulls carry it).
    std::map<std::uint64_t, std::vector<std::uint64_t>> dropped;
    std::unordered_map<std::uint64_t, double> g_last;
};

core::ExactSum from_values(std::span<const double> v) {
    std::array<std::int64_t, kLimbs> limbs{};
    for (std::size_t i = 0; i < kLimbs; ++i) limbs[i] = static_cast<std::int64_t>(v[i]);
    return core::ExactSum::from_limbs(limbs);
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
                                     double kkt_delta, bool exact) {
    return {
        .on_push =
            [&s, exact](std::uint64_t t, int, std::span<const std::uint64_t> keys,
                        std::span<const double> values) {
                const std::size_t width = exact ? kPushWidth : kFloatPushWidth;
                auto& sums = s.pending[t];
                s.merged.clear();
                s.merged.reserve(sums.size() + keys.size());
                std::size_t a = 0;
                for (std::size_t i = 0; i < keys.size(); ++i) {
                    while (a < sums.size() && sums[a].key < keys[i]) s.merged.push_back(sums[a++]);
                    PendingSum p{keys[i], {}, {}};
                    if (a < sums.size() && sums[a].key == keys[i]) p = sums[a++];
                    if (exact) {
                        p.g.add(from_values(values.subspan(i * width, kLimbs)));
                        p.u.add(from_values(values.subspan(i * width + kLimbs, kLimbs)));
                    } else {
                        p.gf += values[i * width];
                        p.uf += values[i * width + 1];
                    }
                    s.merged.push_back(p);
                }
                s.merged.insert(s.merged.end(), sums.begin() + static_cast<std::ptrdiff_t>(a),
                                sums.end());
                sums.swap(s.merged);
            },
        .on_complete =
            [&s, o, gradient, exact](std::uint64_t t) {
                const auto it = s.pending.find(t);
                const auto dropped = s.dropped.find(t);
                std::span<const std::uint64_t> skip;
                if (dropped != s.dropped.end()) {
                    auto& d = dropped->second;
                    std::sort(d.begin(), d.end());
                    skip = d;
                }
                if (it != s.pending.end()) {
                    std::size_t next_skip = 0;  // both sorted by key: one merge walk
                    for (const PendingSum& p : it->second) {
                        while (next_skip < skip.size() && skip[next_skip] < p.key) ++next_skip;
                        if (next_skip < skip.size() && skip[next_skip] == p.key) continue;
                        double& w = s.w[p.key];
                        const double g = p.gradient(exact);
                        w = prox_step(w, g, p.curvature(exact), penalty_of(p.key, o.lambda), o.eta,
                                      o.max_step);
                        if (gradient) s.g_last[p.key] = g;
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
                    if (gradient) out.push_back(screen_value(s, k, w, o.lambda, kkt_delta));
                }
            },
        .on_push_dropped =
            [&s](std::uint64_t t, int, std::span<const std::uint64_t> keys) {
                auto& d = s.dropped[t];
                d.insert(d.end(), keys.begin(), keys.end());
            },
    };
}

/// Sleeps (factor - 1) times `compute_s` (--simulate-straggler).
void straggle(double factor, double compute_s) {
    if (factor <= 1) return;
    std::this_thread::sleep_for(std::chrono::duration<double>((factor - 1) * compute_s));
}

/// The clock of the compute seconds a straggler scales: the process's CPU seconds over its
/// threads, what the work takes on cores of its own. Wall seconds would also count the time
/// other ranks held the core on an oversubscribed host, so the straggler would sleep longer
/// while the others compute alongside it (all at once with τ = 0, rarely with delay) and the
/// delay's gain would be overstated. Only read for a straggler (a system call).
double compute_clock(double threads) {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec)) / threads;
}

/// Runs iterations [o.first, o.iterations); the kv engine counts them from 0. The last pull
/// taken before a push is held and applied together with that push (Worker::apply_and_push: one
/// hand-off to the threads instead of two); every other is applied when taken. Either way every
/// push sees every pull taken before it, so the numbers are those of applying at once.
void run_worker(KvNode& node, Worker& worker, const DelayedOptions& o, double straggler_factor) {
    std::deque<std::pair<std::uint64_t, std::pair<std::uint32_t, std::uint64_t>>> pulls;
    std::vector<double> values;
    std::optional<std::pair<std::uint32_t, std::vector<double>>> held;  // block, pulled
    double compute_s = 0;  // of this iteration: pushes and applied pulls (straggler only)
    const bool slow = straggler_factor > 1;
    const double threads = std::max(1, o.threads);
    const auto clock = [&] { return slow ? compute_clock(threads) : 0.0; };
    const auto apply_held = [&] {
        if (!held) return;
        const double start = clock();
        worker.apply(held->first, held->second);
        compute_s += clock() - start;
        held.reset();
    };
    const auto take = [&] {
        const auto [t, bp] = pulls.front();
        pulls.pop_front();
        std::vector<double> pulled = node.wait_pull(bp.second);
        apply_held();
        held.emplace(bp.first, std::move(pulled));
    };
    for (std::uint64_t g = o.first; g < o.iterations; ++g) {
        const std::uint64_t t = g - o.first;
        node.begin_iteration(t);
        // Pulls that arrived meanwhile are applied before computing (fresher margins).
        while (!pulls.empty() && node.pull_ready(pulls.front().second.second)) take();
        const double start = clock();
        // g: what the kkt filter sees (KvOptions::filter_first)
        const std::uint32_t b = held
                                    ? worker.apply_and_push(held->first, held->second, g, values, g)
                                    : worker.push_values(g, values, g);
        held.reset();
        straggle(straggler_factor, compute_s + clock() - start);
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
    apply_held();
    if (o.filters.lossy_pulls() && o.iterations > o.first) {  // filters: end with the servers' w
        worker.apply_all(
            node.wait_pull(node.pull(o.iterations - o.first - 1, worker.keys(), true)));
    }
}

}  // namespace

DelayedResult train_delayed(comm::Communicator& comm, const comm::KvLayout& layout, Shard* part,
                            const DelayedOptions& o, const DelayedStart& start,
                            DelayedMemory* memory) {
    ServerState state;
    const auto self = std::find(layout.servers.begin(), layout.servers.end(), comm.rank());
    if (self != layout.servers.end()) {
        const auto s = static_cast<std::size_t>(self - layout.servers.begin());
        for (const auto& [k, w] : start.server_weights)
            if (layout.server_of(k) == s) state.w.emplace(k, w);
    }
    const bool exact = o.exact_pushes();
    comm::KvOptions kv;
    kv.delay = o.delay;
    kv.push_width = exact ? kPushWidth : kFloatPushWidth;
    kv.push_float32 = !exact;
    kv.filter_first = o.first;
    const bool gradient = o.filters.pulls_gradient();
    kv.pull_width = gradient ? 2 : 1;
    kv.timeout_s = o.timeout_s;
    // Filters: a worker's KKT screen, read by its kkt filter, fed by its pulls; both carried
    // over from the last call when there is a memory.
    DelayedMemory own;
    DelayedMemory& m = memory != nullptr ? *memory : own;
    if (part != nullptr && o.filters.has("kkt") && !m.screen) {
        m.screen = std::make_unique<KktScreen>(KktOptions{.lambda = o.prox.lambda,
                                                          .delta = o.filters.kkt_delta,
                                                          .blocks = o.prox.blocks,
                                                          .refresh = o.filters.kkt_refresh});
    }
    KktScreen* screen = m.screen.get();
    // A server's ĝ_k: without them its first answers of a call would tell every screened key
    // "no ĝ yet" (+∞), and each would be pushed once more a call.
    state.g_last.swap(m.last_gradient);
    if (!m.filters) m.filters = make_filter_stack(o.filters, screen, exact, o.prox.blocks);
    m.filters->clear_stats();  // this call's bytes only
    KvNode node(comm, layout, kv,
                server_handler(state, o.prox, gradient, o.filters.kkt_delta, exact),
                std::move(*m.filters));
    m.filters.reset();
    ROTOR_ASSERT(node.is_worker() == (part != nullptr), "a part exactly on workers");
    DelayedResult result;
    node.run([&] {
        if (node.is_worker()) {
            if (o.threads > 1 && !m.threads)
                m.threads = std::make_unique<WorkerThreads>(o.threads, sched::PinMode::kAuto);
            Worker worker(*part, o.prox, o.threads, start.worker_weights, screen, kv.pull_width,
                          exact, sched::PinMode::kAuto, m.threads.get());
            run_worker(node, worker, o, comm.rank() == o.straggler_rank ? o.straggler_factor : 1.0);
            result.worker_weights = worker.weights();
        }
    });
    result.server_weights.insert(state.w.begin(), state.w.end());
    result.stats = node.stats();
    result.schedule = node.schedule();
    m.filters = node.release_filters();
    state.g_last.swap(m.last_gradient);
    return result;
}

}  // namespace rotor::logreg
