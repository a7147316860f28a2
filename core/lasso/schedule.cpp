#include "core/lasso/schedule.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/base/error.h"

namespace rotor::lasso {

std::vector<std::uint32_t> schedule_cyclic(std::uint32_t p, std::uint32_t first,
                                           std::uint32_t count) {
    ROTOR_ASSERT(p > 0, "cyclic: no coordinate");
    std::vector<std::uint32_t> out(count);
    std::uint32_t j = first % p;
    for (std::uint32_t& c : out) {
        c = j;
        j = j + 1 == p ? 0 : j + 1;
    }
    return out;
}

std::vector<std::uint32_t> schedule_shotgun(Rng& rng, std::uint32_t p, std::uint32_t parallel) {
    const std::uint32_t m = std::min(p, parallel);
    // Floyd's sampling: for k = p − m .. p − 1, draw t in [0, k]; take t, or k if t was taken.
    // The taken set: open addressing over at least 2m slots (coordinates < p <= 2^32 − 1, so
    // kEmpty is never one).
    constexpr std::uint32_t kEmpty = 0xFFFFFFFF;
    int bits = 4;
    while ((std::size_t{1} << bits) < 2 * std::size_t{m}) ++bits;
    std::vector<std::uint32_t> slots(std::size_t{1} << bits, kEmpty);
    const std::size_t mask = slots.size() - 1;
    // Inserts c; false when it was there.
    const auto insert = [&](std::uint32_t c) {
        std::size_t at = (std::uint64_t{c} * 0x9E3779B97F4A7C15ULL) >> (64 - bits);
        while (slots[at] != kEmpty) {
            if (slots[at] == c) return false;
            at = (at + 1) & mask;
        }
        slots[at] = c;
        return true;
    };
    std::vector<std::uint32_t> out;
    out.reserve(m);
    for (std::uint32_t k = p - m; k < p; ++k) {
        const auto t = static_cast<std::uint32_t>(rng.below(std::uint64_t{k} + 1));
        const std::uint32_t pick = insert(t) ? t : k;
        if (pick == k) insert(k);
        out.push_back(pick);
    }
    return out;
}

PrioritySampler::PrioritySampler(std::span<const double> deltas, double eta)
    : size_(static_cast<std::uint32_t>(deltas.size())), eta_(eta) {
    ROTOR_ASSERT(eta > 0, "priority floor eta must be > 0");
    while (leaves_ < size_) leaves_ *= 2;
    tree_.assign(2 * std::size_t{leaves_}, 0);
    for (std::uint32_t j = 0; j < size_; ++j) tree_[leaves_ + j] = deltas[j] * deltas[j] + eta_;
    for (std::uint32_t k = leaves_ - 1; k >= 1; --k) tree_[k] = tree_[2 * k] + tree_[2 * k + 1];
}

void PrioritySampler::set(std::uint32_t j, double w) {
    std::uint32_t k = leaves_ + j;
    tree_[k] = w;
    for (k /= 2; k >= 1; k /= 2) tree_[k] = tree_[2 * k] + tree_[2 * k + 1];
}

void PrioritySampler::update(std::uint32_t j, double delta) { set(j, delta * delta + eta_); }

std::vector<std::uint32_t> PrioritySampler::draw(Rng& rng, std::uint32_t count) {
    const std::uint32_t m = std::min(count, size_);
    std::vector<std::uint32_t> out;
    std::vector<double> saved;
    out.reserve(m);
    saved.reserve(m);
    for (std::uint32_t t = 0; t < m; ++t) {
        double u = rng.uniform() * tree_[1];
        std::uint32_t k = 1;
        while (k < leaves_) {
            const double left = tree_[2 * k];
            // Rounding may leave u at or past the last positive weight: never enter an empty side.
            if ((u < left && left > 0) || tree_[2 * k + 1] <= 0) {
                k = 2 * k;
            } else {
                u -= left;
                k = 2 * k + 1;
            }
        }
        const std::uint32_t j = k - leaves_;
        out.push_back(j);
        saved.push_back(tree_[k]);
        set(j, 0);  // without replacement
    }
    for (std::size_t t = m; t-- > 0;) set(out[t], saved[t]);
    return out;
}

void StradsParams::validate() const {
    if (parallel < 1) throw ConfigError("parallel", "must be at least 1");
    if (candidates < parallel) {
        throw ConfigError("candidates",
                          "must be at least --parallel (" + std::to_string(parallel) + ")");
    }
    if (!(rho > 0 && rho <= 1)) throw ConfigError("rho", "must be in (0, 1]");
    if (!(eta > 0) || !std::isfinite(eta)) throw ConfigError("eta", "must be > 0 and finite");
}

void push_candidate_dots(const PartView& part, std::span<const std::uint32_t> candidates,
                         std::span<core::ExactSum> sums, std::vector<double>& scratch) {
    const std::size_t m = candidates.size();
    ROTOR_ASSERT(sums.size() == pair_count(m), "one sum per pair of candidates");
    const ColumnsView& x = part.x;
    scratch.assign(part.rows(), 0.0);
    for (std::size_t a = 0; a + 1 < m; ++a) {
        const std::uint32_t ja = candidates[a];
        for (std::uint64_t e = x.offsets[ja]; e < x.offsets[ja + 1]; ++e) {
            scratch[x.rows[e]] = x.values[e];
        }
        for (std::size_t b = a + 1; b < m; ++b) {
            const std::uint32_t jb = candidates[b];
            core::ExactSum& s = sums[pair_index(a, b, m)];
            for (std::uint64_t e = x.offsets[jb]; e < x.offsets[jb + 1]; ++e) {
                const double v = scratch[x.rows[e]];
                if (v != 0) s.add(v * x.values[e]);
            }
        }
        for (std::uint64_t e = x.offsets[ja]; e < x.offsets[ja + 1]; ++e) scratch[x.rows[e]] = 0;
    }
}

double correlation(const ProblemView& problem, std::uint32_t a, std::uint32_t b, double dot) {
    const double da = problem.sq_norms[a], db = problem.sq_norms[b];
    if (!(da > 0) || !(db > 0)) return 0;
    const double n = problem.samples;
    // z_aᵀz_b = (x̃_a − c_a 1)ᵀ(x̃_b − c_b 1) = x̃_aᵀx̃_b − N c_a c_b, as Σ_i x̃_ij = N c_j.
    return (dot - n * problem.shifts[a] * problem.shifts[b]) / (n * std::sqrt(da * db));
}

Selection select_greedy(std::span<const std::uint32_t> candidates, const StradsParams& params,
                        const std::function<double(std::size_t, std::size_t)>& corr) {
    Selection s;
    std::vector<std::size_t> kept_at;  // positions in candidates of the kept ones
    std::vector<double> row_sum;       // Σ |corr| of each kept one with the others kept
    std::vector<double> c;             // |corr| of the candidate with each kept one
    for (std::size_t b = 0; b < candidates.size() && s.kept.size() < params.parallel; ++b) {
        // Stops at the first conflict: with ρ, or a row (a kept one's, or the candidate's own
        // so far) reaching the bound. Once the kept rows are near it, that is the first pair.
        c.clear();
        double sum = 0;
        bool conflict = false, bounded = false;
        for (std::size_t i = 0; i < kept_at.size() && !conflict && !bounded; ++i) {
            const double v = std::fabs(corr(kept_at[i], b));
            conflict = !(v < params.rho);
            sum += v;
            bounded = !(row_sum[i] + v < kRowSumBound) || !(sum < kRowSumBound);
            c.push_back(v);
        }
        if (conflict || bounded) {
            ++s.rejected;
            if (!conflict) ++s.bounded;
            continue;
        }
        for (std::size_t i = 0; i < c.size(); ++i) row_sum[i] += c[i];
        row_sum.push_back(sum);
        kept_at.push_back(b);
        s.kept.push_back(candidates[b]);
    }
    return s;
}

Selection select_uncorrelated(const ProblemView& problem, std::span<const std::uint32_t> candidates,
                              std::span<const core::ExactSum> total, const StradsParams& params) {
    const std::size_t m = candidates.size();
    ROTOR_ASSERT(total.size() == pair_count(m), "one total per pair of candidates");
    return select_greedy(candidates, params, [&](std::size_t a, std::size_t b) {
        return correlation(problem, candidates[a], candidates[b],
                           total[pair_index(a, b, m)].value());
    });
}

Selection schedule_strads(Rng& rng, PrioritySampler& sampler, std::span<const PartView> parts,
                          const ProblemView& problem, const StradsParams& params) {
    const std::vector<std::uint32_t> candidates = sampler.draw(rng, params.candidates);
    std::vector<core::ExactSum> total(pair_count(candidates.size()));
    std::vector<double> scratch;
    for (const PartView& part : parts) push_candidate_dots(part, candidates, total, scratch);
    return select_uncorrelated(problem, candidates, total, params);
}

}  // namespace rotor::lasso
