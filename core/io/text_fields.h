// The fields of rotor's small text model files (logistic regression's and RICA's): `<name>
// <value>` lines and the numbers in them, read through a LineReader so that every error names
// the file, line and column (InputError, exit code 2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/io/line_reader.h"

namespace rotor::core {

/// The next line; at the end of the input fails at column 1 with "missing <what>".
std::string_view next_line(LineReader& r, std::string_view what);

/// The value of the next line, which must be `<name> <value>`; with `value_required` false a
/// bare `<name>` (or `<name> `) is accepted too and gives "". Fails at column 1 with
/// `expected "<name> <value>"` otherwise.
std::string_view named_field(LineReader& r, std::string_view name, bool value_required = true);

/// `text` as a finite double; fails at `col` with `"<text>" is not a finite number`.
double finite_number_at(LineReader& r, std::string_view text, std::size_t col);

/// `text` as an unsigned 64-bit integer, all of it; fails at `col` with `"<text>" is not an
/// unsigned integer`.
std::uint64_t unsigned_at(LineReader& r, std::string_view text, std::size_t col);

}  // namespace rotor::core
