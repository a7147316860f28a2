// The "did you mean" suggestion for a mistyped flag or subcommand (CLI11 has none). Counted
// nouns are rotor::plural (core/base/plural.h).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace CLI {
class App;
}  // namespace CLI

namespace rotor::train {

/// Edit distance between two strings: insertions, deletions, substitutions and transpositions
/// of adjacent characters ("otu" -> "out" is 1), each costing 1 (optimal string alignment).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `typed` (a flag as the user wrote it, e.g. "--topcs" or
/// "--topcs=5"; the part after '=' is ignored), if it is close enough to be a likely typo: at
/// most 2 edits, and at most a third of its length; or a candidate that `typed` is a unique
/// prefix of. "" when none is.
std::string suggest(std::string_view typed, std::span<const std::string> candidates);

}  // namespace rotor::train

namespace rotor::train {

/// After a parse error of `app`: "did you mean --topics?" for the first argument left over in
/// the deepest subcommand given that looks like a typo of one of its flags (hidden aliases
/// included, shown by their name) or, for a word, of its subcommands; "" when none does.
std::string typo_hint(const CLI::App& app);

}  // namespace rotor::train
