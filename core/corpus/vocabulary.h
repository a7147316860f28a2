// Vocabulary: the words of a corpus, WordId i <-> line i+1 of a vocabulary file.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/base/types.h"

namespace rotor::core {

namespace detail {
/// Transparent string hash, so maps keyed by std::string accept std::string_view lookups.
struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
        return std::hash<std::string_view>{}(s);
    }
};
}  // namespace detail

/// An ordered list of distinct, non-empty words without line breaks, with lookup by word.
/// Immutable after construction except through add(); const methods are thread-safe.
class Vocabulary {
  public:
    Vocabulary() = default;
    /// Takes `words` in order. Throws InputError `<name>:<i+1>: ...` on an empty word, a word with
    /// a line break, or a duplicate (naming the first occurrence's line).
    static Vocabulary from_words(std::vector<std::string> words,
                                 const std::string& name = "<vocabulary>");

    /// Reads one word per line (a trailing '\r' is removed; plain or gzip). Throws InputError
    /// `<path>:<line>:...` on a missing or empty file, an empty line or a duplicate word.
    static Vocabulary load(const std::string& path);
    /// Writes one word per line, atomically. Throws SystemError.
    void save(const std::string& path) const;

    WordId size() const noexcept { return static_cast<WordId>(words_.size()); }
    bool empty() const noexcept { return words_.empty(); }
    /// The word with id `w` (< size()).
    const std::string& word(WordId w) const { return words_[w]; }
    std::span<const std::string> words() const noexcept { return words_; }
    /// The id of `word`, if present. O(1) expected.
    std::optional<WordId> find(std::string_view word) const;
    /// Appends a new word and returns its id. Throws InputError as from_words() does.
    WordId add(std::string word);

    friend bool operator==(const Vocabulary& a, const Vocabulary& b) {
        return a.words_ == b.words_;
    }

  private:
    std::vector<std::string> words_;
    std::unordered_map<std::string, WordId, detail::StringHash, std::equal_to<>> index_;
};

}  // namespace rotor::core
