#include "core/corpus/text_corpus.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "core/base/error.h"
#include "core/io/line_reader.h"

namespace rotor::core {
namespace detail {
extern const char kStopwordsEn[];
}  // namespace detail

namespace {

StopWords parse_stopwords(std::string_view text) {
    StopWords words;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
            line.remove_suffix(1);
        }
        while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) {
            line.remove_prefix(1);
        }
        if (line.empty() || line.front() == '#') continue;
        std::string w(line);
        for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        words.insert(std::move(w));
    }
    return words;
}

/// Per distinct token during the first pass.
struct TermStats {
    std::uint64_t freq = 0;      ///< tokens
    std::uint32_t df = 0;        ///< documents containing it
    std::uint64_t last_doc = 0;  ///< 1 + index of the last doc counted in df
};

constexpr std::uint32_t kDropped = std::numeric_limits<std::uint32_t>::max();

/// What pass 1 keeps: every token as a temporary id, doc-major, one doc per non-empty line;
/// without a fixed vocabulary also each temporary id's text and counts.
struct TokenScan {
    std::vector<std::string> terms;         // per temporary id (empty with a fixed vocabulary)
    std::vector<TermStats> stats;           // per temporary id (empty with a fixed vocabulary)
    std::vector<std::uint32_t> tokens;      // temporary ids, doc-major
    std::vector<std::uint64_t> offsets{0};  // into tokens, per non-empty line
    std::vector<std::uint64_t> lines;       // 1-based line number of each such doc
};

/// Pass 1: interns every token (stop words included: checking each distinct word once is
/// cheaper than checking every token), counts frequency and document frequency. With a fixed
/// vocabulary the temporary ids are its ids and unknown tokens are skipped. Feed a document's
/// text with add() (in as many pieces as it comes), then end_doc(label).
class TokenScanner {
  public:
    explicit TokenScanner(const TextOptions& options) : options_(options) {}

    /// Tokenizes `text` into the current document; `reader` names the position on overflow.
    void add(std::string_view text, LineReader& reader) {
        const std::uint64_t doc = scan_.lines.size() + 1;
        tokenize(
            text, options_.min_len, options_.max_len,
            [&](std::string_view tok) { scan_.tokens.push_back(intern(tok, doc, reader)); },
            options_.pattern);
    }
    /// Closes the current document: kept (with `label`) if it has tokens.
    void end_doc(std::uint64_t label) {
        if (scan_.tokens.size() == scan_.offsets.back()) return;
        scan_.offsets.push_back(scan_.tokens.size());
        scan_.lines.push_back(label);
    }
    TokenScan take() && { return std::move(scan_); }

  private:
    static constexpr std::uint32_t kUnknown = kDropped;

    std::uint32_t intern(std::string_view tok, std::uint64_t doc, LineReader& reader) {
        if (options_.fixed_vocab != nullptr) {
            const auto w = options_.fixed_vocab->find(tok);
            return w ? *w : kUnknown;
        }
        auto it = ids_.find(tok);
        if (it == ids_.end()) {
            if (scan_.terms.size() >= kDropped) reader.fail(0, "more than 2^32-1 distinct words");
            it = ids_.emplace(std::string(tok), static_cast<std::uint32_t>(scan_.terms.size()))
                     .first;
            scan_.terms.emplace_back(tok);
            scan_.stats.emplace_back();
        }
        TermStats& s = scan_.stats[it->second];
        ++s.freq;
        if (s.last_doc != doc) {
            s.last_doc = doc;
            ++s.df;
        }
        return it->second;
    }

    const TextOptions& options_;
    TokenScan scan_;
    std::unordered_map<std::string, std::uint32_t, detail::StringHash, std::equal_to<>> ids_;
};

/// Pass 1 over a file whose lines are the documents.
TokenScan scan_tokens(LineReader& reader, const TextOptions& options) {
    TokenScanner scanner(options);
    std::string_view line;
    while (reader.next(line)) {
        scanner.add(line, reader);
        scanner.end_doc(reader.line_number());
    }
    return std::move(scanner).take();
}

/// Chooses the vocabulary (the fixed one, or the scanned words that pass min_df, the stop
/// words and max_vocab, by decreasing frequency then text) and sets remap[temporary id] to the
/// final id or kDropped. Moves the kept texts out of scan.terms.
Vocabulary choose_vocabulary(TokenScan& scan, const TextOptions& options, const std::string& source,
                             std::vector<std::uint32_t>& remap) {
    if (options.fixed_vocab != nullptr) {
        Vocabulary vocab = *options.fixed_vocab;
        remap.resize(vocab.size());
        std::iota(remap.begin(), remap.end(), 0u);
        return vocab;
    }
    const double max_docs = options.max_df * static_cast<double>(scan.lines.size());
    std::vector<std::string>& terms = scan.terms;
    const std::vector<TermStats>& stats = scan.stats;
    std::vector<std::uint32_t> kept;
    for (std::uint32_t t = 0; t < terms.size(); ++t) {
        if (stats[t].df < options.min_df) continue;
        if (static_cast<double>(stats[t].df) > max_docs) continue;
        if (options.stopwords != nullptr && options.stopwords->contains(terms[t])) continue;
        kept.push_back(t);
    }
    std::sort(kept.begin(), kept.end(), [&](std::uint32_t a, std::uint32_t b) {
        if (stats[a].freq != stats[b].freq) return stats[a].freq > stats[b].freq;
        return terms[a] < terms[b];
    });
    if (options.max_vocab > 0 && kept.size() > options.max_vocab) kept.resize(options.max_vocab);
    remap.assign(terms.size(), kDropped);
    std::vector<std::string> words;
    words.reserve(kept.size());
    for (std::uint32_t t : kept) {
        remap[t] = static_cast<std::uint32_t>(words.size());
        words.push_back(std::move(terms[t]));
    }
    return Vocabulary::from_words(std::move(words), source);
}

