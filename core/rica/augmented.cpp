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
                       std::span<double> gradient, const core::RangeLoop& loop) {
    const SmoothTerms t = smooth_terms(outer_gram(w, rows, p, loop), c, p, !gradient.empty(), loop);
    std::vector<double> wc(rows * p);
    gemm_slabs(loop, Op::kNone, Op::kNone, rows, p, p, w.data(), p, c.data(), p, wc.data(), p);
    const double value = t.value + 0.5 * rho * (dot(wc, w) - 2 * dot(w, r));
    if (!gradient.empty()) {
        gemm_slabs(loop, Op::kNone, Op::kNone, rows, p, p, w.data(), p, t.m.data(), p,
                   gradient.data(), p);
        for (std::size_t k = 0; k < rows * p; ++k) gradient[k] += rho * (wc[k] - r[k]);
    }
    return value;
}

void augmented_w_step(std::span<double> w, std::size_t rows, std::size_t p,
                      std::span<const double> c, std::span<const double> r, double rho,
                      int iterations, const core::RangeLoop& loop) {
    const std::size_t size = rows * p;
    std::vector<double> g(size), d(size), next(size), next_g(size), alpha(kMemory);
    double value = augmented_value(w, rows, p, c, r, rho, g, loop);
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
            next_value = augmented_value(next, rows, p, c, r, rho, next_g, loop);
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

namespace {

constexpr std::size_t kLanes = 8;

/// shrink_tile on kLanes entries, |X Wᵀ| added to the lanes' sums. Fixed length and restrict
/// pointers: the loop vectorises.
inline void shrink_lanes(double* __restrict y, double* __restrict u, double cut,
                         double* __restrict acc) {
    for (std::size_t j = 0; j < kLanes; ++j) {
        const double v = y[j], t = v + u[j];
        const double clamped = std::min(std::max(t, -cut), cut);
        acc[j] += std::fabs(v);
        u[j] = clamped;
        y[j] = t - 2 * clamped;
    }
}

/// (19b), (19c) on a tile of `count` entries: y holds X Wᵀ and is overwritten by Z − U; u, the
/// scaled dual, is updated in place. Returns Σ|X Wᵀ|. T = Y + U, U = clamp(T, ±cut) and
/// Z − U = T − 2U; branch-free, in lanes (the L1 summed by lane, then the lanes in order).
double shrink_tile(double* y, double* u, std::size_t count, double cut) {
    double acc[kLanes] = {};
    std::size_t k = 0;
    for (; k + kLanes <= count; k += kLanes) shrink_lanes(y + k, u + k, cut, acc);
    if (k < count) {  // the tail, padded with zeros (which add 0 to the sums)
        double ty[kLanes] = {}, tu[kLanes] = {};
        std::copy(y + k, y + count, ty);
        std::copy(u + k, u + count, tu);
        shrink_lanes(ty, tu, cut, acc);
        std::copy_n(ty, count - k, y + k);
        std::copy_n(tu, count - k, u + k);
    }
    double l1 = 0;
    for (const double a : acc) l1 += a;
    return l1;
}

}  // namespace

AdmmSplit::AdmmSplit(const Dense& data, std::size_t rows)
    : data_(data),
      rows_(rows),
      chunk_(chunk(data.n)),
      u_(data.n * rows, 0.0),
      partial_((data.n + chunk_ - 1) / chunk_ * rows * data.p),
      r_(rows * data.p, 0.0) {}

std::size_t AdmmSplit::tile(std::size_t p, std::size_t rows) {
    // A tile of X and of X Wᵀ, T(p + ℓ) doubles, within half of a core's L2 (1 MiB here), so
    // that the second product reads both from the cache; a multiple of 16 in [64, 4096].
    constexpr std::size_t kTileBytes = 512 << 10;
    const std::size_t t = kTileBytes / (sizeof(double) * (p + rows)) / 16 * 16;
    return std::clamp<std::size_t>(t, 64, 4096);
}

std::size_t AdmmSplit::chunk(std::size_t n) {
    // At most kMaxChunks chunks: enough for the threads to share them evenly (each takes the
    // next one), few enough that the partial Rs stay small beside U.
    return std::max(kMinChunk, (n + kMaxChunks - 1) / kMaxChunks);
}

std::uint64_t AdmmSplit::bytes(std::size_t n, std::size_t p, std::size_t rows, int threads) {
    const std::size_t size = chunk(n);
    const std::uint64_t chunks = (n + size - 1) / size;
    return sizeof(double) * (static_cast<std::uint64_t>(n) * rows + (chunks + 1) * rows * p +
                             static_cast<std::uint64_t>(threads) * tile(p, rows) * rows);
}

template <class Body>
double AdmmSplit::pass(const core::RangeLoop& loop, const Body& body, std::vector<double>& out) {
    const std::size_t n = data_.n, p = data_.p, size = rows_ * p;
    const std::size_t chunks = (n + chunk_ - 1) / chunk_;
    std::vector<double> l1(chunks, 0.0);
    loop(0, static_cast<std::int64_t>(chunks), [&](std::int64_t lo, std::int64_t hi) {
        for (auto c = static_cast<std::size_t>(lo); c < static_cast<std::size_t>(hi); ++c) {
            const std::size_t first = c * chunk_;
            l1[c] = body(first, std::min(chunk_, n - first), partial_.data() + c * size);
        }
    });
    // Each entry of R summed over the chunks in their order: the same bits for any cut of R.
    out.assign(size, 0.0);
    loop(0, static_cast<std::int64_t>(rows_), [&](std::int64_t lo, std::int64_t hi) {
        for (auto e = static_cast<std::size_t>(lo) * p; e < static_cast<std::size_t>(hi) * p; ++e)
            for (std::size_t c = 0; c < chunks; ++c) out[e] += partial_[c * size + e];
    });
    double total = 0;
    for (const double v : l1) total += v;
    return total;
}

void AdmmSplit::reset(std::span<const double> w, const core::RangeLoop& loop) {
    std::fill(u_.begin(), u_.end(), 0.0);
    update(w, 0.0, loop);  // cut 0: U stays 0 and Z = T = X Wᵀ
}

void AdmmSplit::update(std::span<const double> w, double cut, const core::RangeLoop& loop) {
    const std::size_t p = data_.p, rows = rows_, tile_rows = tile(p, rows);
    l1_ = pass(
        loop,
        [&](std::size_t first, std::size_t count, double* partial) {
            thread_local std::vector<double> y;
            y.resize(tile_rows * rows);
            double l1 = 0;
            for (std::size_t i = first; i < first + count; i += tile_rows) {
                const std::size_t m = std::min(tile_rows, first + count - i);
                const double* x = data_.row(i);
                core::blas::gemm(Op::kNone, Op::kTranspose, m, rows, p, 1.0, x, p, w.data(), p, 0.0,
                                 y.data(), rows);
                l1 += shrink_tile(y.data(), u_.data() + i * rows, m * rows, cut);
                core::blas::gemm(Op::kTranspose, Op::kNone, rows, p, m, 1.0, y.data(), rows, x, p,
                                 i == first ? 0.0 : 1.0, partial, p);
            }
            return l1;
        },
        r_);
}

void AdmmSplit::rescale(double factor, const core::RangeLoop& loop) {
    const std::size_t p = data_.p, rows = rows_;
    std::vector<double> ux;
    pass(
        loop,
        [&](std::size_t first, std::size_t count, double* partial) {
            double* u = u_.data() + first * rows;
            core::blas::gemm(Op::kTranspose, Op::kNone, rows, p, count, 1.0, u, rows,
                             data_.row(first), p, 0.0, partial, p);
            for (std::size_t e = 0; e < count * rows; ++e) u[e] *= factor;
            return 0.0;
        },
        ux);
    for (std::size_t e = 0; e < r_.size(); ++e) r_[e] += (1 - factor) * ux[e];
}

}  // namespace rotor::rica
