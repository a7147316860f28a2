// Reading one rank's part of a training file (docs/logreg.md, "Sharded input"): a plain
// LIBSVM/svmlight file is split into byte ranges at line boundaries, each reader parsing only its
// range; the binary form (examples_binary.h) into contiguous row ranges. Errors still name
// path:line:col: a range reader numbers its lines from the count of the earlier ranges' lines,
// which the caller gathers (count_text) before reading. gzip cannot be split: every part reads
// the whole stream and keeps a contiguous share of the examples.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/logreg/examples.h"

namespace rotor::logreg {

/// How a training file is stored, by its first bytes.
enum class ExamplesForm { kText, kGzip, kBinary };

/// The form of `path`. InputError if it cannot be opened.
ExamplesForm examples_form(const std::string& path);

/// A byte range [begin, end) of a plain text file.
struct TextRange {
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
};

/// Part `part` of `parts` of a plain file of `size` bytes whose bytes are `data`: the lines whose
/// first byte lies in [size·part/parts, size·(part+1)/parts). The ranges of all parts tile the
/// file; every range but the last ends just after a '\n'.
TextRange text_range(std::string_view data, std::size_t part, std::size_t parts);

/// What a cheap pass over a range finds, before any parsing.
struct TextCount {
    std::uint64_t newlines = 0;  ///< '\n' bytes: the lines the range holds (for numbering)
    std::uint64_t lines = 0;     ///< lines with a label field (an upper bound of the examples)
    std::uint64_t fields = 0;    ///< fields after the label (an upper bound of the nonzeros)
};

/// Counts the lines and fields of `range` of `data` (comments included in the bound).
TextCount count_text(std::string_view data, TextRange range);

/// Parses `range` of `data` (the bytes of file `path`), numbering its first line `first_line`.
Examples read_examples_range(const std::string& path, std::string_view data, TextRange range,
                             std::uint64_t first_line, const ReadExamplesOptions& options = {});

/// Examples [n·part/parts, n·(part+1)/parts) of `all`.
Examples share_of(const Examples& all, std::size_t part, std::size_t parts);

}  // namespace rotor::logreg
