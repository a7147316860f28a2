#include "train/json_fields.h"

#include <cmath>

#include <fmt/format.h>

#include "core/base/error.h"
#include "core/io/whole_file.h"

namespace rotor::train {

nlohmann::json read_json_file(const std::string& path) {
    const std::string text = core::read_json_text(path);
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(path, fmt::format("not valid JSON: {}", e.what()));
    }
}

const nlohmann::json& json_field(const nlohmann::json& j, const char* key,
                                 const std::string& path) {
    if (!j.is_object() || !j.contains(key))
        throw InputError(path, fmt::format("missing key \"{}\"", key));
    return j.at(key);
}

std::uint64_t json_unsigned(const nlohmann::json& j, const char* key, const std::string& path,
                            std::uint64_t max) {
    const auto& v = json_field(j, key, path);
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max)
        throw InputError(path, fmt::format("\"{}\" must be an integer in 0..{}", key, max));
    return v.get<std::uint64_t>();
}

double json_double(const nlohmann::json& j, const char* key, const std::string& path) {
    const auto& v = json_field(j, key, path);
    if (!v.is_number() || !std::isfinite(v.get<double>()))
        throw InputError(path, fmt::format("\"{}\" must be a finite number", key));
    return v.get<double>();
}

bool json_bool(const nlohmann::json& j, const char* key, const std::string& path) {
    const auto& v = json_field(j, key, path);
    if (!v.is_boolean()) throw InputError(path, fmt::format("\"{}\" must be true or false", key));
    return v.get<bool>();
}

std::string json_string(const nlohmann::json& j, const char* key, const std::string& path) {
    const auto& v = json_field(j, key, path);
    if (!v.is_string()) throw InputError(path, fmt::format("\"{}\" must be a string", key));
    return v.get<std::string>();
}

}  // namespace rotor::train
