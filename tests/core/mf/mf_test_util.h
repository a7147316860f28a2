// Small synthetic ratings for the tests of the MF kernels: random sparse matrices, planted
// low-rank problems, row splits into parts.
#pragma once

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/base/rng.h"
#include "core/mf/factors.h"
#include "core/mf/sparse_view.h"

namespace rotor::mf::testing {

/// An owning CSR matrix (rows are users).
struct Csr {
    std::uint32_t cols = 0;
    std::vector<std::uint64_t> offsets{0};
    std::vector<std::uint32_t> ids;
    std::vector<float> values;

    std::uint32_t rows() const { return static_cast<std::uint32_t>(offsets.size() - 1); }
    SparseView view() const { return {offsets, ids, values}; }
    void add(std::uint32_t j, float v) {
        ids.push_back(j);
        values.push_back(v);
    }
    void end_row() { offsets.push_back(ids.size()); }
};

/// Held-out ratings as triples.
struct Triples {
    std::vector<std::uint32_t> users, items;
    std::vector<float> values;
};

inline double normal(Rng& rng) {
    const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

/// rows x cols, each entry observed with probability `density`, values uniform in [1, 5).
/// Every row and column gets at least one rating.
inline Csr random_csr(std::uint32_t rows, std::uint32_t cols, double density, std::uint64_t seed) {
    Rng rng(seed);
    Csr m;
    m.cols = cols;
    for (std::uint32_t i = 0; i < rows; ++i) {
        for (std::uint32_t j = 0; j < cols; ++j) {
            if (rng.uniform() < density || j == i % cols || i == j % rows) {
                m.add(j, static_cast<float>(1.0 + 4.0 * rng.uniform()));
            }
        }
        m.end_row();
    }
    return m;
}

/// A planted problem: a_ij = μ + b_i + c_j + w*_i·h*_j + N(0, σ²), observed with probability
/// `train_density` (training) or else `test_density` (held out).
struct Planted {
    Csr train;
    Triples test;
};

inline Planted planted(std::uint32_t rows, std::uint32_t cols, std::uint32_t rank, double sigma,
                       double train_density, double test_density, std::uint64_t seed) {
    Rng rng(seed);
    const double s = std::pow(static_cast<double>(rank), -0.25);  // var(w*·h*) = 1
    std::vector<double> w(std::size_t{rows} * rank), h(std::size_t{cols} * rank), b(rows), c(cols);
    for (double& x : w) x = s * normal(rng);
    for (double& x : h) x = s * normal(rng);
    for (double& x : b) x = 0.5 * normal(rng);
    for (double& x : c) x = 0.5 * normal(rng);
    Planted p;
    p.train.cols = cols;
    for (std::uint32_t i = 0; i < rows; ++i) {
        for (std::uint32_t j = 0; j < cols; ++j) {
            const double u = rng.uniform();
            if (u >= train_density + test_density) continue;
            double a = 3.0 + b[i] + c[j] + sigma * normal(rng);
            for (std::uint32_t k = 0; k < rank; ++k) a += w[i * rank + k] * h[j * rank + k];
            if (u < train_density) {
                p.train.add(j, static_cast<float>(a));
            } else {
                p.test.users.push_back(i);
                p.test.items.push_back(j);
                p.test.values.push_back(static_cast<float>(a));
            }
        }
        p.train.end_row();
    }
    return p;
}

/// The rows of m dealt into `parts` parts at random (rows keep their ratings' order); rows_of[q]
/// lists part q's global row ids in increasing order.
struct Split {
    std::vector<Csr> parts;
    std::vector<std::vector<std::uint32_t>> rows_of;
};

inline Split split_rows(const Csr& m, std::uint32_t parts, std::uint64_t seed) {
    Rng rng(seed);
    Split s;
    s.parts.resize(parts);
    s.rows_of.resize(parts);
    for (std::uint32_t i = 0; i < m.rows(); ++i) {
        const auto q = static_cast<std::uint32_t>(rng.below(parts));
        s.rows_of[q].push_back(i);
        Csr& part = s.parts[q];
        part.cols = m.cols;
        for (std::uint64_t e = m.offsets[i]; e < m.offsets[i + 1]; ++e) {
            part.add(m.ids[e], m.values[e]);
        }
        part.end_row();
    }
    return s;
}

}  // namespace rotor::mf::testing
