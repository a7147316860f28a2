#include "core/logreg/block_prox.h"

#include <algorithm>
#include <numeric>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::logreg {

std::uint32_t block_at(std::uint64_t t, std::uint32_t blocks, std::uint64_t seed) {
    ROTOR_ASSERT(blocks >= 1, "at least one block");
    std::vector<std::uint32_t> order(blocks);
    std::iota(order.begin(), order.end(), 0u);
    Rng rng = Rng::from({seed, t / blocks});
    for (std::uint32_t i = blocks; i > 1; --i) {
        std::swap(order[i - 1], order[rng.below(i)]);
    }
    return order[t % blocks];
}

BlockProx::BlockProx(std::span<Shard> parts, const BlockProxOptions& options)
    : parts_(parts), options_(options), keys_(union_keys(parts)), w_(keys_.size(), 0.0) {
    ROTOR_ASSERT(options.lambda > 0 && options.eta > 0 && options.blocks >= 1,
                 "BlockProx: bad options");
    blocks_ = split_blocks(keys_, options.blocks, options.seed);
    block_index_.resize(blocks_.size());
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
        for (const std::uint64_t k : blocks_[b]) {
            block_index_[b].push_back(static_cast<std::size_t>(
                std::lower_bound(keys_.begin(), keys_.end(), k) - keys_.begin()));
        }
    }
}

void BlockProx::step(std::uint64_t t) {
    const std::uint32_t b = block_at(t, options_.blocks, options_.seed);
    const std::vector<std::uint64_t>& keys = blocks_[b];
    std::vector<ExactSum> g(keys.size()), u(keys.size());
    for (const Shard& part : parts_) {
        std::vector<ExactSum> pg(keys.size()), pu(keys.size());
        push_block(part, keys, options_.curvature, pg, pu, scratch_);
        for (std::size_t i = 0; i < keys.size(); ++i) {
            g[i].add(pg[i]);
            u[i].add(pu[i]);
        }
    }
    std::vector<double> deltas(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        double& w = w_[block_index_[b][i]];
        const double next = prox_step(w, g[i].value(), u[i].value(),
                                      penalty_of(keys[i], options_.lambda), options_.eta);
        deltas[i] = next - w;
        w = next;
    }
    for (Shard& part : parts_) apply_deltas(part, keys, deltas, scratch_.columns);
}

ProxEvaluation BlockProx::evaluate() {
    std::vector<ExactSum> g(keys_.size()), u(keys_.size());
    ExactSum loss;
    for (const Shard& part : parts_) {
        push_block(part, keys_, options_.curvature, g, u, scratch_);
        push_loss(part, loss);
    }
    std::vector<double> grad(keys_.size());
    for (std::size_t i = 0; i < keys_.size(); ++i) grad[i] = g[i].value();
    ProxEvaluation ev;
    ev.loss = loss.value();
    ev.objective = ev.loss + penalty(keys_, w_, options_.lambda);
    ev.kkt_violation = kkt_violation(keys_, w_, grad, options_.lambda);
    ev.nonzeros = static_cast<std::uint64_t>(
        std::count_if(w_.begin(), w_.end(), [](double v) { return v != 0; }));
    return ev;
}

}  // namespace rotor::logreg
