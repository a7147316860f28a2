// UCI bag-of-words reader (the NYTimes/PubMed format of the UCI Machine Learning Repository).
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/base/checked.h"
#include "core/base/error.h"
#include "core/corpus/corpus.h"
#include "core/io/line_reader.h"
#include "core/io/parse.h"

namespace rotor::core {
namespace {

std::string status_message(ParseStatus s, const char* field) {
    switch (s) {
        case ParseStatus::kMissing:
            return std::string("missing ") + field;
        case ParseStatus::kNegative:
            return std::string(field) + " is negative";
        case ParseStatus::kNotANumber:
            return std::string(field) + " is not an unsigned integer";
        case ParseStatus::kOverflow:
            return std::string(field) + " does not fit in 64 bits";
        case ParseStatus::kOk:
            break;
    }
    return "";
}

/// Parses one field of the current line or fails with its column.
std::uint64_t field(LineReader& r, std::string_view line, std::size_t& pos, const char* name) {
    std::uint64_t v = 0;
    const ParseStatus s = parse_uint(line, pos, v);
    if (s != ParseStatus::kOk) r.fail(pos + 1, status_message(s, name));
    return v;
}

/// Fails if anything but blanks follows `pos`.
void expect_end(LineReader& r, std::string_view line, std::size_t pos, const char* what) {
    pos = skip_blanks(line, pos);
    if (pos < line.size()) r.fail(pos + 1, std::string("unexpected text after ") + what);
}

bool is_blank_line(std::string_view line) { return skip_blanks(line, 0) == line.size(); }

/// Reads one header line holding a single number.
std::uint64_t header_value(LineReader& r, const char* name) {
    std::string_view line;
    if (!r.next(line)) {
        if (r.line_number() == 0) throw InputError(r.name(), "empty file");
        throw InputError(r.name(), r.line_number() + 1, 0,
                         std::string("truncated header: missing ") + name);
    }
    std::size_t pos = 0;
    const std::uint64_t v = field(r, line, pos, name);
    expect_end(r, line, pos, name);
    return v;
}

/// One (word, line) pair of the current document, to detect duplicate words.
struct Entry {
    WordId word;
    std::uint64_t line;
};

/// Sorts the current doc's entries and fails on the first repeated word (at its later line).
void check_duplicates(LineReader& r, std::vector<Entry>& entries, std::uint64_t doc) {
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.word != b.word ? a.word < b.word : a.line < b.line;
    });
    for (std::size_t i = 1; i < entries.size(); ++i) {
        if (entries[i].word == entries[i - 1].word) {
            throw InputError(r.name(), entries[i].line, 0,
                             "duplicate entry for doc " + std::to_string(doc) + ", word " +
                                 std::to_string(entries[i].word + std::uint64_t{1}) +
                                 " (first on line " + std::to_string(entries[i - 1].line) + ")");
        }
    }
    entries.clear();
}

/// One body line of a UCI docword file, its fields' columns (1-based).
struct UciEntry {
    std::uint64_t doc = 0, word = 0, count = 0;
    std::size_t count_col = 0;
};

/// Parses and range-checks a body line: ids in [1, D] and [1, W], docs in order, 0 < count < 2^32.
UciEntry parse_entry(LineReader& r, std::string_view line, std::uint64_t num_docs,
                     std::uint64_t num_words, std::uint64_t current_doc) {
    UciEntry e;
    std::size_t pos = 0;
    const std::size_t doc_col = skip_blanks(line, 0) + 1;
    e.doc = field(r, line, pos, "doc id");
    const std::size_t word_col = skip_blanks(line, pos) + 1;
    e.word = field(r, line, pos, "word id");
    e.count_col = skip_blanks(line, pos) + 1;
    e.count = field(r, line, pos, "count");
    expect_end(r, line, pos, "the count (a line has exactly 3 fields)");
    if (e.doc == 0 || e.doc > num_docs) {
        r.fail(doc_col, "doc id " + std::to_string(e.doc) + " is out of range [1, " +
                            std::to_string(num_docs) + "]");
    }
    if (e.doc < current_doc) {
        r.fail(doc_col, "doc ids out of order: " + std::to_string(e.doc) + " after " +
                            std::to_string(current_doc));
    }
    if (e.word == 0 || e.word > num_words) {
        r.fail(word_col, "word id " + std::to_string(e.word) + " is out of range [1, " +
                             std::to_string(num_words) + "]");
    }
    if (e.count == 0) r.fail(e.count_col, "count is 0");
    if (e.count > std::numeric_limits<std::uint32_t>::max()) {
        r.fail(e.count_col, "count " + std::to_string(e.count) + " does not fit in 32 bits");
    }
    return e;
}

}  // namespace

