// `rotor mf ...` subcommands: train (here), and predict, recommend, eval, export (use_cli.h).
#pragma once

#include <CLI/CLI.hpp>

namespace rotor::comm {
class Communicator;
}  // namespace rotor::comm

namespace rotor::apps {

/// Registers the `mf` subcommands under `app`. `world`: the MPI world when the process was
/// started by mpiexec (null otherwise: `mf train` then runs over a world of one rank).
void add_mf_commands(CLI::App& app, comm::Communicator* world = nullptr);

}  // namespace rotor::apps
