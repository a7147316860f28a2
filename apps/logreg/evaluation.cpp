#include "apps/logreg/evaluation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "comm/collectives.h"

namespace rotor::logreg {
namespace {

constexpr std::size_t kLimbs = core::ExactSum::kLimbs;

core::ExactSum sum_at(const std::vector<std::int64_t>& limbs, std::size_t at) {
    std::array<std::int64_t, kLimbs> l{};
    std::copy_n(limbs.begin() + static_cast<std::ptrdiff_t>(at), kLimbs, l.begin());
    return core::ExactSum::from_limbs(l);
}

/// The full gradient of the loss over the part's keys, as core::ExactSum limbs (kLimbs a key).
std::vector<std::int64_t> gradient_limbs(const Shard& part, Curvature curvature) {
    const auto keys = part.keys();
    std::vector<core::ExactSum> g(keys.size()), u(keys.size());
    BlockScratch scratch;
    push_block(part, keys, curvature, g, u, scratch);
    std::vector<std::int64_t> out;
    out.reserve(kLimbs * keys.size());
    for (const core::ExactSum& s : g)
        for (const std::int64_t l : s.to_limbs()) out.push_back(l);
    return out;
}

/// Rank 0: every key's gradient, summed exactly over the workers' keys and limbs.
std::map<std::uint64_t, core::ExactSum> combined(
    const std::vector<std::vector<std::uint64_t>>& keys,
    const std::vector<std::vector<std::int64_t>>& limbs) {
    std::map<std::uint64_t, core::ExactSum> g;
    for (std::size_t q = 0; q < keys.size(); ++q)
        for (std::size_t i = 0; i < keys[q].size(); ++i)
            g[keys[q][i]].add(sum_at(limbs[q], i * kLimbs));
    return g;
}

/// Rank 0: the KKT violation, the min-norm subgradient's 1-norm of w (the model) and the zero
/// weights that violate the optimality conditions (|g_k| > λ_k: Evaluation::violators), given
/// every worker's keys and gradient limbs.
void optimality_of(const Model& m, const std::vector<std::vector<std::uint64_t>>& keys,
                   const std::vector<std::vector<std::int64_t>>& limbs, double lambda,
                   Evaluation& e) {
    const auto g = combined(keys, limbs);
    std::vector<std::uint64_t> ks;
    std::vector<double> ws, gs;
    std::size_t j = 0;  // m.keys is increasing, as is the map
    for (const auto& [k, s] : g) {
        while (j < m.keys.size() && m.keys[j] < k) ++j;
        double w = 0;
        if (k == kInterceptKey) {
            w = m.intercept;
        } else if (j < m.keys.size() && m.keys[j] == k) {
            w = m.weights[j];
        }
        ks.push_back(k);
        ws.push_back(w);
        gs.push_back(s.value());
        if (w == 0 && subgradient_of(0, gs.back(), penalty_of(k, lambda)) > 0)
            e.violators.push_back(k);
    }
    e.kkt_violation = kkt_violation(ks, ws, gs, lambda);
    e.subgradient = subgradient_norm(ks, ws, gs, lambda);
}

}  // namespace

Evaluation evaluate(comm::Communicator& world, const Shard* part, const DelayedResult& r,
                    const BlockProxOptions& o, const Examples* test, bool kkt) {
    core::ExactSum loss, l1;
    if (part != nullptr) push_loss(*part, loss);
    std::vector<std::uint64_t> keys;
    std::vector<double> weights;
    for (const auto& [k, w] : r.server_weights) {
        if (w == 0) continue;
        if (k != kInterceptKey) l1.add(std::fabs(w));
        keys.push_back(k);
        weights.push_back(w);
    }
    std::vector<std::int64_t> limbs;
    for (const std::int64_t l : loss.to_limbs()) limbs.push_back(l);
    for (const std::int64_t l : l1.to_limbs()) limbs.push_back(l);
    world.allreduce_sum(limbs);
    const auto all_keys = comm::gather(world, keys, 0, "model keys");
    const auto all_weights = comm::gather(world, weights, 0, "model weights");
    std::vector<std::vector<std::uint64_t>> grad_keys;
    std::vector<std::vector<std::int64_t>> grad_limbs;
    if (kkt) {
        std::vector<std::uint64_t> mine;
        std::vector<std::int64_t> g;
        if (part != nullptr) {
            mine.assign(part->keys().begin(), part->keys().end());
            g = gradient_limbs(*part, o.curvature);
        }
        grad_keys = comm::gather(world, mine, 0, "gradient keys");
        grad_limbs = comm::gather(world, g, 0, "gradient limbs");
    }
    Evaluation e;
    e.loss = sum_at(limbs, 0).value();
    e.objective = e.loss + o.lambda * sum_at(limbs, kLimbs).value();
    if (world.rank() != 0) return e;
    Model& m = e.model;
    m.lambda = o.lambda;
    m.objective = e.objective;
    for (std::size_t q = 0; q < all_keys.size(); ++q) {  // servers own increasing key ranges
        for (std::size_t i = 0; i < all_keys[q].size(); ++i) {
            ++e.nonzeros;
            if (all_keys[q][i] == kInterceptKey) {
                m.intercept = all_weights[q][i];
            } else {
                m.keys.push_back(all_keys[q][i]);
                m.weights.push_back(all_weights[q][i]);
            }
        }
    }
    if (kkt) optimality_of(m, grad_keys, grad_limbs, o.lambda, e);
    if (test != nullptr) {
        std::vector<double> margins(test->size());
        for (std::size_t i = 0; i < test->size(); ++i)
            margins[i] = m.margin(test->keys_of(i), test->values_of(i));
        e.test = compute_metrics(margins, test->labels);
    }
    return e;
}

double subgradient_at_zero(comm::Communicator& world, const Shard* part, double lambda) {
    std::vector<std::uint64_t> keys;
    std::vector<std::int64_t> limbs;
    if (part != nullptr) {
        // The loss's gradient at w = 0 (every margin 0, sigma(0) = 1/2): -1/2 sum_i y_i x_ik.
        const auto offsets = part->offsets();
        const auto rows = part->rows();
        const auto values = part->values();
        const auto labels = part->labels();
        keys.assign(part->keys().begin(), part->keys().end());
        limbs.reserve(kLimbs * keys.size());
        for (std::size_t c = 0; c < keys.size(); ++c) {
            core::ExactSum g;
            for (std::uint64_t e = offsets[c]; e < offsets[c + 1]; ++e)
                g.add(-0.5 * labels[rows[e]] * values[e]);
            for (const std::int64_t l : g.to_limbs()) limbs.push_back(l);
        }
    }
    const auto all_keys = comm::gather(world, keys, 0, "gradient keys");
    const auto all_limbs = comm::gather(world, limbs, 0, "gradient limbs");
    double norm = 0;
    if (world.rank() == 0)
        for (const auto& [k, s] : combined(all_keys, all_limbs))
            norm += subgradient_of(0.0, s.value(), penalty_of(k, lambda));
    std::vector<double> out{norm};
    comm::broadcast(world, out, 0, "subgradient at zero");
    return out[0];
}

}  // namespace rotor::logreg
