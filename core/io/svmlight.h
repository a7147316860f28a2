// The LIBSVM/svmlight sparse line format, read line by line for the Lasso's and logistic
// regression's readers (docs/lasso.md and docs/logreg.md, "Input"):
//     <target> [qid:<n>] <key>:<value> <key>:<value> ... [# comment]
//
// The rules, for each line (lines end at '\n'; a '\r' before it is removed by the LineReader):
//   - a UTF-8 byte-order mark at the start of line 1 is skipped (columns still count it);
//   - everything from a '#' to the end of the line is a comment; a line left blank is skipped;
//   - fields are separated by runs of spaces and tabs;
//   - the target is a decimal or scientific number (an optional leading '+', as in "+1"),
//     finite as a double;
//   - an optional `qid:<unsigned>` right after the target is accepted and ignored;
//   - the features as SvmlightKeys says; their values finite numbers. Zero values are accepted
//     and not stored.
// Any violation throws InputError `<path>:<line>:<col>: <what>` (exit code 2); col is the 1-based
// byte column of the offending field. What a target means (a regression target, a ±1 label) is
// the caller's rule.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/line_reader.h"

namespace rotor::core {

/// How a line's feature keys are spelt, and which are valid.
enum class SvmlightKeys {
    /// `index:value`, index a 1-based unsigned integer below 2^32 - 1, strictly increasing along
    /// the line (the Lasso's columns; keys() holds the indices as written).
    kIndex,
    /// `key:value`, key an unsigned integer in [0, 2^64 - 2], strictly increasing along the line.
    kKey,
    /// `name:value` or `name` (value 1), name any text without ':'; the key is the hash of the
    /// name. Keys that collide on a line are merged (values added) and sorted.
    kHashed,
};

/// Reads a LIBSVM/svmlight file a line at a time. Not copyable; holds a reference to the reader.
class SvmlightReader {
  public:
    using HashFn = std::uint64_t (*)(std::string_view name);

    /// `hash` is required for kHashed, ignored otherwise.
    SvmlightReader(LineReader& reader, SvmlightKeys keys, HashFn hash = nullptr);
    SvmlightReader(const SvmlightReader&) = delete;
    SvmlightReader& operator=(const SvmlightReader&) = delete;

    /// Reads the next line that has a target: the target (named `target_name` in errors), then
    /// the features. False at the end of the input.
    bool next(const char* target_name);

    double target() const noexcept { return target_; }
    /// The target as written, and its 1-based column (for the caller's own error about its
    /// value); the text is valid until the next call of next().
    std::string_view target_text() const noexcept { return target_text_; }
    std::size_t target_column() const noexcept { return target_col_ + 1; }
    /// The line's features with a non-zero value, keys strictly increasing.
    std::span<const std::uint64_t> keys() const noexcept { return keys_; }
    std::span<const double> values() const noexcept { return values_; }
    /// The largest key written on the line, zero values included (0 on a line without features).
    std::uint64_t largest_key() const noexcept { return largest_; }

    const LineReader& reader() const noexcept { return reader_; }

  private:
    void read_features(std::string_view line, std::size_t pos);

    LineReader& reader_;
    SvmlightKeys kind_;
    HashFn hash_;
    double target_ = 0;
    std::string_view target_text_;
    std::size_t target_col_ = 0;
    std::uint64_t largest_ = 0;
    std::vector<std::uint64_t> keys_;
    std::vector<double> values_;
};

}  // namespace rotor::core
