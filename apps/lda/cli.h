// `rotor lda ...` subcommands: train, export (and later topics, infer, eval).
#pragma once

#include <CLI/CLI.hpp>

namespace rotor::apps {

/// Registers the `lda` subcommands under `app`. The callbacks throw rotor errors.
void add_lda_commands(CLI::App& app);

}  // namespace rotor::apps
