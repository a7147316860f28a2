// `rotor corpus build` and `rotor corpus info`: parameters and the code that runs them. The CLI
// (cli.cpp) only fills these structs.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace rotor::apps {

/// Parameters of `rotor corpus build`.
struct CorpusBuildParams {
    /// --corpus (old name --input): a text file, a folder of .txt files (one document each),
    /// a UCI docword (plain or .gz) or a binary corpus
    std::string input;
    std::string format = "auto";  ///< --format: auto | text | uci | binary
    std::string vocab;            ///< --vocab: UCI vocab.txt, or a fixed vocabulary for text
    std::uint32_t min_df = 5;     ///< --min-df (text)
    std::uint32_t min_len = 3;    ///< --min-len (text), letters
    std::uint32_t max_len = 25;   ///< --max-len (text), letters
    double max_df = 1.0;          ///< --max-df (text): drop words in more than this share of docs
    std::uint32_t max_vocab = 0;  ///< --max-vocab (text); 0 = no cap
    std::string token_pattern = "letters";  ///< --token-pattern (text): letters | alnum | unicode
    std::string stopwords;  ///< --stopwords FILE (text); empty = built-in English list
    std::vector<std::string> stopwords_add;  ///< --stopwords-add FILE...: more stop words
    bool no_stopwords = false;               ///< --no-stopwords (text)
    std::string out;      ///< --out: binary corpus; its vocabulary goes to <out>.vocab
    std::string uci_out;  ///< --uci-out DIR: also write DIR/docword.txt.gz, DIR/vocab.txt

    /// Throws ConfigError naming the flag.
    void validate() const;
};

/// Parameters of `rotor corpus info`.
struct CorpusInfoParams {
    std::string corpus;      ///< --corpus: binary corpus or UCI docword
    std::string vocab;       ///< --vocab (optional)
    std::uint32_t top = 20;  ///< --top: how many most frequent words to list
};

/// Reads the input, writes the outputs atomically; a one-line summary goes to `out`, a warning
/// about documents that pruning left empty to `err`. A folder of text files also writes the
/// documents' names (their file names) to `<out>.docs`.
void run_corpus_build(const CorpusBuildParams& params, std::ostream& out, std::ostream& err);
/// Prints sizes, document-length statistics and the top words to `out`.
void run_corpus_info(const CorpusInfoParams& params, std::ostream& out);

/// "files" for a directory (of .txt files); else "binary", "uci" or "text", from the content of
/// `path` (magic bytes; a UCI file starts with three lines of one unsigned integer each).
std::string detect_corpus_format(const std::string& path);

}  // namespace rotor::apps
