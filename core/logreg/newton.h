// The single-machine solver of L1-regularised logistic regression (docs/logreg.md, "Solvers"):
// newGLMNET (Yuan, Ho and Lin, "An improved GLMNET for L1-regularized logistic regression",
// JMLR 2012; liblinear's -s 6, `solve_l1r_lr`), on one part's examples in column form.
//
// Each Newton iteration at w: the gradient g and the Hessian's diagonal H_jj = Σ_i D_i x_ij²
// (D_i = σ(m_i)σ(−m_i)) over every coordinate; the stopping rule (subgradient_converged, the
// min-norm subgradient's 1-norm against its value at w = 0); then the direction d minimising the
// quadratic model q(d) = gᵀd + ½ dᵀ X D Xᵀ d + λ‖w + d‖₁ by cyclic coordinate descent over the
// working set (random order each cycle; x_iᵀd kept per example), with shrinking: a coordinate at
// w_j = 0 whose |g_j| stays below λ by a margin (the last iteration's largest violation / l)
// leaves the working set of this Newton iteration (outer level) or of the rest of the cycles
// (inner level, re-admitted once the inner tolerance is met); and an Armijo line search on
// F(w + βd) ≤ F(w) + σβΔ (σ = 0.01, β halved up to 20 times). The inner tolerance starts at the
// outer rule's scale and shrinks 4× whenever one cycle was enough.
//
// The objective is the trainer's (objective.h), with the intercept (kInterceptKey) unpenalised.
// Single-threaded; borrows the part and sets its margins to x_iᵀw at the end (summed in key
// order, as set_margins). Deterministic: the same part and options give the same bits.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "core/logreg/objective.h"
#include "core/logreg/shard.h"

namespace rotor::logreg {

/// Options of NewtonSolver. A plain struct.
struct NewtonOptions {
    double lambda = 1;                    ///< λ > 0
    double tol = kDefaultTol;             ///< the stopping rule's tolerance (0: never)
    std::uint64_t max_iterations = 1000;  ///< Newton iterations at most (a cap)
    std::uint32_t max_cycles = 1000;      ///< coordinate-descent cycles a Newton iteration
    std::uint64_t seed = 1;               ///< of the coordinate orders
    double time_limit = 0;                ///< seconds (0: none), tested once a Newton iteration
};

/// Why NewtonSolver::run returned.
enum class NewtonStop {
    kConverged,   ///< the stopping rule held
    kIterations,  ///< max_iterations Newton iterations done
    kTime,        ///< time_limit passed
    kStalled,     ///< the line search found no descent in 20 halvings (rounding level)
};

/// "converged", "iteration cap", "time limit", "line search stalled".
std::string_view stop_name(NewtonStop s) noexcept;

/// The state at the top of a Newton iteration (after `iteration` of them), where the rule is
/// tested. Plain struct.
struct NewtonStatus {
    std::uint64_t iteration = 0;
    double objective = 0;        ///< Σ log-loss + λ‖w‖₁ (summed in double, example order)
    double loss = 0;             ///< Σ log-loss
    double subgradient = 0;      ///< ‖∇^S F(w)‖₁
    double zero = 0;             ///< ‖∇^S F(0)‖₁
    double kkt_violation = 0;    ///< max_k of the min-norm subgradient (kkt_violation)
    std::uint64_t nonzeros = 0;  ///< w_k ≠ 0, the intercept included
    std::uint32_t cycles = 0;    ///< coordinate-descent cycles of the previous iteration
    std::uint32_t working = 0;   ///< coordinates in this iteration's working set
    double seconds = 0;          ///< since run() began
};

/// newGLMNET over one part (see the file comment). Not thread-safe; borrows `part`.
class NewtonSolver {
  public:
    /// Starts at w = 0 (the solver keeps its own margins; `part`'s are only written by run()).
    NewtonSolver(Shard& part, const NewtonOptions& options);

    /// A warm start (docs/logreg.md, "Path and cross-validation"): the next run() minimises F
    /// at `lambda` (> 0) from the current w, with the stopping rule's reference ‖∇^S F(0)‖₁ that
    /// of `lambda`, so it stops where a run from w = 0 at `lambda` would be allowed to.
    void set_lambda(double lambda);

    /// Iterates until the rule holds, the cap, the time limit or a stalled line search;
    /// `report` (may be empty) sees the status at the top of every Newton iteration (the last
    /// one included). Sets the part's margins to x_iᵀw.
    NewtonStop run(const std::function<void(const NewtonStatus&)>& report = {});

    /// w aligned with part.keys().
    std::span<const double> weights() const noexcept { return w_; }
    /// The last status (the one the rule was tested on).
    const NewtonStatus& status() const noexcept { return status_; }

  private:
    void gradient(std::uint64_t iteration, double shrink_bound);
    std::uint32_t direction(double inner_tol, std::uint32_t working);
    /// ‖∇^S F(0)‖₁ at the current λ, from grad0_.
    double subgradient_at_zero() const;
    bool line_search();

    Shard& part_;
    NewtonOptions options_;
    std::vector<double> lambda_;   ///< per coordinate: λ, or 0 for the intercept
    std::vector<double> w_, wpd_;  ///< w and w + d
    std::vector<double> grad_, hdiag_;
    std::vector<double> grad0_;                 ///< the loss's gradient at w = 0
    std::vector<double> neg_sum_;               ///< Σ_{i: y_i = −1} x_ij
    std::vector<std::uint32_t> index_;          ///< coordinates; the working set first
    std::vector<double> margin_;                ///< m_i = x_iᵀw
    std::vector<double> tau_;                   ///< σ(−m_i)
    std::vector<double> d_;                     ///< D_i = σ(m_i)σ(−m_i)
    std::vector<double> xtd_;                   ///< x_iᵀd
    std::vector<double> loss_;                  ///< log(1 + exp(−y_i m_i))
    std::vector<double> trial_loss_, trial_t_;  ///< the line search's, per example
    double penalty_ = 0;                        ///< Σ λ_k |w_k|
    double zero_ = 0;                           ///< ‖∇^S F(0)‖₁ at options_.lambda
    double gmax_old_;  ///< the last iteration's largest violation (shrinking)
    NewtonStatus status_;
};

}  // namespace rotor::logreg
