// Walker's alias method (Vose's construction): O(n) to build, O(1) per draw.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/rng.h"

namespace rotor::lda {

/// Vose's pairing, the heart of every alias table here: `scaled` holds n >= 1 weights scaled so
/// that they average 1 (overwritten). Fills prob[i] in [0, 1] and next[i] so that picking i
/// uniformly, then i with probability prob[i] and next[i] otherwise, draws i with probability
/// scaled[i] / n. Deterministic in its input; `small` and `large` are scratch.
template <class Next>
void pair_alias(std::span<double> scaled, double* prob, Next* next,
                std::vector<std::uint32_t>& small, std::vector<std::uint32_t>& large) {
    small.clear();
    large.clear();
    for (std::size_t i = 0; i < scaled.size(); ++i)
        (scaled[i] < 1.0 ? small : large).push_back(static_cast<std::uint32_t>(i));
    while (!small.empty() && !large.empty()) {
        const std::uint32_t s = small.back();
        small.pop_back();
        const std::uint32_t l = large.back();
        prob[s] = scaled[s];
        next[s] = static_cast<Next>(l);
        scaled[l] = (scaled[l] + scaled[s]) - 1.0;
        if (scaled[l] < 1.0) {
            large.pop_back();
            small.push_back(l);
        }
    }
    // What is left has weight 1 up to rounding.
    for (const std::uint32_t i : large) {
        prob[i] = 1.0;
        next[i] = static_cast<Next>(i);
    }
    for (const std::uint32_t i : small) {
        prob[i] = 1.0;
        next[i] = static_cast<Next>(i);
    }
}

/// Draws an index i in [0, n) with probability weights[i] / Σ weights. build() reuses the
/// object's buffers (no allocation once they reach the largest n built). The table draws from
/// exactly the distribution of the weights it was built from, up to rounding: a caller that
/// needs the probability of an outcome (a Metropolis-Hastings ratio) uses the weights.
/// Not thread-safe; a built table may be read (sample) from several threads.
class AliasTable {
  public:
    /// weights: n >= 1 non-negative values with a positive sum. Deterministic: the same weights
    /// give the same table.
    void build(std::span<const double> weights);
    /// An index drawn with one uniform of `rng`.
    std::uint32_t sample(Rng& rng) const {
        const double u = rng.uniform() * static_cast<double>(prob_.size());
        auto i = static_cast<std::uint32_t>(u);
        if (i >= prob_.size()) i = static_cast<std::uint32_t>(prob_.size() - 1);
        return u - i < prob_[i] ? i : alias_[i];
    }
    std::size_t size() const { return prob_.size(); }
    bool empty() const { return prob_.empty(); }

  private:
    std::vector<double> prob_;          // probability of keeping column i
    std::vector<std::uint32_t> alias_;  // the other outcome of column i
    std::vector<std::uint32_t> small_;  // build scratch
    std::vector<std::uint32_t> large_;
    std::vector<double> scaled_;
};

}  // namespace rotor::lda
