#include "apps/logreg/metrics_log.h"

#include <cerrno>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/base/error.h"

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

MetricsLog::MetricsLog(const std::string& path, bool append)
    : path_(path), file_(std::fopen(path.c_str(), append ? "a" : "w")) {
    if (file_ == nullptr) throw SystemError::from_errno(path, errno);
}

MetricsLog::~MetricsLog() {
    if (file_ != nullptr) std::fclose(file_);
}

void MetricsLog::write(const MetricsRecord& r) {
    const std::string line = metrics_json(r) + "\n";
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
        throw SystemError::from_errno(path_, errno);
}

}  // namespace rotor::logreg
