// `rotor lda ...` subcommands: train, export (and later topics, infer, eval).
#pragma once

#include <CLI/CLI.hpp>

namespace rotor::comm {
class Communicator;
}  // namespace rotor::comm

namespace rotor::apps {

/// Registers the `lda` subcommands under `app`. The callbacks throw rotor errors. `world`: the
/// MPI world when the process was started by mpiexec (null otherwise); with more than one rank
/// `lda train` runs the distributed trainer (apps/lda/trainer.h).
void add_lda_commands(CLI::App& app, comm::Communicator* world = nullptr);

}  // namespace rotor::apps
