// Corpus: the tokens of a document collection in doc-major CSR form, as the trainers use it.
//
// Storage is immutable and shared: either vectors the corpus owns, or a read-only memory map of
// a binary corpus file (docs/formats.md). Copying a Corpus is O(1) and shares the storage; all
// const methods are thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/base/types.h"
#include "core/corpus/vocabulary.h"
#include "core/io/read_limits.h"

namespace rotor::core {

class LineReader;

/// Tokens grouped by word (CSR by word). Built by Corpus::word_major().
struct WordMajorView {
    std::vector<TokenIndex> offsets;  ///< size W+1; word w's tokens are [offsets[w], offsets[w+1])
    std::vector<DocId> docs;          ///< size N; the doc of each token, ascending within a word
    std::vector<TokenIndex> positions;  ///< size N; each token's index into Corpus::word_ids()

    std::span<const DocId> docs_of(WordId w) const {
        return std::span<const DocId>(docs).subspan(offsets[w], offsets[w + 1] - offsets[w]);
    }
    std::span<const TokenIndex> positions_of(WordId w) const {
        return std::span<const TokenIndex>(positions).subspan(offsets[w],
                                                              offsets[w + 1] - offsets[w]);
    }
};

/// D documents over a vocabulary of W words, N tokens in all, doc-major.
class Corpus {
  public:
    /// The empty corpus: no documents, no words.
    Corpus();
    /// Takes ownership of CSR arrays. Preconditions (checked with ROTOR_ASSERT, O(N)):
    /// doc_offsets.size() == D+1 >= 1, doc_offsets[0] == 0, non-decreasing,
    /// doc_offsets[D] == word_ids.size(), every word id < num_words, doc_labels.size() == D.
    /// Readers of user files validate before calling this.
    Corpus(std::vector<TokenIndex> doc_offsets, std::vector<WordId> word_ids,
           std::vector<std::uint64_t> doc_labels, WordId num_words);
    /// A corpus over memory owned by `owner` (e.g. a memory map), which the corpus keeps alive.
    /// Same preconditions as above; they are NOT re-checked (the caller validated them).
    static Corpus view(std::shared_ptr<const void> owner, std::span<const TokenIndex> doc_offsets,
                       std::span<const WordId> word_ids, std::span<const std::uint64_t> doc_labels,
                       WordId num_words);
    /// For tests: docs[d] are the word ids of doc d; labels are 1..D.
    static Corpus from_docs(std::vector<std::vector<WordId>> docs, WordId num_words);

    DocId num_docs() const noexcept { return static_cast<DocId>(labels_.size()); }
    WordId num_words() const noexcept { return num_words_; }
    TokenIndex num_tokens() const noexcept { return words_.size(); }

    /// Size D+1; doc d's tokens are word_ids()[off[d] .. off[d+1]).
    std::span<const TokenIndex> doc_offsets() const noexcept { return offsets_; }
    /// Size N, doc-major.
    std::span<const WordId> word_ids() const noexcept { return words_; }
    /// The word ids of doc d (< num_docs()).
    std::span<const WordId> doc(DocId d) const {
        return words_.subspan(offsets_[d], offsets_[d + 1] - offsets_[d]);
    }
    /// Tokens in doc d.
    TokenIndex doc_length(DocId d) const { return offsets_[d + 1] - offsets_[d]; }
    /// Size D: the 1-based input id of each doc (UCI doc id, or line number of a text file).
    std::span<const std::uint64_t> doc_labels() const noexcept { return labels_; }

    /// Size W: tokens of each word. O(N).
    std::vector<TotalCount> word_frequencies() const;
    /// Builds the word-major CSR: O(N) time, 12 bytes per token. Not cached: call once and keep.
    WordMajorView word_major() const;

    /// True if both corpora have the same shape, tokens and labels (storage may differ).
    friend bool operator==(const Corpus& a, const Corpus& b);

