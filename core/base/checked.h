// Checked arithmetic for sizes computed from input (a file's header, a count, a flag): an
// overflow is refused as the input's or the flag's error, never wrapped into a small number that
// a later allocation or message then trusts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rotor::core {

/// Where a size came from, so that refusing it names the right thing: a file position (an
/// InputError, exit 2) or a flag (a ConfigError, exit 3). Cheap to make on a hot path: it
/// refers to the caller's path or key, which must outlive it.
class SizeSource {
  public:
    /// A size read from `path` (line and column 1-based, 0 when unknown).
    static SizeSource input(std::string_view path, std::uint64_t line = 0, std::uint64_t col = 0);
    /// A size from the flag or parameter `key`.
    static SizeSource config(std::string_view key);

    /// Throws the error this source stands for, with `what` as its message.
    [[noreturn]] void fail(const std::string& what) const;

  private:
    SizeSource() = default;
    bool config_ = false;
    std::string_view name_;  ///< the path or the key
    std::uint64_t line_ = 0;
    std::uint64_t col_ = 0;
};

/// a * b; throws from `source` ("<what> overflows 64 bits: a x b") when it does not fit.
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const SizeSource& source,
                          std::string_view what);
/// a + b; throws from `source` ("<what> overflows 64 bits: a + b") when it does not fit.
std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const SizeSource& source,
                          std::string_view what);
/// `v`, after checking that it is at most `max`; throws from `source`
/// ("<what> = v exceeds the limit max") otherwise. For narrowing a checked size to a smaller type.
std::uint64_t checked_at_most(std::uint64_t v, std::uint64_t max, const SizeSource& source,
                              std::string_view what);

/// A size for people: "1.5 GiB", "12.0 MiB", "3.0 KiB".
std::string human_bytes(std::uint64_t bytes);

}  // namespace rotor::core
