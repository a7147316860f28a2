// `rotor rica train|transform|eval` (docs/rica.md, "Command line"): train runs the trainer of
// apps/rica/trainer.h in one process or under mpiexec; transform writes W x of each observation;
// eval reports the objective, the reconstruction error and the sparsity of W x.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/rica/trainer.h"

namespace rotor::comm {
class Communicator;
}  // namespace rotor::comm

namespace rotor::rica {

/// The flags of `rotor rica train`. Plain struct.
struct TrainFlags {
    std::string data;
    std::string out;
    bool overwrite = false;
    std::string delay = "0";
    int servers = 0;
    std::uint64_t iterations = 1000;  ///< at most this many steps in all
    std::uint64_t eval_every = 10;
    double tol = 1e-4;  ///< stop when an evaluation's objective fell by less than tol × itself
    std::string metrics;
    std::uint64_t checkpoint_every = 0;
    std::string resume;
    std::string max_memory;
    std::string straggler;
    std::string solver = "auto";  ///< auto (admm with one worker, else prox), prox, admm
    bool quiet = false;
    TrainerOptions options;
};

/// Collective over `world`: trains and writes the model (rank 0). Throws rotor errors (agreed).
void run_train(TrainFlags& f, comm::Communicator& world);

}  // namespace rotor::rica

namespace rotor::apps {

/// Registers `rica` and its subcommands under `app`. `world`: the MPI world under mpiexec (null
/// otherwise: train runs over a world of one).
void add_rica_commands(CLI::App& app, comm::Communicator* world = nullptr);

}  // namespace rotor::apps
