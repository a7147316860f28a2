#include "core/rica/prox.h"

#include <algorithm>
#include <cmath>

#include "core/base/blas.h"
#include "core/base/error.h"

namespace rotor::rica {

using core::blas::Op;

Spectrum Spectrum::of(std::span<const double> c, std::size_t p) {
    Spectrum s;
    s.p = p;
    s.q.assign(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(p * p));
    s.values.resize(p);
    core::blas::symmetric_eigen(s.q, s.values, p, true);
    double trace = 0;
    for (std::size_t i = 0; i < p; ++i) trace += c[i * p + i];
    for (double& v : s.values) v = std::max(v, 0.0);  // C is PSD: rounding only
    s.mean = p > 0 ? trace / static_cast<double>(p) : 0;
    s.largest = p > 0 ? s.values[p - 1] : 0;
    return s;
}

double init_block(const Dense& d, std::span<const double> w, std::size_t rows, BlockState& st,
                  Scratch&) {
    st.rows = rows;
    st.h.assign(rows, 1.0);
    st.rho.assign(rows, 0.0);
    st.z.assign(d.n * rows, 0.0);
    st.u.assign(d.n * rows, 0.0);
    core::blas::gemm(Op::kNone, Op::kTranspose, d.n, rows, d.p, 1.0, d.x.data(), d.p, w.data(), d.p,
                     0.0, st.z.data(), rows);
    double l1 = 0;
    for (const double z : st.z) l1 += std::fabs(z);
    return l1;
}

void dual_target(const Dense& d, const BlockState& st, Scratch& sc, std::span<double> r) {
    const std::size_t n = d.n, rows = st.rows;
    sc.y.resize(n * rows);
    for (std::size_t k = 0; k < n * rows; ++k) sc.y[k] = st.z[k] - st.u[k];
    core::blas::gemm(Op::kTranspose, Op::kNone, rows, d.p, n, 1.0, sc.y.data(), rows, d.x.data(),
                     d.p, 0.0, r.data(), d.p);
}

double split_update(const Dense& d, std::span<const double> w, std::span<const double> cut,
                    BlockState& st, Scratch& sc) {
    const std::size_t n = d.n, p = d.p, rows = st.rows;
    // (19b), (19c): y = X wᵀ; t = y + u; z = shrink_{λ/ρ}(t) = t − clamp(t, ±λ/ρ);
    // u = t − z = clamp(t, ±λ/ρ). Branch-free, so the loop over a row's columns vectorises.
    sc.y.resize(n * rows);
    core::blas::gemm(Op::kNone, Op::kTranspose, n, rows, p, 1.0, d.x.data(), p, w.data(), p, 0.0,
                     sc.y.data(), rows);
    double l1 = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double* y = sc.y.data() + i * rows;
        double* z = st.z.data() + i * rows;
        double* u = st.u.data() + i * rows;
        double row_l1 = 0;
        for (std::size_t j = 0; j < rows; ++j) {
            row_l1 += std::fabs(y[j]);
            const double t = y[j] + u[j];
            const double c = std::min(std::max(t, -cut[j]), cut[j]);
            z[j] = t - c;
            u[j] = c;
        }
        l1 += row_l1;
    }
    return l1;
}

double admm_prox(const Dense& d, const Spectrum& spec, std::span<const double> v,
                 std::span<const double> a, double lambda, int iterations, BlockState& st,
                 Scratch& sc, std::span<double> w) {
    const std::size_t n = d.n, p = d.p, rows = st.rows;
    ROTOR_ASSERT(iterations >= 1 && v.size() == rows * p && w.size() == rows * p, "admm_prox");
    std::vector<double> rho(rows);
    for (std::size_t j = 0; j < rows; ++j) {
        rho[j] = spec.mean > 0 ? a[j] / spec.mean : a[j];
        // u is the dual scaled by 1/ρ: a new ρ rescales it (the unscaled dual carries over).
        if (st.rho[j] > 0 && st.rho[j] != rho[j]) {
            const double f = st.rho[j] / rho[j];
            for (std::size_t i = 0; i < n; ++i) st.u[i * rows + j] *= f;
        }
        st.rho[j] = rho[j];
    }
    std::vector<double> cut(rows);
    for (std::size_t j = 0; j < rows; ++j) cut[j] = lambda / rho[j];
    sc.r.resize(rows * p);
    sc.t.resize(rows * p);
    double l1 = 0;
    for (int it = 0; it < iterations; ++it) {
        // (19a): r = Xᵀ(z − u) per row; w = Q diag(1/(a + ρΛ)) Qᵀ (a v + ρ r).
        dual_target(d, st, sc, sc.r);
        for (std::size_t j = 0; j < rows; ++j)
            for (std::size_t k = 0; k < p; ++k)
                sc.r[j * p + k] = a[j] * v[j * p + k] + rho[j] * sc.r[j * p + k];
        core::blas::gemm(Op::kNone, Op::kNone, rows, p, p, 1.0, sc.r.data(), p, spec.q.data(), p,
                         0.0, sc.t.data(), p);
        for (std::size_t j = 0; j < rows; ++j)
            for (std::size_t k = 0; k < p; ++k) sc.t[j * p + k] /= a[j] + rho[j] * spec.values[k];
        core::blas::gemm(Op::kNone, Op::kTranspose, rows, p, p, 1.0, sc.t.data(), p, spec.q.data(),
                         p, 0.0, w.data(), p);
        l1 = split_update(d, w, cut, st, sc);
    }
    return l1;
}

double prox_gradient_step(const Dense& d, const Spectrum& spec, std::span<const double> m,
                          const StepOptions& o, std::span<double> w, BlockState& st, Scratch& sc) {
    const std::size_t p = d.p, rows = st.rows;
    // g = w M (eq. 16 restricted to the block's rows); v = w − g / a.
    sc.v.resize(rows * p);
    core::blas::gemm(Op::kNone, Op::kNone, rows, p, p, 1.0, w.data(), p, m.data(), p, 0.0,
                     sc.v.data(), p);
    std::vector<double> a(rows), old(w.begin(), w.end());
    for (std::size_t j = 0; j < rows; ++j) {
        a[j] = o.lipschitz * st.h[j] / o.eta;
        for (std::size_t k = 0; k < p; ++k) sc.v[j * p + k] = w[j * p + k] - sc.v[j * p + k] / a[j];
    }
    const double l1 = admm_prox(d, spec, sc.v, a, o.lambda, o.admm_iterations, st, sc, w);
    for (std::size_t j = 0; j < rows; ++j) {
        double change = 0, norm = 0;
        for (std::size_t k = 0; k < p; ++k) {
            const double delta = w[j * p + k] - old[j * p + k];
            change += delta * delta;
            norm += w[j * p + k] * w[j * p + k];
        }
        if (norm > 0) st.h[j] = std::sqrt(st.h[j] * st.h[j] + change / norm);
    }
    return l1;
}

}  // namespace rotor::rica
