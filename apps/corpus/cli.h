// `rotor corpus ...` subcommands: build, info.
#pragma once

#include <CLI/CLI.hpp>

namespace rotor::apps {

/// Registers `corpus build` and `corpus info` under `app`. The callbacks throw rotor errors.
void add_corpus_commands(CLI::App& app);

}  // namespace rotor::apps
