#include "apps/logreg/metrics_log.h"

#include <cmath>

#include <fmt/format.h>

#include "apps/logreg/evaluation.h"

namespace rotor::logreg {

MetricsRecord evaluation_record(const Evaluation& e, std::uint64_t iteration, double time_s,
                                double eval_s) {
    return {{"iter", static_cast<double>(iteration)},
            {"time_s", time_s},
            {"eval_s", eval_s},
            {"objective", e.objective},
            {"loss", e.loss},
            {"penalty", e.objective - e.loss},
            {"nonzeros", static_cast<double>(e.nonzeros)},
            {"kkt_violation", e.kkt_violation}};
}

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