  private:
    std::shared_ptr<const void> storage_;
    std::span<const TokenIndex> offsets_;
    std::span<const WordId> words_;
    std::span<const std::uint64_t> labels_;
    WordId num_words_ = 0;
};

/// Builds a Corpus document by document; the fluent helper for readers and tests:
///
///     Corpus c = CorpusBuilder(5).doc({0, 1, 1}).doc({}).doc({4}).build();
///
/// Not thread-safe.
class CorpusBuilder {
  public:
    /// W is the largest word id seen plus one.
    CorpusBuilder() = default;
    /// Fixed W: adding a word id >= num_words is a bug (ROTOR_ASSERT).
    explicit CorpusBuilder(WordId num_words) : num_words_(num_words) {}

    /// Appends a document with label = its 1-based position.
    CorpusBuilder& doc(std::initializer_list<WordId> words) {
        return doc(std::span<const WordId>(words.begin(), words.size()));
    }
    CorpusBuilder& doc(std::span<const WordId> words);
    /// Starts a new document with the given label; add() appends to it.
    CorpusBuilder& begin_doc(std::uint64_t label);
    /// Appends `count` tokens of word `w` to the current document.
    CorpusBuilder& add(WordId w, std::uint64_t count = 1);
    void reserve_tokens(std::size_t n) { words_.reserve(n); }
    DocId num_docs() const noexcept { return static_cast<DocId>(labels_.size()); }
    TokenIndex num_tokens() const noexcept { return words_.size(); }

    /// Finishes; the builder is left empty.
    Corpus build();

  private:
    std::vector<TokenIndex> offsets_{0};
    std::vector<WordId> words_;
    std::vector<std::uint64_t> labels_;
    std::optional<WordId> num_words_;
    WordId max_word_plus_one_ = 0;
};

/// Reads a UCI bag-of-words corpus: `docword.txt[.gz]` (header D, W, NNZ; lines
/// `docID wordID count`, 1-based, sorted by doc) and, if `vocab_path` is not empty, `vocab.txt`
/// (W lines) into *vocab_out (if not null). Doc d of the result is UCI doc d+1 (docs without
/// lines are empty). Throws InputError `<path>:<line>:<col>: ...` on any malformed input.
Corpus read_uci(const std::string& docword_path, const std::string& vocab_path,
                Vocabulary* vocab_out, const ReadLimits& limits = {});
/// The docword part alone, from any line source (a file or a memory buffer).
Corpus read_uci_docword(LineReader& reader, const ReadLimits& limits = {});

/// Loads a binary corpus with a read-only mmap; validates the header, sizes, checksum, offsets
/// and word ids (O(N)). Throws InputError naming the file.
Corpus load_binary_corpus(const std::string& path);
/// The same checks on bytes in memory (copied), named `name` in errors. For fuzzing and tests.
Corpus parse_binary_corpus(std::span<const std::byte> bytes, const std::string& name);
/// Writes `corpus` in the binary format, atomically. Throws SystemError.
void save_binary_corpus(const Corpus& corpus, const std::string& path);
/// The sibling file holding a binary corpus's vocabulary: `<path>.vocab`.
std::string binary_vocab_path(const std::string& corpus_path);
/// Whether `path` starts with the binary corpus's magic (false when it cannot be read: the
/// reader of the other form then names the problem).
bool is_binary_corpus(const std::string& path);

/// A corpus and, when one was found, its vocabulary.
struct LoadedCorpus {
    Corpus corpus;
    std::optional<Vocabulary> vocab;
    std::string format;  ///< "binary" or "uci"
    /// Size D when the binary corpus has a names file (core/corpus/doc_names.h), else empty.
    std::vector<std::string> doc_names;
};

/// Opens whatever `path` is: a binary corpus (by magic), else a UCI docword (plain or .gz).
/// `vocab_path` may be empty: then the binary's sibling `<path>.vocab`, or for UCI the sibling
/// whose name replaces "docword" by "vocab" (and drops ".gz"), if it exists; else no vocabulary.
/// A vocabulary whose size is not W is an InputError. A binary corpus's names file
/// (`<path>.docs`), if it exists, fills doc_names.
/// `limits` bound what a UCI file may ask for (a binary corpus is mapped, not copied).
LoadedCorpus load_corpus(const std::string& path, const std::string& vocab_path,
                         const ReadLimits& limits = {});

}  // namespace rotor::core
