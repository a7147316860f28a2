// Plain-text corpora: one document per line, tokenized into a Corpus and its Vocabulary.
//
// Tokenization (docs/data.md): tokens are maximal runs of the pattern's characters (by default
// ASCII letters), ASCII lowercased; tokens shorter than min_len or longer than max_len
// characters (bytes) are dropped, then stop words, then words in fewer than min_df documents or
// in more than max_df of them (a share), then all but the max_vocab most frequent words.
// Documents left empty are dropped; each kept doc's label is its 1-based input line number (or
// file number, for read_text_files). Vocabulary order: decreasing frequency (tokens in the
// corpus), ties alphabetical, so the result is deterministic.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

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

/// Which characters make a token (--token-pattern).
enum class TokenPattern {
    kLetters,  ///< "letters": ASCII letters, [A-Za-z]+ (the default)
    kAlnum,    ///< "alnum": ASCII letters and digits, [A-Za-z0-9]+
    kUnicode,  ///< "unicode": ASCII letters and digits and every non-ASCII (UTF-8) byte, so
               ///< "café" or "Straße" is one token
};

/// The pattern named `name` ("letters", "alnum", "unicode"); ConfigError("--token-pattern")
/// for another name.
TokenPattern parse_token_pattern(std::string_view name);
/// The name parse_token_pattern() takes.
const char* token_pattern_name(TokenPattern pattern);

/// Whether byte `c` belongs to a token under `pattern`.
constexpr bool is_token_byte(unsigned char c, TokenPattern pattern) {
    const bool letter = (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
    if (pattern == TokenPattern::kLetters) return letter;
    const bool digit = c >= '0' && c <= '9';
    if (pattern == TokenPattern::kAlnum) return letter || digit;
    return letter || digit || c >= 0x80;
}

/// Parameters of read_text(). Plain struct; validate() before use.
struct TextOptions {
    std::uint32_t min_len = 3;   ///< shortest kept token, characters (bytes); >= 1
    std::uint32_t max_len = 25;  ///< longest kept token, characters (bytes); >= min_len
    std::uint32_t min_df = 5;    ///< drop words in fewer documents; >= 1
    /// Drop words in more than this share of the documents (gensim's no_above); in (0, 1].
    double max_df = 1.0;
    std::uint32_t max_vocab = 0;  ///< keep at most this many (most frequent) words; 0 = no cap
    TokenPattern pattern = TokenPattern::kLetters;  ///< what a token is
    /// Words to drop; nullptr = none. Not owned; must outlive read_text().
    const StopWords* stopwords = &default_stopwords();
    /// If set, map tokens to this vocabulary (unknown words dropped) instead of building one;
    /// min_df and max_vocab are then ignored. Not owned.
    const Vocabulary* fixed_vocab = nullptr;

    /// Throws ConfigError naming the flag (--min-len, --max-len, --min-df, --max-df).
    void validate() const;
};

/// Calls emit(token) for each kept token of `text` (maximal runs of the pattern's bytes, ASCII
/// letters lowercased, in a buffer valid during the call); tokens outside [min_len, max_len]
/// bytes are skipped. No allocation.
template <class Emit>
void tokenize(std::string_view text, std::uint32_t min_len, std::uint32_t max_len, Emit&& emit,
              TokenPattern pattern = TokenPattern::kLetters) {
    char buf[256];
    const std::size_t cap = std::min<std::size_t>(max_len, sizeof buf);
    std::size_t i = 0;
    const std::size_t n = text.size();
    const auto in_token = [&](std::size_t at) {
        return is_token_byte(static_cast<unsigned char>(text[at]), pattern);
    };
    while (i < n) {
        while (i < n && !in_token(i)) ++i;
        const std::size_t start = i;
        while (i < n && in_token(i)) ++i;
        const std::size_t len = i - start;
        if (len == 0 || len < min_len || len > cap) continue;
        for (std::size_t k = 0; k < len; ++k) {
            const char c = text[start + k];
            buf[k] = c >= 'A' && c <= 'Z' ? static_cast<char>(c | 0x20) : c;
        }
        emit(std::string_view(buf, len));
    }
}

/// Reads a text file (plain or gzip), one document per line. Sets *vocab_out (if not null) to
/// the vocabulary (or to *fixed_vocab). Throws InputError if the file cannot be read or is
/// corrupt gzip, ConfigError for bad options.
Corpus read_text(const std::string& path, const TextOptions& options, Vocabulary* vocab_out);
/// The same from any line source.
Corpus read_text(LineReader& reader, const TextOptions& options, Vocabulary* vocab_out);

/// What a text read saw besides the corpus: documents with at least one token before pruning,
/// and how many of them pruning (stop words, document frequency, vocabulary) left empty.
struct TextReport {
    std::uint64_t docs_with_tokens = 0;
    std::uint64_t docs_emptied = 0;
    std::uint64_t tokens_read = 0;  ///< tokens before pruning (with a fixed vocabulary: all)
};

/// Reads a text file (one document per line) as read_text does, and fills *report (if not null).
Corpus read_text(const std::string& path, const TextOptions& options, Vocabulary* vocab_out,
                 TextReport* report);

/// Reads each of `paths` (plain or gzip) as ONE document, in the order given; doc labels are the
/// 1-based positions in `paths`. Otherwise as read_text(). Throws InputError naming the file.
Corpus read_text_files(const std::vector<std::string>& paths, const TextOptions& options,
                       Vocabulary* vocab_out, TextReport* report = nullptr);

/// The `.txt` files (also `.txt.gz`) directly in `dir`, sorted by name (byte order). Throws
/// InputError if `dir` cannot be listed or has none.
std::vector<std::string> list_text_files(const std::string& dir);

}  // namespace rotor::core
