#include "apps/lasso/data.h"

#include <algorithm>
#include <cctype>
#include <span>

#include "core/base/error.h"
#include "core/io/binary_sections.h"
#include "core/lasso/data_binary.h"
#include "core/lasso/dense_reader.h"
#include "core/lasso/libsvm_reader.h"

namespace rotor::apps::lasso_cli {
namespace {

bool ends_with(std::string s, const std::string& tail) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// Whether `path` starts with the binary form's magic (false when it cannot be read: the
/// reader then names the problem).
bool starts_binary(const std::string& path) {
    const std::string head = core::file_prefix(path);
    return lasso::has_data_binary_magic(std::as_bytes(std::span(head)));
}

/// The binary form was built with its target: --target is a configuration error there.
void refuse_target_for_binary(const std::string& target) {
    if (!target.empty())
        throw ConfigError("--target", "applies to csv input only (the binary form has its target)");
}

}  // namespace

void DataFlags::add(CLI::App& c, const std::string& what) {
    c.add_option("--data", path, what)->required();
    c.add_option("--format", format,
                 "libsvm (svmlight: y idx:val ...), csv (CSV/TSV, header optional) or binary "
                 "(`rotor lasso build`); auto: binary by its first bytes, csv for "
                 ".csv/.tsv/.txt names (also .gz), else libsvm")
        ->check(CLI::IsMember({"auto", "libsvm", "csv", "binary"}))
        ->capture_default_str();
    c.add_option("--target", target,
                 "csv: the target column, by header name or 1-based number (default: the last)");
}

std::string DataFlags::resolved_format() const {
    if (format != "auto") return format;
    if (starts_binary(path)) return "binary";
    std::string p = path;
    if (ends_with(p, ".gz")) p.resize(p.size() - 3);
    return ends_with(p, ".csv") || ends_with(p, ".tsv") || ends_with(p, ".txt") ? "csv" : "libsvm";
}

lasso::RawData DataFlags::read(std::uint32_t min_features, const core::ReadLimits& limits) const {
    const std::string f = resolved_format();
    if (f == "binary") {
        refuse_target_for_binary(target);
        lasso::RawData raw = lasso::read_data_binary(path, limits);
        if (!raw.dense) raw.features = std::max(raw.features, min_features);  // as libsvm
        return raw;
    }
    if (f == "libsvm") {
        if (!target.empty())
            throw ConfigError("--target", "applies to csv input only (libsvm's target is first)");
        lasso::ReadLibsvmOptions o;
        o.min_features = min_features;
        o.limits = limits;
        return lasso::read_libsvm(path, o);
    }
    lasso::ReadDenseOptions o;
    o.target = target;
    o.limits = limits;
    return lasso::read_dense(path, o);
}

std::optional<lasso::MappedData> DataFlags::map_binary() const {
    if (resolved_format() != "binary") return std::nullopt;
    refuse_target_for_binary(target);
    return std::optional<lasso::MappedData>(std::in_place, path);
}

}  // namespace rotor::apps::lasso_cli
