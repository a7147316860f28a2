#include "core/mf/sgd.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "core/base/error.h"

namespace rotor::mf {
namespace {

// The per-rating share of a penalty whose total over an epoch is base * ρ (objective.h): base
// itself for the weighted form, base / |Ω| for plain.
double share(double base, const SgdSide& side, std::uint32_t i, LambdaForm form) {
    if (form == LambdaForm::kWeighted) return base;
    return base / static_cast<double>(std::max<std::uint64_t>(side.counts[i], 1));
}

void check_side(const SgdSide& s, const SgdParams& p, const char* what) {
    ROTOR_ASSERT(s.factors != nullptr, what);
    const std::size_t n = s.factors->rows();
    ROTOR_ASSERT(s.factor_gsum.size() == n, what);
    ROTOR_ASSERT(!p.objective.bias || (s.bias.size() == n && s.bias_gsum.size() == n), what);
    ROTOR_ASSERT(p.objective.form == LambdaForm::kWeighted || s.counts.size() == n, what);
}

// Σ a_k b_k in float over 8 interleaved lanes (a fixed order): SGD's prediction, where float
// is LIBMF's precision and twice the SSE throughput of the double dot.
float dot_float(const float* a, const float* b, std::size_t n) {
    float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        for (std::size_t l = 0; l < 8; ++l) s[l] += a[k + l] * b[k + l];
    }
    for (; k < n; ++k) s[k % 8] += a[k] * b[k];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// One bias step: x −= η / sqrt(acc) · g with g = λ x − e, then acc += g².
void bias_step(float& x, float& acc, double lambda, double e, double eta) {
    const double g = lambda * x - e;
    x = static_cast<float>(x - eta / std::sqrt(static_cast<double>(acc)) * g);
    acc = static_cast<float>(acc + g * g);
}

}  // namespace

void SgdParams::validate() const {
    objective.validate();
    if (!(eta > 0) || !std::isfinite(eta)) {
        throw ConfigError("--eta", "must be a positive finite number, got " + std::to_string(eta));
    }
}

SgdState::SgdState(std::uint32_t rows, bool with_bias)
    : bias(with_bias ? rows : 0, 0.0f),
      factor_gsum(rows, 1.0f),
      bias_gsum(with_bias ? rows : 0, 1.0f) {}

SgdSide SgdState::side(Factors& factors, std::span<const std::uint64_t> counts) {
    return SgdSide{&factors, bias, factor_gsum, bias_gsum, counts};
}

double sgd_update(std::uint32_t i, std::uint32_t j, float a, SgdSide& rows, SgdSide& cols,
                  double mu, const SgdParams& p) {
    const ObjectiveParams& o = p.objective;
    const std::span<float> w = rows.factors->row(i);
    const std::span<float> h = cols.factors->row(j);
    double pred = mu + dot_float(w.data(), h.data(), w.size());
    if (o.bias) pred += static_cast<double>(rows.bias[i]) + cols.bias[j];
    const double e = static_cast<double>(a) - pred;

    // Factors: float arithmetic, gradients at the values before the update, the squared
    // gradients summed in 4 interleaved lanes (a fixed order).
    const auto ef = static_cast<float>(e);
    const auto lw = static_cast<float>(share(o.lambda, rows, i, o.form));
    const auto lh = static_cast<float>(share(o.lambda, cols, j, o.form));
    const auto eta_w = static_cast<float>(p.eta / std::sqrt(double{rows.factor_gsum[i]}));
    const auto eta_h = static_cast<float>(p.eta / std::sqrt(double{cols.factor_gsum[j]}));
    float sw[4] = {0, 0, 0, 0}, sh[4] = {0, 0, 0, 0};
    const std::size_t K = w.size();
    float* wp = w.data();
    float* hp = h.data();
    // Coordinate k goes to lane k % 4; blocks of 4 so the compiler can keep the lanes in one
    // vector register.
    auto step = [&](std::size_t k, std::size_t lane) {
        const float wk = wp[k], hk = hp[k];
        const float gw = lw * wk - ef * hk;
        const float gh = lh * hk - ef * wk;
        sw[lane] += gw * gw;
        sh[lane] += gh * gh;
        wp[k] = wk - eta_w * gw;
        hp[k] = hk - eta_h * gh;
    };
    std::size_t k = 0;
    for (; k + 4 <= K; k += 4) {
        for (std::size_t l = 0; l < 4; ++l) step(k + l, l);
    }
    for (; k < K; ++k) step(k, k % 4);
    const float inv_k = 1.0f / static_cast<float>(K);
    rows.factor_gsum[i] += ((sw[0] + sw[1]) + (sw[2] + sw[3])) * inv_k;
    cols.factor_gsum[j] += ((sh[0] + sh[1]) + (sh[2] + sh[3])) * inv_k;

    if (o.bias) {
        bias_step(rows.bias[i], rows.bias_gsum[i], share(o.lambda_bias, rows, i, o.form), e, p.eta);
        bias_step(cols.bias[j], cols.bias_gsum[j], share(o.lambda_bias, cols, j, o.form), e, p.eta);
    }
    return e;
}

std::uint64_t sgd_block(const BlockView& block, SgdSide& rows, SgdSide& cols, double mu,
                        const SgdParams& p, Rng& rng, const std::atomic<bool>* stop, double* loss) {
    const std::uint64_t n = block.size();
    ROTOR_ASSERT(block.rows.size() == n && block.cols.size() == n, "sgd_block: block arrays");
    ROTOR_ASSERT(n <= std::numeric_limits<std::uint32_t>::max(), "sgd_block: block too large");
    check_side(rows, p, "sgd_block: the row side's arrays do not match W");
    check_side(cols, p, "sgd_block: the column side's arrays do not match H");
    ROTOR_ASSERT(rows.factors->k() == cols.factors->k(), "sgd_block: W and H differ in K");

    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), std::uint32_t{0});
    for (std::uint64_t t = n; t > 1; --t) std::swap(order[t - 1], order[rng.below(t)]);

    double sum = 0;
    std::uint64_t done = 0;
    for (; done < n; ++done) {
        if (stop != nullptr && stop->load(std::memory_order_relaxed)) break;
        const std::uint32_t t = order[done];
        const double e =
            sgd_update(block.rows[t], block.cols[t], block.values[t], rows, cols, mu, p);
        sum += e * e;
    }
    if (loss != nullptr) *loss += sum;
    return done;
}

}  // namespace rotor::mf