/// Pass 2 (in memory): rewrites the tokens through `remap` (in place in scan.tokens), dropping
/// removed words and the docs left empty.
Corpus rewrite_tokens(TokenScan& scan, const std::vector<std::uint32_t>& remap, WordId vocab_size) {
    std::vector<std::uint32_t>& tokens = scan.tokens;
    const std::vector<std::uint64_t>& offsets = scan.offsets;
    CorpusBuilder builder(vocab_size);
    std::size_t out = 0;
    for (std::size_t d = 0; d + 1 < offsets.size(); ++d) {
        const std::size_t begin = out;
        for (std::uint64_t i = offsets[d]; i < offsets[d + 1]; ++i) {
            const std::uint32_t w = tokens[i] == kDropped ? kDropped : remap[tokens[i]];
            if (w != kDropped) tokens[out++] = w;
        }
        if (out == begin) continue;
        builder.begin_doc(scan.lines[d]);
        for (std::size_t i = begin; i < out; ++i) builder.add(tokens[i]);
    }
    return builder.build();
}

/// Passes 2 and 3 of every text read: the vocabulary, the rewritten corpus and the report.
Corpus finish_text(TokenScan& scan, const TextOptions& options, const std::string& source,
                   Vocabulary* vocab_out, TextReport* report) {
    std::vector<std::uint32_t> remap;
    Vocabulary vocab = choose_vocabulary(scan, options, source, remap);
    const std::uint64_t tokens_read = scan.tokens.size();
    Corpus corpus = rewrite_tokens(scan, remap, vocab.size());
    if (report != nullptr) {
        report->docs_with_tokens = scan.lines.size();
        report->docs_emptied = scan.lines.size() - corpus.num_docs();
        report->tokens_read = tokens_read;
    }
    if (vocab_out != nullptr) *vocab_out = std::move(vocab);
    return corpus;
}

}  // namespace

const StopWords& default_stopwords() {
    static const StopWords words = parse_stopwords(detail::kStopwordsEn);
    return words;
}

StopWords load_stopwords(const std::string& path) {
    LineReader reader(path);
    std::string text;
    std::string_view line;
    while (reader.next(line)) {
        text.append(line);
        text.push_back('\n');
    }
    return parse_stopwords(text);
}

void TextOptions::validate() const {
    if (min_len < 1) throw ConfigError("--min-len", "must be at least 1");
    if (max_len < min_len) throw ConfigError("--max-len", "must be at least --min-len");
    if (max_len > 255) throw ConfigError("--max-len", "must be at most 255");
    if (min_df < 1) throw ConfigError("--min-df", "must be at least 1");
    if (!(max_df > 0 && max_df <= 1))
        throw ConfigError("--max-df", "must be a share of the documents, in (0, 1]");
}

TokenPattern parse_token_pattern(std::string_view name) {
    for (const TokenPattern p :
         {TokenPattern::kLetters, TokenPattern::kAlnum, TokenPattern::kUnicode})
        if (name == token_pattern_name(p)) return p;
    throw ConfigError("--token-pattern",
                      "must be letters, alnum or unicode, not '" + std::string(name) + "'");
}

const char* token_pattern_name(TokenPattern pattern) {
    switch (pattern) {
        case TokenPattern::kLetters:
            return "letters";
        case TokenPattern::kAlnum:
            return "alnum";
        case TokenPattern::kUnicode:
            return "unicode";
    }
    return "letters";
}

Corpus read_text(const std::string& path, const TextOptions& options, Vocabulary* vocab_out) {
    return read_text(path, options, vocab_out, nullptr);
}

Corpus read_text(const std::string& path, const TextOptions& options, Vocabulary* vocab_out,
                 TextReport* report) {
    options.validate();
    LineReader reader(path);
    TokenScan scan = scan_tokens(reader, options);
    return finish_text(scan, options, reader.name(), vocab_out, report);
}

Corpus read_text(LineReader& reader, const TextOptions& options, Vocabulary* vocab_out) {
    options.validate();
    TokenScan scan = scan_tokens(reader, options);
    return finish_text(scan, options, reader.name(), vocab_out, nullptr);
}

Corpus read_text_files(const std::vector<std::string>& paths, const TextOptions& options,
                       Vocabulary* vocab_out, TextReport* report) {
    options.validate();
    TokenScanner scanner(options);
    for (std::size_t i = 0; i < paths.size(); ++i) {
        LineReader reader(paths[i]);
        std::string_view line;
        while (reader.next(line)) scanner.add(line, reader);
        scanner.end_doc(i + 1);
    }
    TokenScan scan = std::move(scanner).take();
    return finish_text(scan, options, "<text files>", vocab_out, report);
}

std::vector<std::string> list_text_files(const std::string& dir) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const bool txt = name.ends_with(".txt") || name.ends_with(".txt.gz");
        if (txt && it->is_regular_file(ec)) files.push_back(it->path().string());
    }
    if (ec) throw InputError(dir, "cannot list the directory: " + ec.message());
    if (files.empty()) throw InputError(dir, "has no .txt files (one document per file)");
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace rotor::core
