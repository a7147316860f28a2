// Evaluations of `rotor logreg train` between runs of the delayed trainer (docs/logreg.md,
// "Metrics file"): a collective that sums the loss over the workers exactly, gathers w from the
// servers and the workers' full gradients on rank 0, and there computes the objective, the KKT
// violation and, with a test set, its logloss, AUC and accuracy; and the model to write.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "apps/logreg/trainer.h"
#include "comm/communicator.h"
#include "core/logreg/examples.h"
#include "core/logreg/metrics.h"
#include "core/logreg/model_file.h"

namespace rotor::logreg {

/// What an evaluation finds (meaningful on rank 0). Plain struct.
struct Evaluation {
    double objective = 0;        ///< Σ log-loss + λ‖w‖₁, exact sums: the same for any split
    double loss = 0;             ///< Σ log-loss
    double kkt_violation = 0;    ///< of the full gradient (core/logreg/objective.h)
    double subgradient = 0;      ///< the min-norm subgradient's 1-norm (subgradient_norm)
    std::uint64_t nonzeros = 0;  ///< nonzero weights, the intercept included
    /// With the full gradient: the keys whose w_k = 0 violates the optimality conditions
    /// (|g_k| > λ_k), increasing: what the KKT filter's screen must not skip (KktScreen::reopen).
    std::vector<std::uint64_t> violators;
    std::optional<Metrics> test;
    Model model;  ///< w gathered (keys increasing; lambda and objective set)
};

/// Collective over `world`: `part` is this rank's examples (null on pure servers) with margins
/// current for `r`'s w (every pull applied); `test` (rank 0, may be null) the test examples;
/// `kkt`: also gather the full gradient (one pass over the data) for the KKT violation.
Evaluation evaluate(comm::Communicator& world, const Shard* part, const DelayedResult& r,
                    const BlockProxOptions& options, const Examples* test, bool kkt);

/// Collective over `world`: the min-norm subgradient's 1-norm of F at w = 0 (the stopping rule's
/// reference, core/logreg/objective.h subgradient_converged), from every worker's `part` (null
/// on pure servers; its margins are not read). The same value on every rank, for any split.
double subgradient_at_zero(comm::Communicator& world, const Shard* part, double lambda);

}  // namespace rotor::logreg
