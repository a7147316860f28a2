// `rotor logreg path` (docs/logreg.md, "Path and cross-validation"): newGLMNET down a log-spaced
// grid of λ from λ_max, each λ warm started from the previous solution, with K-fold
// cross-validation (--folds) choosing λ as glmnet's lambda.min and lambda.1se. One process, one
// thread. Used by cli.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "comm/communicator.h"
#include "core/logreg/examples.h"
#include "core/logreg/model_file.h"
#include "core/logreg/newton.h"
#include "core/logreg/shard.h"

namespace rotor::logreg {

/// The flags of `rotor logreg path`. Plain struct.
struct PathFlags {
    std::string data;
    std::string out;    ///< the path file (TSV), or "" for none
    std::string model;  ///< the chosen λ's model, or "" (needs --folds)
    std::uint32_t n_lambdas = 20;
    double eps = 1e-3;           ///< the smallest λ over λ_max
    std::uint32_t folds = 0;     ///< 0: no cross-validation, else >= 2
    std::string select = "1se";  ///< min or 1se: which λ --model gets
    std::uint64_t seed = 1;      ///< of the folds and of newton's coordinate orders
    double tol = kDefaultTol;
    std::uint64_t iterations = 1000;  ///< Newton iterations per λ at most
    bool cold_start = false;          ///< every λ from w = 0 (a benchmark aid)
    bool no_intercept = false;
    bool hash_features = false;
    bool overwrite = false;
    bool quiet = false;
};

/// One λ of a path fitted on some examples. Plain struct.
struct PathPoint {
    double lambda = 0;
    double objective = 0;          ///< Σ log-loss + λ‖w‖₁, the loss summed exactly
    std::uint64_t nonzeros = 0;    ///< penalised weights ≠ 0 (the intercept not counted)
    std::uint64_t iterations = 0;  ///< Newton iterations at this λ
    NewtonStop stop = NewtonStop::kConverged;
    double seconds = 0;  ///< this λ's solve
    Model model;         ///< w at this λ (lambda, iterations, objective, intercept, weights)
};

/// What fit_path calls after each λ: the point and the margins of its model on the held-out
/// examples (empty without them).
using PathVisitor = std::function<void(const PathPoint&, std::span<const double>)>;

/// Fits `train` (margins of w = 0; a Shard with or without the intercept) at every λ of `grid`
/// (decreasing) in order, each λ warm started from the last solution (NewtonSolver::set_lambda)
/// unless `cold` (then from w = 0). `heldout` (may be null; the same intercept) gets each λ's
/// margins, which `on_point` (may be empty) sees. options.lambda is ignored.
std::vector<PathPoint> fit_path(Shard& train, const std::vector<double>& grid,
                                const NewtonOptions& options, bool cold, Shard* heldout,
                                const PathVisitor& on_point = {});

/// Registers `path` under `rotor logreg`; `world` (may be null) is the MPI world when rotor runs
/// under mpiexec: a path runs in one process.
void add_path_command(CLI::App& logreg, comm::Communicator* world);

}  // namespace rotor::logreg
