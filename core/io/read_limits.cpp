#include "core/io/read_limits.h"

#include <fmt/format.h>

#include <utility>

#include "core/base/checked.h"
#include "core/base/error.h"

namespace rotor::core {

ReadLimits ReadLimits::for_memory(std::uint64_t bytes, std::string key, std::string what) {
    ReadLimits l;
    if (bytes > 0) l.max_bytes = bytes;
    l.memory_key = std::move(key);
    l.memory_what = std::move(what);
    return l;
}

void ReadLimits::refuse_bytes(std::uint64_t bytes, const std::string& path, std::uint64_t line,
                              std::uint64_t col, const std::string& what) const {
    const std::string limit =
        memory_what.empty() ? fmt::format("{} bytes", max_bytes) : memory_what;
    const std::string message =
        fmt::format("{} need about {} to read, more than {}", what, human_bytes(bytes), limit);
    if (!memory_key.empty())
        throw ConfigError(memory_key, InputError(path, line, col, message).what());
    throw InputError(path, line, col, message);
}

}  // namespace rotor::core
