#include "apps/logreg/metrics_log.h"

#include <cmath>

#include <fmt/format.h>

namespace rotor::logreg {

std::string metrics_json(const MetricsRecord& r) {
    std::string out = "{";
    for (const auto& [key, v] : r) {
        if (out.size() > 1) out += ",";
        out += fmt::format("\"{}\":", key);
        if (!std::isfinite(v)) {
            out += "null";
        } else if (v == std::floor(v) && std::fabs(v) < 9e15) {
            out += fmt::format("{}", static_cast<long long>(v));
        } else {
            out += fmt::format("{:.17g}", v);
        }
    }
    return out + "}";
}

}  // namespace rotor::logreg
