// `rotor lda ...` subcommands: train, export, topics, and the model commands of use_cli.h.
#pragma once

#include <CLI/CLI.hpp>

namespace rotor::comm {
class Communicator;
}  // namespace rotor::comm

namespace rotor::apps {

/// Registers the `lda` subcommands under `app`. The callbacks throw rotor errors. `world`: the
/// MPI world when the process was started by mpiexec (null otherwise: `lda train` then runs over
/// a world of one rank); lda::Trainer (apps/lda/trainer.h) runs on any number of ranks.
void add_lda_commands(CLI::App& app, comm::Communicator* world = nullptr);

}  // namespace rotor::apps
