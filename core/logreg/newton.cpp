#include "core/logreg/newton.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/base/rng.h"
#include "core/base/timer.h"

namespace rotor::logreg {
namespace {

// liblinear's constants (solve_l1r_lr): ν keeps H_jj > 0, σ of the Armijo rule, the halvings.
constexpr double kNu = 1e-12;
constexpr double kSigma = 0.01;
constexpr int kLineSearches = 20;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// log(1 + exp(−y m)), and t = exp(−|m|) (from which slopes() takes σ without another exp).
inline double loss_of(double m, int y, double& t) noexcept {
    t = std::exp(-std::fabs(m));
    const double z = y * m;
    return std::log1p(t) + (z < 0 ? -z : 0.0);
}

/// σ(−m) and σ(m)σ(−m) from t = exp(−|m|).
inline void slopes(double m, double t, double& tau, double& d) noexcept {
    const double r = 1 / (1 + t);
    tau = m >= 0 ? t * r : r;
    d = t * r * r;
}

/// The min-norm subgradient of a coordinate given its gradient's gp = g + λ, gn = g − λ.
inline double violation(double w, double gp, double gn) noexcept {
    if (w > 0) return std::fabs(gp);
    if (w < 0) return std::fabs(gn);
    if (gp < 0) return -gp;
    if (gn > 0) return gn;
    return 0;
}

}  // namespace

std::string_view stop_name(NewtonStop s) noexcept {
    switch (s) {
        case NewtonStop::kConverged:
            return "converged";
        case NewtonStop::kIterations:
            return "iteration cap";
        case NewtonStop::kTime:
            return "time limit";
        case NewtonStop::kStalled:
            return "line search stalled";
    }
    return "?";
}

NewtonSolver::NewtonSolver(Shard& part, const NewtonOptions& options)
    : part_(part), options_(options), gmax_old_(kInf) {
    const auto keys = part.keys();
    const std::size_t n = keys.size(), l = part.examples();
    lambda_.resize(n);
    for (std::size_t j = 0; j < n; ++j) lambda_[j] = penalty_of(keys[j], options.lambda);
    w_.assign(n, 0.0);
    wpd_.assign(n, 0.0);
    grad_.assign(n, 0.0);
    hdiag_.assign(n, 0.0);
    neg_sum_.assign(n, 0.0);
    index_.resize(n);
    std::iota(index_.begin(), index_.end(), 0U);
    const auto offsets = part.offsets();
    const auto rows = part.rows();
    const auto values = part.values();
    const auto labels = part.labels();
    grad0_.assign(n, 0.0);
    for (std::size_t j = 0; j < n; ++j) {
        double half = 0;  // Σ_i x_ij σ(0), summed as gradient() sums it at w = 0
        for (std::uint64_t e = offsets[j]; e < offsets[j + 1]; ++e) {
            if (labels[rows[e]] < 0) neg_sum_[j] += values[e];
            half += values[e] * 0.5;
        }
        grad0_[j] = neg_sum_[j] - half;
    }
    zero_ = subgradient_at_zero();
    margin_.assign(l, 0.0);
    tau_.assign(l, 0.5);
    d_.assign(l, 0.25);
    xtd_.assign(l, 0.0);
    loss_.assign(l, std::log(2.0));
    trial_loss_.assign(l, 0.0);
    trial_t_.assign(l, 0.0);
}

double NewtonSolver::subgradient_at_zero() const {
    double norm = 0;
    for (std::size_t j = 0; j < grad0_.size(); ++j)
        norm += violation(0, grad0_[j] + lambda_[j], grad0_[j] - lambda_[j]);
    return norm;
}

void NewtonSolver::set_lambda(double lambda) {
    options_.lambda = lambda;
    const auto keys = part_.keys();
    penalty_ = 0;
    for (std::size_t j = 0; j < keys.size(); ++j) {
        lambda_[j] = penalty_of(keys[j], lambda);
        penalty_ += lambda_[j] * std::fabs(w_[j]);
    }
    zero_ = subgradient_at_zero();
    gmax_old_ = kInf;  // the last λ's violations say nothing of which coordinates stay at 0
}

/// The gradient and Hessian diagonal of every coordinate at w, the rule's norms into status_,
/// and the outer shrinking: the working set is index_[0, status_.working).
void NewtonSolver::gradient(std::uint64_t iteration, double shrink_bound) {
    const auto offsets = part_.offsets();
    const auto rows = part_.rows();
    const auto values = part_.values();
    std::size_t working = index_.size();
    double gmax = 0, gnorm = 0;
    for (std::size_t s = 0; s < working;) {
        const std::uint32_t j = index_[s];
        double h = kNu, tmp = 0;
        for (std::uint64_t e = offsets[j]; e < offsets[j + 1]; ++e) {
            const std::uint32_t i = rows[e];
            const double v = values[e];
            h += v * v * d_[i];
            tmp += v * tau_[i];
        }
        hdiag_[j] = h;
        const double g = neg_sum_[j] - tmp;
        grad_[j] = g;
        const double gp = g + lambda_[j], gn = g - lambda_[j];
        if (w_[j] == 0 && gp >= 0 && gn <= 0 && gp > shrink_bound && gn < -shrink_bound) {
            std::swap(index_[s], index_[--working]);  // shrunk for this Newton iteration
            continue;
        }
        const double v = violation(w_[j], gp, gn);
        gmax = std::max(gmax, v);
        gnorm += v;
        ++s;
    }
    status_.iteration = iteration;
    status_.subgradient = gnorm;
    status_.kkt_violation = gmax;
    status_.working = static_cast<std::uint32_t>(working);
    double loss = 0;
    for (const double x : loss_) loss += x;
    status_.loss = loss;
    status_.objective = loss + penalty_;
    status_.nonzeros = static_cast<std::uint64_t>(
        std::count_if(w_.begin(), w_.end(), [](double x) { return x != 0; }));
}

/// The Newton direction: coordinate descent on the quadratic model over the working set until
/// its subgradient's 1-norm is <= inner_tol (with every working coordinate back in) or
/// max_cycles; wpd_ = w + d and xtd_[i] = x_iᵀd. The cycles taken.
std::uint32_t NewtonSolver::direction(double inner_tol, std::uint32_t working) {
    const auto offsets = part_.offsets();
    const auto rows = part_.rows();
    const auto values = part_.values();
    const double l = part_.examples();
    const std::uint32_t* const row = rows.data();
    const double* const value = values.data();
    const double* const d = d_.data();
    double* const xtd = xtd_.data();
    std::fill(xtd_.begin(), xtd_.end(), 0.0);
    wpd_ = w_;
    Rng rng = Rng::from({options_.seed, status_.iteration});
    double gmax_old = kInf;
    std::uint32_t active = working, cycles = 0;
    while (cycles < options_.max_cycles) {
        double gmax = 0, gnorm = 0;
        for (std::uint32_t s = 0; s + 1 < active; ++s)
            std::swap(index_[s], index_[s + rng.next() % (active - s)]);
        const double bound = gmax_old / l;
        for (std::uint32_t s = 0; s < active;) {
            const std::uint32_t j = index_[s];
            const double h = hdiag_[j];
            double g = grad_[j] + (wpd_[j] - w_[j]) * kNu;
            const std::uint64_t begin = offsets[j], end = offsets[j + 1];
            for (std::uint64_t e = begin; e < end; ++e) {
                const std::uint32_t i = row[e];
                g += value[e] * d[i] * xtd[i];
            }
            const double gp = g + lambda_[j], gn = g - lambda_[j];
            const double wj = wpd_[j];
            if (wj == 0 && gp >= 0 && gn <= 0 && gp > bound && gn < -bound) {
                std::swap(index_[s], index_[--active]);  // shrunk for the rest of the cycles
                continue;
            }
            ++s;
            const double v = violation(wj, gp, gn);
            gmax = std::max(gmax, v);
            gnorm += v;
            // The one-variable problem's minimiser: argmin_z g z + ½ h z² + λ|w_j + z|.
            double z = gp < h * wj ? -gp / h : gn > h * wj ? -gn / h : -wj;
            if (std::fabs(z) < 1e-12) continue;
            z = std::clamp(z, -10.0, 10.0);
            wpd_[j] += z;
            for (std::uint64_t e = begin; e < end; ++e) xtd[row[e]] += z * value[e];
        }
        ++cycles;
        if (gnorm <= inner_tol) {
            if (active == working) break;
            active = working;  // re-admit the coordinates shrunk in the cycles
            gmax_old = kInf;
            continue;
        }
        gmax_old = gmax;
    }
    return cycles;
}

/// Armijo backtracking on w + βd: F(w + βd) − F(w) ≤ σβΔ, Δ = gᵀd + λ‖w + d‖₁ − λ‖w‖₁. On
/// success w, the margins, losses and slopes move; false when 20 halvings found no descent.
bool NewtonSolver::line_search() {
    const auto labels = part_.labels();
    const std::size_t n = w_.size(), l = margin_.size();
    double delta = 0, penalty_new = 0;
    for (std::size_t j = 0; j < n; ++j) {
        delta += grad_[j] * (wpd_[j] - w_[j]);
        penalty_new += lambda_[j] * std::fabs(wpd_[j]);
    }
    delta += penalty_new - penalty_;
    for (int step = 0; step < kLineSearches; ++step) {
        double cond = penalty_new - penalty_ - kSigma * delta;
        for (std::size_t i = 0; i < l; ++i) {
            if (xtd_[i] == 0) continue;  // the example's loss is unchanged
            trial_loss_[i] = loss_of(margin_[i] + xtd_[i], labels[i], trial_t_[i]);
            cond += trial_loss_[i] - loss_[i];
        }
        if (cond <= 0) {
            w_ = wpd_;
            penalty_ = penalty_new;
            for (std::size_t i = 0; i < l; ++i) {
                if (xtd_[i] == 0) continue;
                margin_[i] += xtd_[i];
                loss_[i] = trial_loss_[i];
                slopes(margin_[i], trial_t_[i], tau_[i], d_[i]);
            }
            return true;
        }
        penalty_new = 0;
        for (std::size_t j = 0; j < n; ++j) {
            wpd_[j] = (w_[j] + wpd_[j]) * 0.5;
            penalty_new += lambda_[j] * std::fabs(wpd_[j]);
        }
        delta *= 0.5;
        for (double& x : xtd_) x *= 0.5;
    }
    return false;
}

NewtonStop NewtonSolver::run(const std::function<void(const NewtonStatus&)>& report) {
    const Stopwatch clock;
    const double l = part_.examples();
    double inner_eps = 1;
    std::uint32_t cycles = 0;
    NewtonStop stop = NewtonStop::kIterations;
    for (std::uint64_t it = 0;; ++it) {
        gradient(it, gmax_old_ / l);
        status_.zero = zero_;
        status_.cycles = cycles;
        status_.seconds = clock.seconds();
        if (report) report(status_);
        if (subgradient_converged(status_.subgradient, zero_, options_.tol)) {
            stop = NewtonStop::kConverged;
            break;
        }
        if (it >= options_.max_iterations) {
            stop = NewtonStop::kIterations;
            break;
        }
        if (options_.time_limit > 0 && status_.seconds >= options_.time_limit) {
            stop = NewtonStop::kTime;
            break;
        }
        cycles = direction(inner_eps * zero_, status_.working);
        if (!line_search()) {
            stop = NewtonStop::kStalled;
            break;
        }
        if (cycles == 1) inner_eps *= 0.25;
        gmax_old_ = status_.kkt_violation;
    }
    set_margins(part_, part_.keys(), w_);
    return stop;
}

}  // namespace rotor::logreg
