// The lines of a dense numeric table in CSV or TSV, one record per line, every field a number:
// what the dense readers of every model share (the Lasso's core/lasso/dense_reader.h, RICA's
// observations; docs/formats.md, "Dense CSV/TSV"). Plain or gzip (by magic bytes).
//
// The rules (lines end at '\n'; a '\r' before it is removed):
//   - a UTF-8 byte-order mark at the start of line 1 is skipped (columns still count it);
//   - blank lines and lines whose first non-blank byte is '#' are skipped, anywhere;
//   - the first other line fixes the separator: ',' if it holds a comma, else a tab;
//   - that line is a header (column names, double quotes around a name removed) when
//     DenseTableOptions::header says so (kAuto: when any of its fields is not a number);
//   - every line has as many fields as the first; fields are trimmed of spaces (and tabs in
//     CSV); a data field is a finite number (strtod syntax, an optional leading '+', no hex); an
//     empty field (a missing value) is an error; quoting is not supported in data lines.
// Any violation throws InputError `<path>:<line>:<col>: <what>` (exit code 2).
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/io/line_reader.h"

namespace rotor::core {

/// How read_dense_table() treats the first line that is neither blank nor a comment.
enum class DenseHeader {
    kAuto,     ///< a header when any of its fields is not a number
    kPresent,  ///< always a header
    kAbsent,   ///< never a header
};

/// Options of read_dense_table(). A plain struct.
struct DenseTableOptions {
    DenseHeader header = DenseHeader::kAuto;
    /// Fewer fields on the first line fail there with the message `too_few`.
    std::size_t min_columns = 1;
    std::string too_few = "too few columns";
};

/// Reads the table of `r`: `on_first(names, width)` once, at the first line (names empty when
/// it is no header), then `on_row(values)` for each data line (width values, in column order),
/// with `r` at that line (for a caller's own errors: r.fail, r.line_number). Returns the width
/// (0 for a table without lines).
std::size_t read_dense_table(
    LineReader& r, const DenseTableOptions& options,
    const std::function<void(const std::vector<std::string>& names, std::size_t width)>& on_first,
    const std::function<void(std::span<const double> values)>& on_row);

}  // namespace rotor::core
