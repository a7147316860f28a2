// `rotor corpus build` and `rotor corpus info`: parameters and the code that runs them. The CLI
// (cli.cpp) only fills these structs.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace rotor::apps {

/// Parameters of `rotor corpus build`.
struct CorpusBuildParams {
    std::string input;            ///< --input: text, UCI docword (plain or .gz) or binary corpus
    std::string format = "auto";  ///< --format: auto | text | uci | binary
    std::string vocab;            ///< --vocab: UCI vocab.txt, or a fixed vocabulary for text
    std::uint32_t min_df = 5;     ///< --min-df (text)
    std::uint32_t min_len = 3;    ///< --min-len (text), letters
    std::uint32_t max_len = 25;   ///< --max-len (text), letters
    std::uint32_t max_vocab = 0;  ///< --max-vocab (text); 0 = no cap
    std::string stopwords;        ///< --stopwords FILE (text); empty = built-in English list
    bool no_stopwords = false;    ///< --no-stopwords (text)
    std::string out;              ///< --out: binary corpus; its vocabulary goes to <out>.vocab
    std::string uci_out;          ///< --uci-out DIR: also write DIR/docword.txt.gz, DIR/vocab.txt

    /// Throws ConfigError naming the flag.
    void validate() const;
};

/// Parameters of `rotor corpus info`.
struct CorpusInfoParams {
    std::string corpus;      ///< --corpus: binary corpus or UCI docword
    std::string vocab;       ///< --vocab (optional)
    std::uint32_t top = 20;  ///< --top: how many most frequent words to list
};

/// Reads the input, writes the outputs atomically; a one-line summary goes to `out`.
void run_corpus_build(const CorpusBuildParams& params, std::ostream& out);
/// Prints sizes, document-length statistics and the top words to `out`.
void run_corpus_info(const CorpusInfoParams& params, std::ostream& out);

/// "binary", "uci" or "text", from the content of `path` (magic bytes; a UCI file starts with
/// three lines of one unsigned integer each).
std::string detect_corpus_format(const std::string& path);

}  // namespace rotor::apps
