// Reading a small file whole, and the check every JSON file rotor reads goes through before its
// parser sees it. Thread-safe (pure functions over their arguments).
#pragma once

#include <string>
#include <string_view>

namespace rotor::core {

/// The whole content of `path`. Throws InputError naming it when it cannot be opened or read.
std::string read_whole_file(const std::string& path);

/// Throws InputError `path:line:col` at the first NUL byte of `text`. JSON text holds none (a
/// NUL inside a string is written \u0000), but nlohmann/json's lexer takes a NUL for the end of
/// its input, so without this check `{...}\0GARBAGE` would read as `{...}` and the garbage after
/// the NUL would go unseen.
void check_json_text(std::string_view text, const std::string& path);

/// read_whole_file() then check_json_text(): what every JSON reader of rotor parses.
std::string read_json_text(const std::string& path);

}  // namespace rotor::core
