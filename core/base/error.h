// Typed errors of rotor. Library code never prints and never exits: it throws one of these, and
// main() maps them to `rotor: error: ...` on stderr and an exit code (see apps/rotor/main.cpp).
//
// A broken invariant (a bug) is not one of these: it is ROTOR_ASSERT, which aborts. No user input
// may ever reach an assert.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace rotor {

/// Exit codes of the rotor executable.
enum class ExitCode : int {
    kOk = 0,
    kInternal = 1,  ///< a bug or an unexpected exception
    kInput = 2,     ///< bad input file
    kConfig = 3,    ///< bad flag or parameter
    kSystem = 4,    ///< the environment failed (I/O, memory, topology)
    kComm = 5,      ///< a communication failure across ranks
};

/// Base of every rotor error. what() is the full message as printed after `rotor: error: `.
class Error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
    virtual ExitCode exit_code() const noexcept { return ExitCode::kInternal; }
};

/// Bad input data. what() reads `<path>:<line>:<col>: <what>`; line and col are 1-based, 0 when
/// unknown (then omitted from the message).
class InputError : public Error {
  public:
    InputError(std::string path, std::uint64_t line, std::uint64_t col, std::string what);
    InputError(std::string path, std::string what)
        : InputError(std::move(path), 0, 0, std::move(what)) {}

    const std::string& path() const noexcept { return path_; }
    std::uint64_t line() const noexcept { return line_; }
    std::uint64_t col() const noexcept { return col_; }
    const std::string& detail() const noexcept { return detail_; }
    ExitCode exit_code() const noexcept override { return ExitCode::kInput; }

  private:
    std::string path_;
    std::uint64_t line_;
    std::uint64_t col_;
    std::string detail_;
};

/// A bad parameter or flag. what() reads `<key>: <what>`.
class ConfigError : public Error {
  public:
    ConfigError(std::string key, std::string what);
    const std::string& key() const noexcept { return key_; }
    ExitCode exit_code() const noexcept override { return ExitCode::kConfig; }

  private:
    std::string key_;
};

/// The environment failed: a system call, memory, the topology. what() carries errno's text
/// where there is one.
class SystemError : public Error {
  public:
    using Error::Error;
    /// Builds `<what>: <strerror(err)>`.
    static SystemError from_errno(const std::string& what, int err);
    ExitCode exit_code() const noexcept override { return ExitCode::kSystem; }
};

/// A communication failure. what() reads `rank <rank>: <what>`.
class CommError : public Error {
  public:
    CommError(int rank, std::string what);
    int rank() const noexcept { return rank_; }
    ExitCode exit_code() const noexcept override { return ExitCode::kComm; }

  private:
    int rank_;
};

namespace detail {
[[noreturn]] void assert_fail(const char* expr, const char* file, int line, const char* msg);
}  // namespace detail

}  // namespace rotor

/// Checks an internal invariant; on failure prints the location and aborts. Never for user input.
#define ROTOR_ASSERT(cond, msg)                                                    \
    do {                                                                           \
        if (!(cond)) ::rotor::detail::assert_fail(#cond, __FILE__, __LINE__, msg); \
    } while (0)
