#include "core/logreg/kkt_screen.h"

#include <limits>

#include "core/base/error.h"

namespace rotor::logreg {

KktScreen::KktScreen(const KktOptions& options) : options_(options) {
    if (!(options.delta >= 0) || !std::isfinite(options.delta)) {
        throw ConfigError("--kkt-delta", "must be >= 0");
    }
    ROTOR_ASSERT(options.blocks >= 1 && options.lambda > 0, "KktScreen: bad options");
}

void KktScreen::observe(std::uint64_t key, double w, double g_hat) { seen_[key] = {w, g_hat}; }

void KktScreen::reopen(std::span<const std::uint64_t> keys) {
    for (const std::uint64_t k : keys) {
        const auto it = seen_.find(k);
        if (it != seen_.end()) it->second.second = std::numeric_limits<double>::infinity();
    }
}

bool KktScreen::skips(std::uint64_t t, std::uint64_t key) const {
    if (options_.refresh != 0 && (t / options_.blocks) % options_.refresh == 0) return false;
    const auto it = seen_.find(key);
    if (it == seen_.end()) return false;
    return kkt_skippable(it->second.first, it->second.second, penalty_of(key, options_.lambda),
                         options_.delta);
}

}  // namespace rotor::logreg
