#include "core/logreg/block_prox.h"

#include <algorithm>
#include <numeric>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::logreg {

namespace {

/// Pass `pass`'s permutation of the blocks.
void draw_order(std::uint64_t pass, std::uint64_t seed, std::vector<std::uint32_t>& order) {
    std::iota(order.begin(), order.end(), 0u);
    Rng rng = Rng::from({seed, pass});
    for (auto i = static_cast<std::uint32_t>(order.size()); i > 1; --i) {
        std::swap(order[i - 1], order[rng.below(i)]);
    }
}

}  // namespace

std::uint32_t block_at(std::uint64_t t, std::uint32_t blocks, std::uint64_t seed) {
    ROTOR_ASSERT(blocks >= 1, "at least one block");
    std::vector<std::uint32_t> order(blocks);
    draw_order(t / blocks, seed, order);
    return order[t % blocks];
}

BlockOrder::BlockOrder(std::uint32_t blocks, std::uint64_t seed)
    : blocks_(blocks), seed_(seed), order_(blocks) {
    ROTOR_ASSERT(blocks >= 1, "at least one block");
}

std::uint32_t BlockOrder::at(std::uint64_t t) {
    const std::uint64_t pass = t / blocks_;
    if (pass != pass_) {
        draw_order(pass, seed_, order_);
        pass_ = pass;
    }
    return order_[t % blocks_];
}

BlockProx::BlockProx(std::span<Shard> parts, const BlockProxOptions& options)
    : parts_(parts),
      options_(options),
      keys_(union_keys(parts)),
      w_(keys_.size(), 0.0),
      order_(std::max<std::uint32_t>(options.blocks, 1), options.seed) {
    ROTOR_ASSERT(options.lambda > 0 && options.eta > 0 && options.blocks >= 1,
                 "BlockProx: bad options");
    blocks_ = split_blocks(keys_, options.blocks, options.seed, options.groups.get());
    block_index_.resize(blocks_.size());
    slices_.resize(blocks_.size());
    scratches_.resize(parts_.size());
    for (std::size_t p = 0; p < parts_.size(); ++p) scratches_[p].reserve(parts_[p].examples());
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
        for (const std::uint64_t k : blocks_[b]) {
            block_index_[b].push_back(static_cast<std::size_t>(
                std::lower_bound(keys_.begin(), keys_.end(), k) - keys_.begin()));
        }
        for (const Shard& part : parts_) {
            slices_[b].push_back(column_slices(part, blocks_[b], 0, part.examples()));
        }
    }
}

void BlockProx::step(std::uint64_t t) {
    const std::uint32_t b = order_.at(t);
    const std::vector<std::uint64_t>& keys = blocks_[b];
    const std::size_t n = keys.size();
    g_.assign(n, core::ExactSum{});
    u_.assign(n, core::ExactSum{});
    for (std::size_t p = 0; p < parts_.size(); ++p) {
        pg_.assign(n, core::ExactSum{});
        pu_.assign(n, core::ExactSum{});
        scratches_[p].next_block();
        push_slices(parts_[p], slices_[b][p], options_.curvature, pg_, pu_, scratches_[p]);
        for (std::size_t i = 0; i < n; ++i) {
            g_[i].add(pg_[i]);
            u_[i].add(pu_[i]);
        }
    }
    deltas_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        double& w = w_[block_index_[b][i]];
        const double next =
            prox_step(w, g_[i].value(), u_[i].value(), penalty_of(keys[i], options_.lambda),
                      options_.eta, options_.max_step);
        deltas_[i] = next - w;
        w = next;
    }
    for (std::size_t p = 0; p < parts_.size(); ++p) {
        apply_slices(parts_[p], slices_[b][p], deltas_);
    }
}

ProxEvaluation BlockProx::evaluate() {
    std::vector<core::ExactSum> g(keys_.size()), u(keys_.size());
    core::ExactSum loss;
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
