// Reading a dense regression data set from CSV or TSV (docs/lasso.md, "Input"): one sample per
// line, every column a number, one of them the target. Plain or gzip (by magic bytes). The lines
// are core/io/dense_table.h's:
//   - a UTF-8 byte-order mark at the start of line 1 is skipped (columns still count it);
//   - blank lines and lines whose first non-blank byte is '#' are skipped, anywhere;
//   - the first other line fixes the separator: ',' if it holds a comma, else a tab; a line with
//     neither is one column, an error (a target and at least one feature are needed);
//   - that line is a header (column names, double quotes around a name removed) when
//     ReadDenseOptions::header says so (kAuto: when any of its fields is not a number);
//   - every line has as many fields as the first; fields are trimmed of spaces (and tabs in
//     CSV); a data field is a finite number (strtod syntax, an optional leading '+', no hex); an
//     empty field (a missing value) is an error; quoting is not supported in data lines.
// Any violation throws InputError `<path>:<line>:<col>: <what>` (exit code 2). A target that
// names no column throws ConfigError with key "target".
#pragma once

#include <string>

#include "core/io/dense_table.h"
#include "core/io/line_reader.h"
#include "core/io/read_limits.h"
#include "core/lasso/design.h"

namespace rotor::lasso {

/// How read_dense() treats the first line that is neither blank nor a comment.
using DenseHeader = core::DenseHeader;

/// Options of read_dense(). A plain struct.
struct ReadDenseOptions {
    /// The target column: empty for the last one; all digits for a 1-based column number;
    /// otherwise a header name.
    std::string target;
    DenseHeader header = DenseHeader::kAuto;
    /// limits.max_bytes bounds the samples' memory while they are read (RawData::reading_bytes),
    /// checked after each line: a file that would take more is refused at the line that takes
    /// it over (core::ReadLimits::refuse_bytes), before the rest is read.
    core::ReadLimits limits;
};

/// Reads `path` (plain or gzip). Returns dense RawData: every entry stored, features in file
/// order without the target, names from the header (if any).
RawData read_dense(const std::string& path, const ReadDenseOptions& options = {});

/// The same from an open reader (tests, fuzzing).
RawData read_dense(core::LineReader& reader, const ReadDenseOptions& options = {});

}  // namespace rotor::lasso
