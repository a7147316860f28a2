#include "core/logreg/objective.h"

#include <algorithm>
#include <cmath>

#include "core/base/error.h"

namespace rotor::logreg {

void push_block(const Shard& part, std::span<const std::uint64_t> keys, Curvature curvature,
                std::span<ExactSum> g, std::span<ExactSum> u, BlockScratch& s) {
    ROTOR_ASSERT(g.size() == keys.size() && u.size() == keys.size(), "one sum per key");
    part.match(keys, s.columns);
    const auto offsets = part.offsets();
    const auto rows = part.rows();
    const auto values = part.values();
    const auto labels = part.labels();
    const auto margins = part.margins();
    if (s.counts.size() != part.examples()) {
        s.counts.assign(part.examples(), 0);
        s.slope.assign(part.examples(), 0.0);
        s.curve.assign(part.examples(), 0.0);
    }
    for (const std::int64_t c : s.columns) {
        if (c < 0) continue;
        for (std::uint64_t e = offsets[c]; e < offsets[c + 1]; ++e) {
            const std::uint32_t i = rows[e];
            if (s.counts[i]++ != 0) continue;
            const double y = labels[i];
            const double sm = 1.0 / (1.0 + std::exp(y * margins[i]));  // σ(−y m)
            s.slope[i] = -y * sm;
            s.curve[i] = curvature == Curvature::kBound ? 0.25 : sm * (1.0 - sm);
        }
    }
    for (std::size_t t = 0; t < keys.size(); ++t) {
        const std::int64_t c = s.columns[t];
        if (c < 0) continue;
        for (std::uint64_t e = offsets[c]; e < offsets[c + 1]; ++e) {
            const std::uint32_t i = rows[e];
            const double x = values[e];
            g[t].add(s.slope[i] * x);
            u[t].add(s.curve[i] * s.counts[i] * x * x);
        }
    }
    for (const std::int64_t c : s.columns) {
        if (c < 0) continue;
        for (std::uint64_t e = offsets[c]; e < offsets[c + 1]; ++e) s.counts[rows[e]] = 0;
    }
}

void apply_deltas(Shard& part, std::span<const std::uint64_t> keys, std::span<const double> deltas,
                  std::vector<std::int64_t>& columns) {
    ROTOR_ASSERT(deltas.size() == keys.size(), "one delta per key");
    part.match(keys, columns);
    const auto offsets = part.offsets();
    const auto rows = part.rows();
    const auto values = part.values();
    const auto margins = part.margins();
    for (std::size_t t = 0; t < keys.size(); ++t) {
        const std::int64_t c = columns[t];
        if (c < 0 || deltas[t] == 0) continue;
        for (std::uint64_t e = offsets[c]; e < offsets[c + 1]; ++e) {
            margins[rows[e]] += deltas[t] * values[e];
        }
    }
}

void set_margins(Shard& part, std::span<const std::uint64_t> keys, std::span<const double> w) {
    ROTOR_ASSERT(w.size() == keys.size(), "one weight per key");
    std::fill(part.margins().begin(), part.margins().end(), 0.0);
    std::vector<std::int64_t> columns;
    apply_deltas(part, keys, w, columns);
}

double log1pexp_neg(double z) noexcept {
    return z > 0 ? std::log1p(std::exp(-z)) : -z + std::log1p(std::exp(z));
}

void push_loss(const Shard& part, ExactSum& loss) {
    const auto labels = part.labels();
    const auto margins = part.margins();
    for (std::uint32_t i = 0; i < part.examples(); ++i) {
        loss.add(log1pexp_neg(labels[i] * margins[i]));
    }
}

double penalty(std::span<const std::uint64_t> keys, std::span<const double> w, double lambda) {
    ExactSum l1;
    for (std::size_t t = 0; t < keys.size(); ++t) {
        if (keys[t] != kInterceptKey) l1.add(std::fabs(w[t]));
    }
    return lambda * l1.value();
}

double kkt_violation(std::span<const std::uint64_t> keys, std::span<const double> w,
                     std::span<const double> g, double lambda) {
    double worst = 0;
    for (std::size_t t = 0; t < keys.size(); ++t) {
        const double l = penalty_of(keys[t], lambda);
        const double v = w[t] != 0 ? std::fabs(g[t] + std::copysign(l, w[t]))
                                   : std::max(0.0, std::fabs(g[t]) - l);
        worst = std::max(worst, v);
    }
    return worst;
}

}  // namespace rotor::logreg
