// Synthetic sparse classification data for the tests of logistic regression.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/base/rng.h"
#include "core/logreg/examples.h"

namespace rotor::logreg::testing {

/// n examples over `features` keys (spread over the 64-bit range, so they are not small
/// integers), each with about `per_row` features; labels from a sparse true w plus noise.
inline Examples synthetic_examples(std::uint32_t n, std::uint32_t features, std::uint32_t per_row,
                                   std::uint64_t seed) {
    Rng rng(seed);
    std::vector<std::uint64_t> key_of(features);
    std::vector<double> truth(features);
    for (std::uint32_t k = 0; k < features; ++k) {
        key_of[k] = (static_cast<std::uint64_t>(k) + 1) * 0x9E3779B97F4A7C1ULL;
        truth[k] = k % 3 == 0 ? rng.uniform() * 4 - 2 : 0;
    }
    Examples ex;
    std::vector<std::uint64_t> keys;
    std::vector<double> values;
    for (std::uint32_t i = 0; i < n; ++i) {
        std::vector<std::uint32_t> picked;
        for (std::uint32_t k = 0; k < features; ++k) {
            if (rng.below(features) < per_row) picked.push_back(k);
        }
        std::vector<std::pair<std::uint64_t, double>> kv;
        double m = 0.3;
        for (const std::uint32_t k : picked) {
            const double v = rng.uniform() * 2 - 0.5;
            kv.emplace_back(key_of[k], v);
            m += truth[k] * v;
        }
        std::sort(kv.begin(), kv.end());
        keys.clear();
        values.clear();
        for (const auto& [k, v] : kv) {
            keys.push_back(k);
            values.push_back(v);
        }
        const double p = 1.0 / (1.0 + std::exp(-m));
        ex.add(rng.uniform() < p ? 1 : -1, keys, values);
    }
    return ex;
}

/// Examples first..last-1 of `ex`.
inline Examples slice(const Examples& ex, std::size_t first, std::size_t last) {
    Examples out;
    for (std::size_t i = first; i < last; ++i) {
        out.add(ex.labels[i], ex.keys_of(i), ex.values_of(i));
    }
    return out;
}

}  // namespace rotor::logreg::testing
