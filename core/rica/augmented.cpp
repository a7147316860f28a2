#include "core/rica/augmented.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <vector>

#include "core/base/blas.h"
#include "core/rica/objective.h"

namespace rotor::rica {
namespace {

using core::blas::Op;

double dot(std::span<const double> a, std::span<const double> b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

/// One pair of the L-BFGS memory: s = ΔW, y = Δ∇φ, 1/⟨s, y⟩.
struct Pair {
    std::vector<double> s, y;
    double inv_sy = 0;
};

constexpr std::size_t kMemory = 6;

}  // namespace

double augmented_value(std::span<const double> w, std::size_t rows, std::size_t p,
                       std::span<const double> c, std::span<const double> r, double rho,
                       std::span<double> gradient) {
    const SmoothTerms t = smooth_terms(outer_gram(w, rows, p), c, p, !gradient.empty());
    std::vector<double> wc(rows * p);
    core::blas::gemm(Op::kNone, Op::kNone, rows, p, p, 1.0, w.data(), p, c.data(), p, 0.0,
                     wc.data(), p);
    const double value = t.value + 0.5 * rho * (dot(wc, w) - 2 * dot(w, r));
    if (!gradient.empty()) {
        core::blas::gemm(Op::kNone, Op::kNone, rows, p, p, 1.0, w.data(), p, t.m.data(), p, 0.0,
                         gradient.data(), p);
        for (std::size_t k = 0; k < rows * p; ++k) gradient[k] += rho * (wc[k] - r[k]);
    }
    return value;
}

void augmented_w_step(std::span<double> w, std::size_t rows, std::size_t p,
                      std::span<const double> c, std::span<const double> r, double rho,
                      int iterations) {
    const std::size_t size = rows * p;
    std::vector<double> g(size), d(size), next(size), next_g(size), alpha(kMemory);
    double value = augmented_value(w, rows, p, c, r, rho, g);
    std::deque<Pair> memory;
    for (int it = 0; it < iterations; ++it) {
        // d = −H∇φ by the two-loop recursion; H₀ = ⟨s, y⟩/⟨y, y⟩ of the newest pair, or, with no
        // pair yet, a move of 10⁻³‖W‖ along −∇φ (the backtracking below then finds a decrease).
        for (std::size_t k = 0; k < size; ++k) d[k] = -g[k];
        for (std::size_t m = memory.size(); m-- > 0;) {
            alpha[m] = memory[m].inv_sy * dot(memory[m].s, d);
            for (std::size_t k = 0; k < size; ++k) d[k] -= alpha[m] * memory[m].y[k];
        }
        const double gnorm = std::sqrt(dot(g, g));
        if (gnorm == 0) return;
        double scale = 0;
        if (memory.empty()) {
            const double wnorm = std::sqrt(dot(w, w));
            scale = 1e-3 * (wnorm > 0 ? wnorm : 1.0) / gnorm;
        } else {
            const Pair& last = memory.back();
            scale = 1 / (last.inv_sy * dot(last.y, last.y));
        }
        for (double& v : d) v *= scale;
        for (std::size_t m = 0; m < memory.size(); ++m) {
            const double beta = memory[m].inv_sy * dot(memory[m].y, d);
            for (std::size_t k = 0; k < size; ++k) d[k] += (alpha[m] - beta) * memory[m].s[k];
        }
        double slope = dot(g, d);
        if (!(slope < 0)) {  // not a descent direction (rounding): steepest descent, restart
            memory.clear();
            const double wnorm = std::sqrt(dot(w, w));
            for (std::size_t k = 0; k < size; ++k)
                d[k] = -g[k] * 1e-3 * (wnorm > 0 ? wnorm : 1.0) / gnorm;
            slope = dot(g, d);
        }
        // Armijo backtracking from the full step.
        double step = 1, next_value = 0;
        for (;;) {
            for (std::size_t k = 0; k < size; ++k) next[k] = w[k] + step * d[k];
            next_value = augmented_value(next, rows, p, c, r, rho, next_g);
            if (next_value <= value + 1e-4 * step * slope) break;
            step *= 0.5;
            if (step < 1e-10) return;  // no decrease found: keep w
        }
        Pair pair;
        pair.s.resize(size);
        pair.y.resize(size);
        for (std::size_t k = 0; k < size; ++k) {
            pair.s[k] = next[k] - w[k];
            pair.y[k] = next_g[k] - g[k];
        }
        const double sy = dot(pair.s, pair.y);
        if (sy > 1e-12 * std::sqrt(dot(pair.s, pair.s) * dot(pair.y, pair.y))) {
            pair.inv_sy = 1 / sy;
            memory.push_back(std::move(pair));
            if (memory.size() > kMemory) memory.pop_front();
        }
        std::copy(next.begin(), next.end(), w.begin());
        g.swap(next_g);
        value = next_value;
    }
}

}  // namespace rotor::rica
