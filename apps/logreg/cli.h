// `rotor logreg ...` subcommands: train (the delayed block proximal gradient on servers and
// workers, in one process or under mpiexec), predict and eval (cli.cpp).
#pragma once

#include <CLI/CLI.hpp>

namespace rotor::comm {
class Communicator;
}  // namespace rotor::comm

namespace rotor::apps {

/// Registers `logreg` and its subcommands under `app`. The callbacks throw rotor errors. `world`:
/// the MPI world when started by mpiexec (null otherwise: train then runs over a world of one).
void add_logreg_commands(CLI::App& app, comm::Communicator* world = nullptr);

}  // namespace rotor::apps
