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
// a few L-BFGS iterations with Armijo backtracking, started from the current W.
//
// Thread-safety: a function of its arguments.
#pragma once

#include <cstddef>
#include <span>

namespace rotor::rica {

/// φ(W) (up to the constant (ρ/2)‖Z − U‖²) and, into `gradient` (rows×p) when non-empty, ∇φ(W).
double augmented_value(std::span<const double> w, std::size_t rows, std::size_t p,
                       std::span<const double> c, std::span<const double> r, double rho,
                       std::span<double> gradient);

/// `iterations` L-BFGS iterations on φ from `w` (rows×p), in place. Never increases φ. Runs on
/// the calling thread; its arithmetic depends on the shapes only (the same bits for any caller).
void augmented_w_step(std::span<double> w, std::size_t rows, std::size_t p,
                      std::span<const double> c, std::span<const double> r, double rho,
                      int iterations);

}  // namespace rotor::rica
