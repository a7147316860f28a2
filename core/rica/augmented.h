// The W step of ADMM on all of W at once (docs/rica.md, "One worker: ADMM on all of W"). With the
// split Z = X Wᵀ (n×ℓ) of the L1 term, ADMM on F(W) = f(W) + λ‖X Wᵀ‖₁ alternates
//
//     W ← argmin_W f(W) + (ρ/2)‖X Wᵀ − (Z − U)‖²_F          (this file)
//     Z ← shrink_{λ/ρ}(X Wᵀ + U),   U ← U + X Wᵀ − Z          (core/rica/prox.h, split_update)
//
// The paper's step (eq. 17) replaces f by its linearisation plus (a/2)‖W − W⁰‖² so that rows
// separate (and a worker needs only its rows); with every row on one worker the true f can be
// kept. Its W step needs the data only through C = XᵀX and R = (Z − U)ᵀX (ℓ×p, one gemm over the
// data, prox.h's dual_target): up to a constant,
//
//     φ(W) = f(W) + (ρ/2)(tr(W C Wᵀ) − 2⟨W, R⟩),    ∇φ(W) = W (A C + C A) + ρ (W C − R),
//
// so each evaluation costs O(ℓp² + p³), none a pass over the n observations. It is minimised by
// a few L-BFGS iterations with Armijo backtracking, started from the current W; its products are
// cut into slabs of rows (gemm_slabs), and its vector work (the L-BFGS's dot products and updates
// over ℓp entries) into fixed chunks, each reduction summed in chunk order, that a RangeLoop may
// run in parallel.
//
// The Z, U side (AdmmSplit) is one pass over the data per step that fuses (19b), (19c) with the
// next W step's R = (Z − U)ᵀX, tile by tile of observations, so that X is read once a step, Z
// and X Wᵀ are never stored, and the two n×p×ℓ products reuse X's tile from the cache: the
// steps are bound by arithmetic rather than by memory traffic (docs/rica.md, "Threads").
//
// Thread-safety: functions of their arguments; an AdmmSplit belongs to one caller, which may
// pass a RangeLoop that runs its parts in parallel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/base/range_loop.h"
#include "core/rica/objective.h"

namespace rotor::rica {

/// φ(W) (up to the constant (ρ/2)‖Z − U‖²) and, into `gradient` (rows×p) when non-empty, ∇φ(W).
double augmented_value(std::span<const double> w, std::size_t rows, std::size_t p,
                       std::span<const double> c, std::span<const double> r, double rho,
                       std::span<double> gradient, const core::RangeLoop& loop = core::serial_loop);

/// `iterations` L-BFGS iterations on φ from `w` (rows×p), in place. Never increases φ. Its
/// arithmetic depends on the shapes only: the same bits for any `loop`.
void augmented_w_step(std::span<double> w, std::size_t rows, std::size_t p,
                      std::span<const double> c, std::span<const double> r, double rho,
                      int iterations, const core::RangeLoop& loop = core::serial_loop);

/// The split of ADMM on all of W (ℓ = `rows` rows): the scaled dual U (n×ℓ) and the W step's
/// R = (Z − U)ᵀX (ℓ×p). The observations are cut into chunks (one partial R each, summed in
/// chunk order) and a chunk into tiles, of sizes that depend on n, p and ℓ only, so the results
/// are the same bits for any RangeLoop.
class AdmmSplit {
  public:
    static constexpr std::size_t kMaxChunks = 64;
    static constexpr std::size_t kMinChunk = 64;  ///< observations

    /// Borrows `data` (which must outlive it).
    AdmmSplit(const Dense& data, std::size_t rows);

    /// A fresh start at W (rows×p): Z = X Wᵀ, U = 0.
    void reset(std::span<const double> w, const core::RangeLoop& loop);
    /// (19b), (19c) at the new W with the cut λ/ρ: Y = X Wᵀ, T = Y + U, U ← clamp(T, ±cut),
    /// Z = T − U; then R = (Z − U)ᵀX and the L1 of Y.
    void update(std::span<const double> w, double cut, const core::RangeLoop& loop);
    /// U ← factor·U (ρ ← ρ/factor, the unscaled dual ρU kept), R with it:
    /// R ← R + (1 − factor) UᵀX with the old U.
    void rescale(double factor, const core::RangeLoop& loop);

    /// R of the last reset, update or rescale: ℓ×p.
    const std::vector<double>& target() const { return r_; }
    /// Σ|X Wᵀ| at the W of the last reset or update.
    double l1() const { return l1_; }
    /// Observations per tile for dimension p and ℓ rows.
    static std::size_t tile(std::size_t p, std::size_t rows);
    /// Observations per chunk: n/kMaxChunks, at least kMinChunk (its tiles: tile(), the last
    /// one shorter).
    static std::size_t chunk(std::size_t n);
    /// The bytes it holds for n observations (U, the partial Rs, R, one tile per thread).
    static std::uint64_t bytes(std::size_t n, std::size_t p, std::size_t rows, int threads);

  private:
    /// One pass over the chunks: body(first, count, partial) fills each chunk's partial R and
    /// returns its L1; then `out` = Σ partials in chunk order; returns the L1s' sum likewise.
    template <class Body>
    double pass(const core::RangeLoop& loop, const Body& body, std::vector<double>& out);

    const Dense& data_;
    std::size_t rows_;
    std::size_t chunk_;            ///< observations per chunk
    std::vector<double> u_;        ///< n×ℓ
    std::vector<double> partial_;  ///< per chunk: its R, ℓ×p
    std::vector<double> r_;        ///< ℓ×p
    double l1_ = 0;
};

}  // namespace rotor::rica
