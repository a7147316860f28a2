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
    const double scale = static_cast<double>(n) / sum;
    for (std::size_t i = 0; i < n; ++i) scaled_[i] = weights[i] * scale;
    pair_alias<std::uint32_t>(scaled_, prob_.data(), alias_.data(), small_, large_);
}

}  // namespace rotor::lda
