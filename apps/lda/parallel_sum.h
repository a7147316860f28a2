// A parallel sum whose result does not depend on the thread count.
#pragma once

#include <cstdint>
#include <numeric>
#include <vector>

#include "sched/runtime.h"

namespace rotor::lda::detail {

/// Sums part(b, e) over 256 fixed chunks [b, e) of [0, n), computed in parallel on `rt` and
/// added in chunk order, so that the result does not depend on the thread count.
template <class F>
double ordered_parallel_sum(sched::Runtime& rt, std::uint64_t n, F&& part) {
    constexpr std::int64_t kChunks = 256;
    std::vector<double> partial(kChunks, 0.0);
    rt.parallel_for(0, kChunks, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t c = lo; c < hi; ++c) {
            const std::uint64_t b = n * c / kChunks;
            const std::uint64_t e = n * (c + 1) / kChunks;
            if (b < e) partial[c] = part(b, e);
        }
    });
    return std::accumulate(partial.begin(), partial.end(), 0.0);
}

}  // namespace rotor::lda::detail
