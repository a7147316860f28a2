#include "core/rica/augmented.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <vector>

#include "core/base/blas.h"
#include "core/rica/objective.h"

namespace rotor::rica {
namespace {

using core::blas::Op;

/// The W step's vectors (ℓp entries: W, ∇φ, the direction, the L-BFGS pairs) are cut into chunks
/// of kVectorChunk entries, a cut that depends on ℓp only. A pass runs a body on every chunk
/// through the RangeLoop; its K reductions are per-chunk partial sums (lane_dot), added in chunk
/// order: the same bits for any loop.
constexpr std::size_t kVectorChunk = 2048;

template <std::size_t K, class Body>
std::array<double, K> vector_pass(const core::RangeLoop& loop, std::size_t size, const Body& body) {
    const std::size_t chunks = (size + kVectorChunk - 1) / kVectorChunk;
    std::vector<double> partial(chunks * K);
    loop(0, static_cast<std::int64_t>(chunks), [&](std::int64_t lo, std::int64_t hi) {
        for (auto c = static_cast<std::size_t>(lo); c < static_cast<std::size_t>(hi); ++c) {
            const std::size_t first = c * kVectorChunk;
            body(first, std::min(size, first + kVectorChunk), partial.data() + c * K);
        }
    });
    std::array<double, K> sum{};
    for (std::size_t c = 0; c < chunks; ++c)
        for (std::size_t k = 0; k < K; ++k) sum[k] += partial[c * K + k];
    return sum;
}

/// One pair of the L-BFGS memory: s = ΔW, y = Δ∇φ, 1/⟨s, y⟩ and ⟨y, y⟩.
struct Pair {
    std::vector<double> s, y;
    double inv_sy = 0, yy = 0;
};

constexpr std::size_t kMemory = 6;

}  // namespace

double augmented_value(std::span<const double> w, std::size_t rows, std::size_t p,
                       std::span<const double> c, std::span<const double> r, double rho,
                       std::span<double> gradient, const core::RangeLoop& loop) {
    const SmoothTerms t = smooth_terms(outer_gram(w, rows, p, loop), c, p, !gradient.empty(), loop);
    std::vector<double> wc(rows * p);
    gemm_slabs(loop, Op::kNone, Op::kNone, rows, p, p, w.data(), p, c.data(), p, wc.data(), p);
    if (!gradient.empty())
        gemm_slabs(loop, Op::kNone, Op::kNone, rows, p, p, w.data(), p, t.m.data(), p,
                   gradient.data(), p);
    // ⟨WC, W⟩, ⟨W, R⟩ and ∇φ = W M + ρ (W C − R), in one pass.
    const auto sums =
        vector_pass<2>(loop, rows * p, [&](std::size_t lo, std::size_t hi, double* out) {
            out[0] = lane_dot(wc.data() + lo, w.data() + lo, hi - lo);
            out[1] = lane_dot(w.data() + lo, r.data() + lo, hi - lo);
            if (!gradient.empty())
                for (std::size_t k = lo; k < hi; ++k) gradient[k] += rho * (wc[k] - r[k]);
        });
    return t.value + 0.5 * rho * (sums[0] - 2 * sums[1]);
}

void augmented_w_step(std::span<double> w, std::size_t rows, std::size_t p,
                      std::span<const double> c, std::span<const double> r, double rho,
                      int iterations, const core::RangeLoop& loop) {
    const std::size_t size = rows * p;
    std::vector<double> x(w.begin(), w.end()), g(size), d(size), next(size), next_g(size),
        alpha(kMemory);
    double value = augmented_value(x, rows, p, c, r, rho, g, loop);
    std::deque<Pair> memory;
    Pair spare;  // the buffers of the pair that left the memory last
    // Every loop over the ℓp entries is a vector_pass (chunks through `loop`), each fusing an
    // update of d with the dot product the next one needs.
    const auto pass1 = [&](const auto& body) { return vector_pass<1>(loop, size, body)[0]; };
    // d = −ε ∇φ with ε = 10⁻³‖W‖/‖∇φ‖ (the first step, and a restart); returns ⟨∇φ, d⟩.
    const auto steepest = [&](double gnorm) {
        const double ww = pass1([&](std::size_t lo, std::size_t hi, double* out) {
            out[0] = lane_dot(x.data() + lo, x.data() + lo, hi - lo);
        });
        const double wnorm = std::sqrt(ww), eps = 1e-3 * (wnorm > 0 ? wnorm : 1.0) / gnorm;
        return pass1([&](std::size_t lo, std::size_t hi, double* out) {
            for (std::size_t k = lo; k < hi; ++k) d[k] = -g[k] * eps;
            out[0] = lane_dot(g.data() + lo, d.data() + lo, hi - lo);
        });
    };
    for (int it = 0; it < iterations; ++it) {
        // d = −H∇φ by the two-loop recursion; H₀ = ⟨s, y⟩/⟨y, y⟩ of the newest pair, or, with no
        // pair yet, a move of 10⁻³‖W‖ along −∇φ (the backtracking below then finds a decrease).
        // ⟨∇φ, ∇φ⟩ and ⟨s, −∇φ⟩ of the newest pair first.
        const std::size_t pairs = memory.size();
        const auto first =
            vector_pass<2>(loop, size, [&](std::size_t lo, std::size_t hi, double* out) {
                out[0] = lane_dot(g.data() + lo, g.data() + lo, hi - lo);
                out[1] =
                    pairs > 0 ? -lane_dot(memory.back().s.data() + lo, g.data() + lo, hi - lo) : 0;
            });
        const double gnorm = std::sqrt(first[0]);
        if (gnorm == 0) break;
        double slope = 0;
        if (pairs == 0) {
            slope = steepest(gnorm);
        } else {
            const double scale = 1 / (memory.back().inv_sy * memory.back().yy);
            // Pass m (newest first): d ← d − α_m y_m (d = −∇φ before the first), then ⟨s_{m−1}, d⟩;
            // the last one scales d by H₀ and takes ⟨y_0, d⟩ for the second loop.
            double dot_next = first[1];
            for (std::size_t m = pairs; m-- > 0;) {
                alpha[m] = memory[m].inv_sy * dot_next;
                const double a = alpha[m];
                const double* y = memory[m].y.data();
                const double* src = m + 1 == pairs ? g.data() : d.data();
                const double sign = m + 1 == pairs ? -1.0 : 1.0;
                const double* along = m > 0 ? memory[m - 1].s.data() : memory[0].y.data();
                const double times = m > 0 ? 1.0 : scale;
                dot_next = pass1([&](std::size_t lo, std::size_t hi, double* out) {
                    for (std::size_t k = lo; k < hi; ++k) d[k] = (sign * src[k] - a * y[k]) * times;
                    out[0] = lane_dot(along + lo, d.data() + lo, hi - lo);
                });
            }
            // Pass m (oldest first): d ← d + (α_m − β_m) s_m, then ⟨y_{m+1}, d⟩, or ⟨∇φ, d⟩ last.
            for (std::size_t m = 0; m < pairs; ++m) {
                const double coef = alpha[m] - memory[m].inv_sy * dot_next;
                const double* s = memory[m].s.data();
                const double* along = m + 1 < pairs ? memory[m + 1].y.data() : g.data();
                dot_next = pass1([&](std::size_t lo, std::size_t hi, double* out) {
                    for (std::size_t k = lo; k < hi; ++k) d[k] += coef * s[k];
                    out[0] = lane_dot(along + lo, d.data() + lo, hi - lo);
                });
            }
            slope = dot_next;
            if (!(slope < 0)) {  // not a descent direction (rounding): steepest descent, restart
                memory.clear();
                slope = steepest(gnorm);
            }
        }
        // Armijo backtracking from the full step.
        double step = 1, next_value = 0;
        for (;;) {
            vector_pass<0>(loop, size, [&](std::size_t lo, std::size_t hi, double*) {
                for (std::size_t k = lo; k < hi; ++k) next[k] = x[k] + step * d[k];
            });
            next_value = augmented_value(next, rows, p, c, r, rho, next_g, loop);
            if (next_value <= value + 1e-4 * step * slope) break;
            step *= 0.5;
            if (step < 1e-10) break;  // no decrease found: keep the iterate x
        }
        if (step < 1e-10) break;
        Pair pair = std::move(spare);
        pair.s.resize(size);
        pair.y.resize(size);
        const auto dots =
            vector_pass<3>(loop, size, [&](std::size_t lo, std::size_t hi, double* out) {
                for (std::size_t k = lo; k < hi; ++k) {
                    pair.s[k] = next[k] - x[k];
                    pair.y[k] = next_g[k] - g[k];
                }
                out[0] = lane_dot(pair.s.data() + lo, pair.y.data() + lo, hi - lo);
                out[1] = lane_dot(pair.s.data() + lo, pair.s.data() + lo, hi - lo);
                out[2] = lane_dot(pair.y.data() + lo, pair.y.data() + lo, hi - lo);
            });
        const double sy = dots[0];
        if (sy > 1e-12 * std::sqrt(dots[1] * dots[2])) {
            pair.inv_sy = 1 / sy;
            pair.yy = dots[2];
            memory.push_back(std::move(pair));
            if (memory.size() > kMemory) {
                spare = std::move(memory.front());
                memory.pop_front();
            }
        } else {
            spare = std::move(pair);
        }
        x.swap(next);
        g.swap(next_g);
        value = next_value;
    }
    std::copy(x.begin(), x.end(), w.begin());
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
