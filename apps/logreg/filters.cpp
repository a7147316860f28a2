#include "apps/logreg/filters.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "core/base/error.h"

namespace rotor::logreg {
namespace {

constexpr std::size_t kLimbs = core::ExactSum::kLimbs;
constexpr std::array<const char*, 5> kNames = {"kkt", "sigmod", "skip", "keycache", "zstd"};

double limbs_value(std::span<const double> v) {
    std::array<std::int64_t, kLimbs> limbs{};
    for (std::size_t i = 0; i < kLimbs; ++i) limbs[i] = static_cast<std::int64_t>(v[i]);
    return core::ExactSum::from_limbs(limbs).value();
}

/// The change of a push entry: of g_k or of u_k, whichever is larger.
double push_change(std::span<const double> now, std::span<const double> old) {
    const double dg = std::fabs(limbs_value(now.first(kLimbs)) - limbs_value(old.first(kLimbs)));
    const double du = std::fabs(limbs_value(now.subspan(kLimbs, kLimbs)) -
                                limbs_value(old.subspan(kLimbs, kLimbs)));
    return std::max(dg, du);
}

/// The change of a pull entry: of w_k, or +∞ when the screen value of ĝ_k (0 or +∞, when sent)
/// changed, so that the worker's KKT screen learns every change of the rule's answer.
double pull_change(std::span<const double> now, std::span<const double> old) {
    if (now.size() > 1 && now[1] != old[1]) return std::numeric_limits<double>::infinity();
    return std::fabs(now[0] - old[0]);
}

}  // namespace

bool FilterOptions::has(const std::string& name) const {
    return std::find(stack.begin(), stack.end(), name) != stack.end();
}

std::vector<std::string> parse_filters(const std::string& list) {
    std::vector<std::string> out;
    if (list.empty() || list == "none") return out;
    if (list == "all") return {kNames.begin(), kNames.end()};  // in the documented order
    std::size_t at = 0;
    while (at <= list.size()) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const std::string name = list.substr(at, comma - at);
        if (std::find(kNames.begin(), kNames.end(), name) == kNames.end()) {
            throw ConfigError(
                "--filters",
                fmt::format("unknown filter '{}' (kkt, sigmod, skip, keycache, zstd; or all, none)",
                            name));
        }
        if (std::find(out.begin(), out.end(), name) != out.end()) {
            throw ConfigError("--filters", fmt::format("'{}' given twice", name));
        }
        out.push_back(name);
        at = comma + 1;
    }
    return out;
}

comm::KvFilterStack make_filter_stack(const FilterOptions& o, const KktScreen* screen,
                                      bool exact_pushes, std::size_t blocks) {
    std::vector<std::unique_ptr<comm::KvFilter>> filters;
    for (const std::string& name : o.stack) {
        if (name == "kkt") {
            filters.push_back(std::make_unique<comm::KvPredicateFilter>(
                "kkt", [screen](std::uint64_t t, std::uint64_t key, std::span<const double>) {
                    return screen != nullptr && screen->skips(t, key);
                }));
        } else if (name == "sigmod") {
            filters.push_back(std::make_unique<comm::KvSigmodFilter>(
                o.sigmod_threshold,
                exact_pushes ? comm::KvSigmodFilter::Distance(push_change) : nullptr, pull_change));
        } else if (name == "skip") {
            filters.push_back(std::make_unique<comm::KvSkipFilter>(o.skip_rate, o.seed));
        } else if (name == "keycache") {
            filters.push_back(std::make_unique<comm::KvKeyCacheFilter>(
                std::max<std::size_t>(1024, 2 * blocks + 16)));
        } else if (name == "zstd") {
            filters.push_back(std::make_unique<comm::KvZstdFilter>());
        } else {
            throw ConfigError("--filters", fmt::format("unknown filter '{}'", name));
        }
    }
    return comm::KvFilterStack(std::move(filters));
}

}  // namespace rotor::logreg
