#include "core/logreg/objective.h"

#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/logreg/sigmoid.h"

namespace rotor::logreg {

ColumnSlices column_slices(const Shard& part, std::span<const std::uint64_t> keys,
                           std::uint32_t row_begin, std::uint32_t row_end) {
    const auto part_keys = part.keys();
    const auto offsets = part.offsets();
    const auto rows = part.rows();
    const auto values = part.values();
    ColumnSlices out;
    out.begin.assign(keys.size(), 0);
    out.end.assign(keys.size(), 0);
    out.max_abs.assign(keys.size(), 0.0);
    const bool all = row_begin == 0 && row_end >= part.examples();
    auto from = part_keys.begin();
    for (std::size_t t = 0; t < keys.size(); ++t) {
        from = std::lower_bound(from, part_keys.end(), keys[t]);
        if (from == part_keys.end()) break;
        if (*from != keys[t]) continue;
        const auto c = static_cast<std::size_t>(from - part_keys.begin());
        const auto first = rows.begin() + static_cast<std::ptrdiff_t>(offsets[c]);
        const auto last = rows.begin() + static_cast<std::ptrdiff_t>(offsets[c + 1]);
        const auto lo = all ? first : std::lower_bound(first, last, row_begin);
        const auto hi = all ? last : std::lower_bound(lo, last, row_end);
        out.begin[t] = static_cast<std::uint64_t>(lo - rows.begin());
        out.end[t] = static_cast<std::uint64_t>(hi - rows.begin());
        for (std::uint64_t e = out.begin[t]; e < out.end[t]; ++e) {
            out.max_abs[t] = std::max(out.max_abs[t], std::fabs(values[e]));
        }
    }
    return out;
}

namespace {

/// Largest sum of term magnitudes added in an int64 before it goes into the core::ExactSum: 2^13 *
/// 2^48 = 2^61, far from int64's 2^63 (and every term below core::ExactSum's 2^15 single
/// conversion).
constexpr double kRunBound = 0x1p13;

/// g += Σ slope_i x_ik and u += Σ curve_i n_ib x_ik² over entries [e, end) of one key, each
/// term rounded as core::ExactSum::add rounds it. `per_term` bounds every term's magnitude (<
/// 2^13): runs of kRunBound / per_term terms are summed in int64s without checks, then added
/// exactly.
void sum_key_bounded(const std::uint32_t* rows, const double* values, const TouchedExample* touched,
                     std::uint64_t e, std::uint64_t end, double per_term, core::ExactSum& g,
                     core::ExactSum& u) {
    const double room = std::floor(kRunBound / per_term);
    const std::uint64_t run =
        room >= 0x1p40 ? std::uint64_t{1} << 40 : static_cast<std::uint64_t>(room);  // >= 1
    while (e < end) {
        const std::uint64_t stop = end - e > run ? e + run : end;
        std::int64_t gs = 0, us = 0;
        for (; e < stop; ++e) {
            const TouchedExample& x = touched[rows[e]];
            const double v = values[e];
            gs += core::ExactSum::fixed_of_small(x.slope * v);
            us += core::ExactSum::fixed_of_small(x.curve * x.count * v * v);
        }
        g.add_fixed_value(gs);
        u.add_fixed_value(us);
    }
}

}  // namespace

void push_slices(const Shard& part, const ColumnSlices& slices, Curvature curvature,
                 std::span<core::ExactSum> g, std::span<core::ExactSum> u, BlockScratch& s,
                 std::span<const std::uint8_t> skip) {
    const std::size_t n = slices.begin.size();
    ROTOR_ASSERT(g.size() == n && u.size() == n && slices.end.size() == n, "one sum per key");
    ROTOR_ASSERT(skip.empty() || skip.size() == n, "one skip flag per key");
    const auto kept = [&skip](std::size_t t) { return skip.empty() || skip[t] == 0; };
    ROTOR_ASSERT(s.examples.size() == part.examples(), "push_slices: scratch not reserved");
    ROTOR_ASSERT(s.block != 0, "push_slices: next_block() not called");
    const std::uint32_t block = s.block;
    const std::uint32_t* rows = part.rows().data();
    const double* values = part.values().data();
    const std::int8_t* labels = part.labels().data();
    const double* margins = part.margins().data();
    TouchedExample* touched = s.examples.data();
    const std::uint64_t* begin = slices.begin.data();
    const std::uint64_t* end = slices.end.data();
    const bool bound = curvature == Curvature::kBound;
    std::uint32_t most = 1;  // the largest n_ib
    // Examples whose margin moved since their slope was computed wait here, to get their σ two
    // at a time (sigmoid_neg on a DoublePair); an odd one out is paired with itself.
    DoublePair nan_seen{};  // += sm − sm: 0 while every σ is a number (σ is never ±∞)
    constexpr std::size_t kWaiting = 64;
    std::uint32_t waiting[kWaiting];
    const auto refresh = [&](std::size_t n_waiting) {
        if (n_waiting % 2 == 1) waiting[n_waiting] = waiting[n_waiting - 1];
        for (std::size_t w = 0; w < n_waiting; w += 2) {
            const std::uint32_t i0 = waiting[w], i1 = waiting[w + 1];
            const DoublePair m = {margins[i0], margins[i1]};
            const DoublePair y = {static_cast<double>(labels[i0]), static_cast<double>(labels[i1])};
            const DoublePair sm = sigmoid_neg(y * m);  // σ(−y m)
            const DoublePair slope = -y * sm;
            const DoublePair curve = bound ? DoublePair{} + 0.25 : sm * (1.0 - sm);
            nan_seen += sm - sm;
            touched[i0].margin = m[0];
            touched[i0].slope = slope[0];
            touched[i0].curve = curve[0];
            touched[i1].margin = m[1];
            touched[i1].slope = slope[1];
            touched[i1].curve = curve[1];
        }
    };
    std::size_t n_waiting = 0;
    for (std::size_t t = 0; t < n; ++t) {
        if (!kept(t)) continue;
        for (std::uint64_t e = begin[t]; e < end[t]; ++e) {
            const std::uint32_t i = rows[e];
            TouchedExample& x = touched[i];
            if (x.block == block) {
                most = std::max(most, ++x.count);
                continue;
            }
            x.block = block;
            x.count = 1;
            // Queued when its margin moved (NaN at first: never equal; a NaN is redone), each
            // example once (its first touch in the block). Without a branch: whether a margin
            // moved is a coin toss (7 in 10 on sotu-party), which a branch mispredicts.
            waiting[n_waiting] = i;
            n_waiting += margins[i] != x.margin ? 1 : 0;
            if (n_waiting == kWaiting - 1) {  // one slot left for the odd one's pair
                refresh(n_waiting);
                n_waiting = 0;
            }
        }
    }
    refresh(n_waiting);
    // Every slope and curve of the block's examples is a number (a NaN margin's is not; the
    // cached ones are, since a NaN margin never equals itself and is redone).
    const bool finite = !std::isnan(nan_seen[0]) && !std::isnan(nan_seen[1]);
    for (std::size_t t = 0; t < n; ++t) {
        if (!kept(t)) continue;
        // |slope| <= 1 and curve <= 1/4: key t's terms are at most per_term in magnitude.
        const double a = slices.max_abs[t];
        const double per_term = std::max(a, 0.25 * most * a * a);
        if (finite && per_term < kRunBound) {
            sum_key_bounded(rows, values, touched, begin[t], end[t], std::max(per_term, 0x1p-40),
                            g[t], u[t]);
            continue;
        }
        core::ExactAccumulator gt, ut;
        for (std::uint64_t e = begin[t]; e < end[t]; ++e) {
            const TouchedExample& x = touched[rows[e]];
            const double v = values[e];
            gt.add(x.slope * v);
            ut.add(x.curve * x.count * v * v);
        }
        g[t].add(gt.sum());
        u[t].add(ut.sum());
    }
}

void apply_slices(Shard& part, const ColumnSlices& slices, std::span<const double> deltas) {
    const std::size_t n = slices.begin.size();
    ROTOR_ASSERT(deltas.size() == n && slices.end.size() == n, "one delta per key");
    const std::uint32_t* rows = part.rows().data();
    const double* values = part.values().data();
    double* margins = part.margins().data();
    for (std::size_t t = 0; t < n; ++t) {
        const double d = deltas[t];
        if (d == 0) continue;
        for (std::uint64_t e = slices.begin[t]; e < slices.end[t]; ++e) {
            margins[rows[e]] += d * values[e];
        }
    }
}

void push_block(const Shard& part, std::span<const std::uint64_t> keys, Curvature curvature,
                std::span<core::ExactSum> g, std::span<core::ExactSum> u, BlockScratch& s) {
    ROTOR_ASSERT(g.size() == keys.size() && u.size() == keys.size(), "one sum per key");
    s.examples.assign(part.examples(), TouchedExample{});
    s.block = 0;
    s.next_block();
    push_slices(part, column_slices(part, keys, 0, part.examples()), curvature, g, u, s);
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

void push_loss(const Shard& part, core::ExactSum& loss) {
    const auto labels = part.labels();
    const auto margins = part.margins();
    for (std::uint32_t i = 0; i < part.examples(); ++i) {
        loss.add(log1pexp_neg(labels[i] * margins[i]));
    }
}

double penalty(std::span<const std::uint64_t> keys, std::span<const double> w, double lambda) {
    core::ExactSum l1;
    for (std::size_t t = 0; t < keys.size(); ++t) {
        if (keys[t] != kInterceptKey) l1.add(std::fabs(w[t]));
    }
    return lambda * l1.value();
}

double kkt_violation(std::span<const std::uint64_t> keys, std::span<const double> w,
                     std::span<const double> g, double lambda) {
    double worst = 0;
    for (std::size_t t = 0; t < keys.size(); ++t)
        worst = std::max(worst, subgradient_of(w[t], g[t], penalty_of(keys[t], lambda)));
    return worst;
}

double subgradient_norm(std::span<const std::uint64_t> keys, std::span<const double> w,
                        std::span<const double> g, double lambda) {
    double sum = 0;
    for (std::size_t t = 0; t < keys.size(); ++t)
        sum += subgradient_of(w[t], g[t], penalty_of(keys[t], lambda));
    return sum;
}

double lambda_max(const Shard& part) {
    const auto keys = part.keys();
    const auto offsets = part.offsets();
    const auto rows = part.rows();
    const auto values = part.values();
    const auto labels = part.labels();
    const bool intercept = !keys.empty() && keys.back() == kInterceptKey;
    double p = 0.5;
    if (intercept) {
        const auto pos = std::count(labels.begin(), labels.end(), std::int8_t{1});
        p = static_cast<double>(pos) / static_cast<double>(labels.size());
    }
    // The loss's gradient at the intercept's optimum σ(b) = p (or at w = 0, σ(0) = 1/2):
    // Σ_i x_ik (σ(m_i) − [y_i = +1]) = Σ_{y_i = −1} x_ik − (1 − p) Σ_i x_ik, summed as
    // NewtonSolver sums its gradient at w = 0, so that at p = 1/2 the top λ's violations there
    // are exactly 0 (the stopping rule's reference ‖∇^S F(0)‖₁ is then 0: no rounding residue
    // for the rule to chase).
    double top = 0;
    for (std::size_t k = 0; k < keys.size(); ++k) {
        if (keys[k] == kInterceptKey) continue;
        double negative = 0, scaled = 0;
        for (std::uint64_t e = offsets[k]; e < offsets[k + 1]; ++e) {
            if (labels[rows[e]] < 0) negative += values[e];
            scaled += values[e] * (1 - p);
        }
        top = std::max(top, std::fabs(negative - scaled));
    }
    return top;
}

}  // namespace rotor::logreg
