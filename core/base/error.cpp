#include "core/base/error.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rotor {
namespace {

std::string input_message(const std::string& path, std::uint64_t line, std::uint64_t col,
                          const std::string& what) {
    std::string m = path;
    if (line > 0) {
        m += ':' + std::to_string(line);
        if (col > 0) m += ':' + std::to_string(col);
    }
    return m + ": " + what;
}

}  // namespace

InputError::InputError(std::string path, std::uint64_t line, std::uint64_t col, std::string what)
    : Error(input_message(path, line, col, what)),
      path_(std::move(path)),
      line_(line),
      col_(col),
      detail_(std::move(what)) {}

ConfigError::ConfigError(std::string key, std::string what)
    : Error(key + ": " + what), key_(std::move(key)) {}

SystemError SystemError::from_errno(const std::string& what, int err) {
    return SystemError(what + ": " + std::strerror(err));
}

CommError::CommError(int rank, std::string what)
    : Error("rank " + std::to_string(rank) + ": " + what), rank_(rank) {}

namespace detail {
void assert_fail(const char* expr, const char* file, int line, const char* msg) {
    std::fprintf(stderr, "rotor: internal error: %s:%d: assertion `%s` failed: %s\n", file, line,
                 expr, msg);
    std::abort();
}
}  // namespace detail

}  // namespace rotor
