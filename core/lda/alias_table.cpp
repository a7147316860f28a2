#include "core/lda/alias_table.h"

#include "core/base/error.h"

namespace rotor::lda {

void AliasTable::build(std::span<const double> weights) {
    const std::size_t n = weights.size();
    ROTOR_ASSERT(n > 0, "an alias table needs at least one weight");
    double sum = 0;
    for (double w : weights) sum += w;
    ROTOR_ASSERT(sum > 0, "alias table weights must have a positive sum");
    prob_.resize(n);
    alias_.resize(n);
    scaled_.resize(n);
    small_.clear();
    large_.clear();
    const double scale = static_cast<double>(n) / sum;
    for (std::size_t i = 0; i < n; ++i) {
        scaled_[i] = weights[i] * scale;
        (scaled_[i] < 1.0 ? small_ : large_).push_back(static_cast<std::uint32_t>(i));
    }
    while (!small_.empty() && !large_.empty()) {
        const std::uint32_t s = small_.back();
        small_.pop_back();
        const std::uint32_t l = large_.back();
        prob_[s] = scaled_[s];
        alias_[s] = l;
        scaled_[l] = (scaled_[l] + scaled_[s]) - 1.0;
        if (scaled_[l] < 1.0) {
            large_.pop_back();
            small_.push_back(l);
        }
    }
    // What is left holds probability 1 up to rounding.
    for (std::uint32_t i : large_) {
        prob_[i] = 1.0;
        alias_[i] = i;
    }
    for (std::uint32_t i : small_) {
        prob_[i] = 1.0;
        alias_[i] = i;
    }
}

}  // namespace rotor::lda
