// `rotor lasso ...` subcommands: train and path (cli.cpp), predict and eval (use_cli.cpp).
#pragma once

#include <CLI/CLI.hpp>

namespace rotor::comm {
class Communicator;
}  // namespace rotor::comm

namespace rotor::apps {

/// Registers `lasso` and its subcommands under `app`. The callbacks throw rotor errors. `world`:
/// the MPI world when started by mpiexec (null otherwise: train and path then run over a world
/// of one rank).
void add_lasso_commands(CLI::App& app, comm::Communicator* world = nullptr);

/// `lasso predict`, `lasso eval` and `lasso build` under the `lasso` subcommand (single
/// process).
void add_lasso_use_commands(CLI::App& lasso);

}  // namespace rotor::apps
