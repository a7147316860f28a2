// The KKT filter of the delayed block proximal gradient (Li et al., NIPS 2014, section 4 and
// "KKT filter"; docs/logreg.md, "Filters"): at the optimum of the L1 problem, w_k = 0 exactly
// when |g_k| ≤ λ. A worker skips pushing coordinate k when
//     w_k = 0  and  |ĝ_k| ≤ λ − δ,
// ĝ_k being the last aggregated gradient it saw for k (the servers send it back with w_k in the
// pull). A skipped key is not updated by the servers, which is what its proximal step would
// do for the true gradient: |g| ≤ λ_k implies S(0 − η g / u, η λ_k / u) = 0 (prox_step).
// Because a skipped key's ĝ_k stops changing, every `refresh`-th pass over the blocks skips
// nothing, so a key whose gradient has grown past λ comes back; and between them, every
// evaluation of `rotor logreg train` (which computes the full gradient anyway) reopens the zero
// keys whose true gradient is past λ (reopen), which the stale ĝ_k would keep skipping.
// Single-threaded: one per worker.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <unordered_map>

#include "core/logreg/objective.h"

namespace rotor::logreg {

/// The rule: true when coordinate k may skip its push. The intercept (λ_k = 0) never does.
inline bool kkt_skippable(double w, double g_hat, double lambda_k, double delta) noexcept {
    return w == 0 && lambda_k > 0 && std::fabs(g_hat) <= lambda_k - delta;
}

/// Options of KktScreen. A plain struct.
struct KktOptions {
    double lambda = 1;           ///< λ of the problem
    double delta = 0;            ///< δ >= 0: the margin below λ
    std::uint32_t blocks = 1;    ///< B: iterations per pass
    std::uint32_t refresh = 16;  ///< every refresh-th pass (0, R, 2R, ...) skips nothing; 0: never
};

/// A worker's memory of w_k and ĝ_k for the keys it pulled, and the rule over it.
class KktScreen {
  public:
    explicit KktScreen(const KktOptions& options);
    /// Records the pulled w_k and ĝ_k of `key`.
    void observe(std::uint64_t key, double w, double g_hat);
    /// Whether `key` skips its push of iteration t (false for keys never observed and on
    /// refresh passes).
    bool skips(std::uint64_t t, std::uint64_t key) const;
    /// Forgets ĝ_k of the observed keys among `keys` (they push until a pull tells them ĝ_k
    /// again): the zero weights an evaluation found violating |g_k| ≤ λ_k.
    void reopen(std::span<const std::uint64_t> keys);
    const KktOptions& options() const noexcept { return options_; }

  private:
    KktOptions options_;
    std::unordered_map<std::uint64_t, std::pair<double, double>> seen_;
};

}  // namespace rotor::logreg
