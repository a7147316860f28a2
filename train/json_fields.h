// Strict reading of the JSON manifests the models write (checkpoints' state.json): each key of the
// JSON type and range asked for, or an InputError naming the file and the key. nlohmann/json is
// header-only and a build-only dependency of rotor_train.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

namespace rotor::train {

/// The parsed content of `path` (nlohmann's parse: trailing bytes are an error). InputError
/// "not valid JSON" naming the file otherwise.
nlohmann::json read_json_file(const std::string& path);

/// j[key]; InputError "missing key" unless j is an object holding it.
const nlohmann::json& json_field(const nlohmann::json& j, const char* key, const std::string& path);
/// An unsigned integer in 0..max.
std::uint64_t json_unsigned(const nlohmann::json& j, const char* key, const std::string& path,
                            std::uint64_t max = std::numeric_limits<std::uint64_t>::max());
/// A finite number.
double json_double(const nlohmann::json& j, const char* key, const std::string& path);
bool json_bool(const nlohmann::json& j, const char* key, const std::string& path);
std::string json_string(const nlohmann::json& j, const char* key, const std::string& path);

}  // namespace rotor::train
