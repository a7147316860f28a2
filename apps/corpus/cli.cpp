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
        "Read a text file (one document per line), a folder of .txt files (one document per "
        "file) or a UCI bag-of-words corpus and write a binary corpus and its vocabulary");
    b->add_option("--corpus", build->input,
                  "Input: text file, folder of .txt files, UCI docword[.gz] or binary corpus");
    // The old name, kept for scripts; not shown in --help.
    b->add_option("--input", build->input)->group("");
    b->add_option("--format", build->format, "Input format: auto, text, uci or binary")
        ->capture_default_str();
    b->add_option("--vocab", build->vocab,
                  "UCI vocab.txt (default: the sibling of the docword file); for text, a fixed "
                  "vocabulary to map tokens to");
    b->add_option("--min-df", build->min_df, "Text: drop words in fewer documents")
        ->capture_default_str();
    b->add_option("--min-len", build->min_len, "Text: shortest token, characters (bytes)")
        ->capture_default_str();
    b->add_option("--max-len", build->max_len, "Text: longest token, characters (bytes)")
        ->capture_default_str();
    b->add_option("--max-df", build->max_df,
                  "Text: drop words in more than this share of the documents (gensim's no_above)")
        ->capture_default_str();
    b->add_option("--max-vocab", build->max_vocab, "Text: keep the N most frequent words (0: all)")
        ->capture_default_str();
    b->add_option("--token-pattern", build->token_pattern,
                  "Text: what a token is: letters ([A-Za-z]+), alnum ([A-Za-z0-9]+) or unicode "
                  "(letters, digits and any non-ASCII character)")
        ->capture_default_str();
    auto* sw = b->add_option("--stopwords", build->stopwords,
                             "Text: stop-word file, one per line (default: built-in English)");
    auto* sw_add = b->add_option("--stopwords-add", build->stopwords_add,
                                 "Text: more stop words (a file, one per line), added to the "
                                 "default list or to --stopwords");
    b->add_flag("--no-stopwords", build->no_stopwords, "Text: keep stop words")
        ->excludes(sw)
        ->excludes(sw_add);
    b->add_option("--out", build->out, "Output binary corpus (vocabulary: <out>.vocab)")
        ->required();
    b->add_option("--uci-out", build->uci_out,
                  "Also write <DIR>/docword.txt.gz and <DIR>/vocab.txt");
    b->callback([build] { run_corpus_build(*build, std::cout, std::cerr); });

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
