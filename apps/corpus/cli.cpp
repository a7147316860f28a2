#include "apps/corpus/cli.h"

namespace rotor::apps {

void add_corpus_commands(CLI::App& app) {
    auto* corpus = app.add_subcommand("corpus", "Build and inspect corpora");
    corpus->require_subcommand(1);
}

}  // namespace rotor::apps
