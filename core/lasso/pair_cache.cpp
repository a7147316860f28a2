#include "core/lasso/pair_cache.h"

#include <algorithm>
#include <cmath>

#include "core/base/error.h"

namespace rotor::lasso {

PairDotCache::PairDotCache(int bits) : bits_(bits), slots_(std::size_t{1} << bits) {
    ROTOR_ASSERT(bits >= 1 && bits <= 30, "PairDotCache: 1..30 bits");
}

std::uint64_t PairDotCache::key(std::uint32_t a, std::uint32_t b) {
    const std::uint32_t lo = std::min(a, b), hi = std::max(a, b);
    return (std::uint64_t{lo} << 32) | hi;
}

std::size_t PairDotCache::slot(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - bits_));  // Fibonacci
}

const double* PairDotCache::find(std::uint32_t a, std::uint32_t b) const {
    const std::uint64_t k = key(a, b);
    const Slot& s = slots_[slot(k)];
    if (s.key != k) {
        ++misses_;
        return nullptr;
    }
    ++hits_;
    return &s.dot;
}

void PairDotCache::insert(std::uint32_t a, std::uint32_t b, double dot) {
    const std::uint64_t k = key(a, b);
    slots_[slot(k)] = Slot{k, dot};
}

CandidateDots cached_candidate_dots(std::span<const std::uint32_t> candidates,
                                    const PairDotCache& cache) {
    const std::size_t m = candidates.size();
    CandidateDots out;
    out.dots.assign(pair_count(m), 0.0);
    for (std::size_t a = 0; a + 1 < m; ++a) {
        for (std::size_t b = a + 1; b < m; ++b) {
            const std::size_t at = pair_index(a, b, m);
            if (const double* d = cache.find(candidates[a], candidates[b])) {
                out.dots[at] = *d;
            } else {
                out.missing.push_back({candidates[a], candidates[b]});
                out.missing_index.push_back(at);
            }
        }
    }
    return out;
}

void push_pair_dots(const PartView& part, std::span<const CoordinatePair> pairs,
                    std::span<core::ExactSum> sums, std::vector<double>& scratch) {
    ROTOR_ASSERT(sums.size() == pairs.size(), "one sum per pair");
    const ColumnsView& x = part.x;
    if (scratch.size() < part.rows()) scratch.assign(part.rows(), 0.0);  // zero between calls
    std::size_t t = 0;
    while (t < pairs.size()) {
        const std::uint32_t ja = pairs[t].a;
        for (std::uint64_t e = x.offsets[ja]; e < x.offsets[ja + 1]; ++e) {
            scratch[x.rows[e]] = x.values[e];
        }
        for (; t < pairs.size() && pairs[t].a == ja; ++t) {
            const std::uint32_t jb = pairs[t].b;
            core::ExactSum& s = sums[t];
            for (std::uint64_t e = x.offsets[jb]; e < x.offsets[jb + 1]; ++e) {
                const double v = scratch[x.rows[e]];
                if (v != 0) s.add(v * x.values[e]);
            }
        }
        for (std::uint64_t e = x.offsets[ja]; e < x.offsets[ja + 1]; ++e) scratch[x.rows[e]] = 0;
    }
}

Selection select_uncorrelated(const ProblemView& problem, std::span<const std::uint32_t> candidates,
                              const StradsParams& params,
                              const std::function<double(std::uint32_t, std::uint32_t)>& dot) {
    return select_greedy(candidates, params, [&](std::size_t a, std::size_t b) {
        const std::uint32_t ja = candidates[a], jb = candidates[b];
        return correlation(problem, ja, jb, dot(ja, jb));
    });
}

}  // namespace rotor::lasso
