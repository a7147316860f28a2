#include "apps/corpus/cli.h"

#include <iostream>
#include <memory>

#include "apps/corpus/corpus_app.h"

namespace rotor::apps {

void add_corpus_commands(CLI::App& app) {
    auto* corpus = app.add_subcommand("corpus", "Build and inspect corpora");
    corpus->require_subcommand(1);

    auto build = std::make_shared<CorpusBuildParams>();
    auto* b = corpus->add_subcommand(
        "build",
        "Read a text file (one document per line) or a UCI bag-of-words corpus and "
        "write a binary corpus and its vocabulary");
    b->add_option("--input", build->input, "Input: text, UCI docword[.gz] or binary corpus")
        ->required();
    b->add_option("--format", build->format, "Input format: auto, text, uci or binary")
        ->capture_default_str();
    b->add_option("--vocab", build->vocab,
                  "UCI vocab.txt (default: the sibling of the docword file); for text, a fixed "
                  "vocabulary to map tokens to");
    b->add_option("--min-df", build->min_df, "Text: drop words in fewer documents")
        ->capture_default_str();
    b->add_option("--min-len", build->min_len, "Text: shortest token, letters")
        ->capture_default_str();
    b->add_option("--max-len", build->max_len, "Text: longest token, letters")
        ->capture_default_str();
    b->add_option("--max-vocab", build->max_vocab, "Text: keep the N most frequent words (0: all)")
        ->capture_default_str();
    auto* sw = b->add_option("--stopwords", build->stopwords,
                             "Text: stop-word file, one per line (default: built-in English)");
    b->add_flag("--no-stopwords", build->no_stopwords, "Text: keep stop words")->excludes(sw);
    b->add_option("--out", build->out, "Output binary corpus (vocabulary: <out>.vocab)")
        ->required();
    b->add_option("--uci-out", build->uci_out,
                  "Also write <DIR>/docword.txt.gz and <DIR>/vocab.txt");
    b->callback([build] { run_corpus_build(*build, std::cout); });

    auto info = std::make_shared<CorpusInfoParams>();
    auto* i =
        corpus->add_subcommand("info", "Print a corpus's sizes, document lengths and top words");
    i->add_option("--corpus", info->corpus, "Binary corpus or UCI docword[.gz]")->required();
    i->add_option("--vocab", info->vocab, "Vocabulary (default: the corpus's sibling)");
    i->add_option("--top", info->top, "How many most frequent words to list")
        ->capture_default_str();
    i->callback([info] { run_corpus_info(*info, std::cout); });
}

}  // namespace rotor::apps
