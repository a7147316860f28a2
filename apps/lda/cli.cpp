#include "apps/lda/cli.h"

namespace rotor::apps {

void add_lda_commands(CLI::App& app) {
    auto* lda = app.add_subcommand("lda", "Latent Dirichlet allocation by collapsed Gibbs sampling");
    lda->require_subcommand(1);
}

}  // namespace rotor::apps
