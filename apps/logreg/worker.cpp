#include "apps/logreg/worker.h"

#include <algorithm>

namespace rotor::logreg {

Worker::Worker(Shard& part, const BlockProxOptions& o)
    : part_(part), options_(o), w_(part.keys().size(), 0.0) {
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

std::uint32_t Worker::push_values(std::uint64_t t, std::vector<double>& values) {
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

void Worker::apply(std::uint32_t b, std::span<const double> pulled) {
    std::vector<double> deltas(pulled.size());
    for (std::size_t i = 0; i < pulled.size(); ++i) {
        double& w = w_[index_[b][i]];
        deltas[i] = pulled[i] - w;
        w = pulled[i];
    }
    apply_deltas(part_, blocks_[b], deltas, scratch_.columns);
}

}  // namespace rotor::logreg
