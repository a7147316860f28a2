// Plain-text corpora: one document per line, tokenized into a Corpus and its Vocabulary.
//
// Tokenization (docs/data.md): tokens are maximal runs of ASCII letters, lowercased; tokens
// shorter than min_len or longer than max_len letters are dropped, then stop words, then words
// in fewer than min_df documents, then all but the max_vocab most frequent words. Documents left
// empty are dropped; each kept doc's label is its 1-based input line number. Vocabulary order:
// decreasing frequency (tokens in the corpus), ties alphabetical, so the result is deterministic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

#include "core/corpus/corpus.h"
#include "core/corpus/vocabulary.h"

namespace rotor::core {

class LineReader;

/// A set of words to drop, with string_view lookup.
using StopWords = std::unordered_set<std::string, detail::StringHash, std::equal_to<>>;

/// The built-in English list (data/stopwords-en.txt, compiled in; 301 words).
const StopWords& default_stopwords();
/// Reads one word per line (lowercased; blank lines and lines starting with '#' skipped).
/// Throws InputError if the file cannot be read.
StopWords load_stopwords(const std::string& path);

/// Parameters of read_text(). Plain struct; validate() before use.
struct TextOptions {
    std::uint32_t min_len = 3;    ///< shortest kept token, letters; >= 1
    std::uint32_t max_len = 25;   ///< longest kept token, letters; >= min_len
    std::uint32_t min_df = 5;     ///< drop words in fewer documents; >= 1
    std::uint32_t max_vocab = 0;  ///< keep at most this many (most frequent) words; 0 = no cap
    /// Words to drop; nullptr = none. Not owned; must outlive read_text().
    const StopWords* stopwords = &default_stopwords();
    /// If set, map tokens to this vocabulary (unknown words dropped) instead of building one;
    /// min_df and max_vocab are then ignored. Not owned.
    const Vocabulary* fixed_vocab = nullptr;

    /// Throws ConfigError naming the flag (--min-len, --max-len, --min-df).
    void validate() const;
};

/// Calls emit(token) for each kept token of `text` (lowercased, in a buffer valid during the
/// call); tokens outside [min_len, max_len] are skipped. No allocation.
template <class Emit>
void tokenize(std::string_view text, std::uint32_t min_len, std::uint32_t max_len, Emit&& emit) {
    char buf[256];
    const std::size_t cap = std::min<std::size_t>(max_len, sizeof buf);
    std::size_t i = 0;
    const std::size_t n = text.size();
    while (i < n) {
        while (i < n && !((text[i] | 0x20) >= 'a' && (text[i] | 0x20) <= 'z')) ++i;
        const std::size_t start = i;
        while (i < n && (text[i] | 0x20) >= 'a' && (text[i] | 0x20) <= 'z') ++i;
        const std::size_t len = i - start;
        if (len == 0 || len < min_len || len > cap) continue;
        for (std::size_t k = 0; k < len; ++k) buf[k] = static_cast<char>(text[start + k] | 0x20);
        emit(std::string_view(buf, len));
    }
}

/// Reads a text file (plain or gzip), one document per line. Sets *vocab_out (if not null) to
/// the vocabulary (or to *fixed_vocab). Throws InputError if the file cannot be read or is
/// corrupt gzip, ConfigError for bad options.
Corpus read_text(const std::string& path, const TextOptions& options, Vocabulary* vocab_out);
/// The same from any line source.
Corpus read_text(LineReader& reader, const TextOptions& options, Vocabulary* vocab_out);

}  // namespace rotor::core
