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

namespace rotor::logreg {

train::RecordSchema progress_schema(bool newton) {
    train::RecordSchema s;
    s.count_key = newton ? "newton_iterations" : "examples";
    s.rate_key = newton ? "newton_iterations_per_s" : "examples_per_s";
    s.rate_unit = newton ? "iterations/s" : "examples/s";
    s.headline_key = "objective";
    s.headline_label = "objective";
    s.shown = {{"subgradient_ratio", "subgradient/w=0"},
               {"kkt_violation", "kkt"},
               {"nonzeros", "nonzeros"},
               {"test_auc", "test auc"},
               {"test_accuracy", "test accuracy"}};
    return s;
}

train::Record progress_record(const MetricsRecord& r, std::uint64_t processed, double iteration_s) {
    train::Record out;
    for (const auto& [key, v] : r) {
        if (key == "iter") {
            out.iter = static_cast<std::uint32_t>(v);
        } else if (key == "time_s") {
            out.time_s = v;
        } else {
            out.set(key, v);
        }
    }
    out.processed = processed;
    out.iteration_s = iteration_s;
    out.per_s = iteration_s > 0 ? static_cast<double>(processed) / iteration_s : 0;
    return out;
}

}  // namespace rotor::logreg