Corpus read_uci_docword(LineReader& r, const ReadLimits& limits) {
    const std::uint64_t num_docs = header_value(r, "D (number of documents)");
    if (num_docs > limits.max_docs) {
        r.fail(1, "D = " + std::to_string(num_docs) + " exceeds the limit " +
                      std::to_string(limits.max_docs));
    }
    const std::uint64_t num_words = header_value(r, "W (vocabulary size)");
    if (num_words > limits.max_words) {
        r.fail(1, "W = " + std::to_string(num_words) + " exceeds the limit " +
                      std::to_string(limits.max_words));
    }
    const std::uint64_t nnz = header_value(r, "NNZ (number of entries)");
    const std::uint64_t nnz_line = r.line_number();
    // The empty documents the header promises are allocated whatever the body holds.
    const std::uint64_t doc_bytes = num_docs * ReadLimits::kBytesPerDoc;  // D < 2^32: no overflow
    if (doc_bytes > limits.max_bytes)
        limits.refuse_bytes(doc_bytes, r.name(), 1, 1, fmt::format("D = {} documents", num_docs));

    CorpusBuilder builder(static_cast<WordId>(num_words));
    std::vector<Entry> entries;     // of the current doc
    std::uint64_t current_doc = 0;  // UCI id of the doc being filled (0: none yet)
    std::uint64_t seen = 0;         // entries read
    std::uint64_t tokens = 0;       // 64-bit total: may exceed 2^32
    std::uint64_t blank_line = 0;   // a blank line is only allowed at the end of the file
    std::string_view line;
    while (r.next(line)) {
        if (is_blank_line(line)) {
            if (blank_line == 0) blank_line = r.line_number();
            continue;
        }
        if (blank_line != 0) throw InputError(r.name(), blank_line, 1, "blank line in the body");
        if (seen == nnz) {
            r.fail(1, "more entries than NNZ = " + std::to_string(nnz) + " (header line " +
                          std::to_string(nnz_line) + ")");
        }
        const UciEntry e = parse_entry(r, line, num_docs, num_words, current_doc);
        const std::uint64_t doc = e.doc, word = e.word, count = e.count;
        const std::size_t count_col = e.count_col;
        if (count > limits.max_tokens - tokens) {
            r.fail(count_col, "more than " + std::to_string(limits.max_tokens) + " tokens");
        }
        // Before the count is expanded: the tokens so far and these (tokens + count < 2^64).
        const SizeSource here = SizeSource::input(r.name(), r.line_number(), count_col);
        const std::uint64_t bytes = checked_add(
            doc_bytes, checked_mul(tokens + count, ReadLimits::kBytesPerToken, here, "the corpus"),
            here, "the corpus");
        if (bytes > limits.max_bytes)
            limits.refuse_bytes(bytes, r.name(), r.line_number(), count_col,
                                fmt::format("{} tokens in documents 1 to {}", tokens + count, doc));
        if (doc != current_doc) {
            check_duplicates(r, entries, current_doc);
            // Docs without lines are empty documents, so doc index = UCI id - 1.
            for (std::uint64_t d = current_doc + 1; d <= doc; ++d) builder.begin_doc(d);
            current_doc = doc;
        }
        entries.push_back({static_cast<WordId>(word - 1), r.line_number()});
        builder.add(static_cast<WordId>(word - 1), count);
        tokens += count;
        ++seen;
    }
    check_duplicates(r, entries, current_doc);
    if (seen < nnz) {
        throw InputError(r.name(), nnz_line, 1,
                         "NNZ = " + std::to_string(nnz) + " but the file has " +
                             std::to_string(seen) + " entries");
    }
    for (std::uint64_t d = current_doc + 1; d <= num_docs; ++d) builder.begin_doc(d);
    return builder.build();
}

Corpus read_uci(const std::string& docword_path, const std::string& vocab_path,
                Vocabulary* vocab_out, const ReadLimits& limits) {
    LineReader reader(docword_path);
    Corpus corpus = read_uci_docword(reader, limits);
    if (!vocab_path.empty()) {
        Vocabulary vocab = Vocabulary::load(vocab_path);
        if (vocab.size() != corpus.num_words()) {
            const std::uint64_t line =
                std::uint64_t{std::min(vocab.size(), corpus.num_words())} + 1;
            throw InputError(vocab_path, line, 0,
                             "vocabulary has " + std::to_string(vocab.size()) + " words but " +
                                 docword_path + " says W = " + std::to_string(corpus.num_words()));
        }
        if (vocab_out != nullptr) *vocab_out = std::move(vocab);
    }
    return corpus;
}

}  // namespace rotor::core
