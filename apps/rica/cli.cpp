// `rotor rica train|transform|eval`: the flags (train runs in train_run.cpp), transform (W x
// of each observation, as scikit-learn's transform) and eval (docs/rica.md, "Command line").
#include "apps/rica/cli.h"

#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "comm/inprocess_communicator.h"
#include "core/base/blas.h"
#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/rica/model_file.h"
#include "train/common_flags.h"

namespace rotor::apps {
namespace {

using rica::Dense;
using rica::Model;

void add_train(CLI::App& rica, comm::Communicator* world) {
    auto f = std::make_shared<rica::TrainFlags>();
    rica::TrainerOptions& o = f->options;
    auto* c = rica.add_subcommand("train", "Learn W (components x dimension) by RICA");
    c->add_option("--data,-d", f->data,
                  "Observations: dense CSV or TSV, one per row (gzip allowed); every worker "
                  "reads all of it")
        ->required();
    c->add_option("--out,-o", f->out, "The model file to write (new, or --overwrite)")->required();
    c->add_flag("--overwrite", f->overwrite, "Replace an earlier model of rotor at --out");
    c->add_option("--components,-k", o.components, "Rows of W (features; > dimension allowed)")
        ->required();
    c->add_option("--lambda", o.lambda, "Sparsity: sum_i 1/2 |W'W x_i - x_i|^2 + lambda |W x_i|_1")
        ->required();
    c->add_option("--iterations", f->iterations, "At most this many steps")->capture_default_str();
    c->add_option("--tol", f->tol,
                  "Stop at an evaluation whose objective fell by less than tol x itself since "
                  "the last (0: never)")
        ->capture_default_str();
    c->add_option("--eval-every", f->eval_every, "Evaluate (and report) every N steps")
        ->capture_default_str();
    c->add_option("--solver", f->solver,
                  "prox: the paper's proximal gradient step per row block (any workers); admm: "
                  "ADMM on all of W with the true f in its W step (one worker); auto: admm with "
                  "one worker rank, else prox")
        ->capture_default_str();
    c->add_option("--rho", o.rho,
                  "admm: the initial penalty rho (doubled when the objective rises)")
        ->capture_default_str();
    c->add_option("--inner-iterations", o.inner_iterations,
                  "admm: L-BFGS iterations of each W step (no pass over the data)")
        ->capture_default_str();
    c->add_option(
         "--eta", o.eta,
         "Step scale: steps of eta/L, L the bound of docs/rica.md (1: safe for an exact prox)")
        ->capture_default_str();
    c->add_option("--admm-iterations", o.admm_iterations,
                  "ADMM iterations of each proximal step (warm-started)")
        ->capture_default_str();
    c->add_option("--block-rows", o.block_rows, "Rows of W per block (a thread's unit of work)")
        ->capture_default_str();
    c->add_option("--seed", o.seed, "Seed of the initial W")->capture_default_str();
    c->add_option("--delay", f->delay, "Bounded delay tau of the pulls of W'W: 0 .. inf")
        ->capture_default_str();
    c->add_option("--servers", f->servers,
                  "Server ranks (the first ones; the rest are workers); 0: every rank both")
        ->capture_default_str();
    c->add_option("--threads", o.threads,
                  "Threads per worker, sharing its row blocks (the model is the same for any)")
        ->capture_default_str();
    c->add_option("--timeout", o.timeout_s, "Seconds without a message before a rank gives up")
        ->capture_default_str();
    c->add_option("--metrics", f->metrics, "JSON-lines file: one record per evaluation");
    c->add_option("--checkpoint-every", f->checkpoint_every,
                  "Write <out>.checkpoint every N steps and at the end (0: never)")
        ->capture_default_str();
    c->add_option("--resume", f->resume, "Continue from this checkpoint file");
    c->add_option("--max-memory", f->max_memory,
                  "Refuse runs needing more per rank (e.g. 8G; default 90% of RAM)");
    c->add_option("--simulate-straggler", f->straggler,
                  "Benchmark aid: the worker on rank RANK sleeps (FACTOR - 1) x its compute "
                  "time each step (RANK:FACTOR)");
    train::add_switch(*c, "rebalance", o.rebalance,
                      "Several workers: move row blocks between them to follow their speeds");
    c->add_flag("--quiet,-q", f->quiet, "No progress lines");
    c->callback([f, world] {
        if (world != nullptr) {
            rica::run_train(*f, *world);
        } else {
            comm::InProcessGroup one(1);  // one process: a world of one rank
            rica::run_train(*f, one.at(0));
        }
    });
}

struct UseFlags {
    std::string model;
    std::string data;
    std::string out;
};

/// The observations of `path`, checked against the model's dimension.
Dense observations_for(const Model& m, const std::string& path) {
    Dense d = rica::read_observations(path);
    if (d.p != m.dimension)
        throw InputError(path, 1, 1,
                         fmt::format("{} columns, the model's dimension is {}", d.p, m.dimension));
    return d;
}

void run_transform(const UseFlags& f) {
    const Model m = rica::read_model(f.model);
    const Dense d = observations_for(m, f.data);
    std::vector<double> y(d.n * m.components);
    core::blas::gemm(core::blas::Op::kNone, core::blas::Op::kTranspose, d.n, m.components, d.p, 1.0,
                     d.x.data(), d.p, m.w.data(), d.p, 0.0, y.data(), m.components);
    std::string text;
    for (std::size_t i = 0; i < d.n; ++i) {
        for (std::size_t j = 0; j < m.components; ++j)
            text += fmt::format("{}{:.17g}", j == 0 ? "" : "\t", y[i * m.components + j]);
        text += '\n';
    }
    if (f.out.empty()) {
        std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
        core::write_file_atomically(f.out, text);
    }
}

void run_eval(const UseFlags& f) {
    const Model m = rica::read_model(f.model);
    const Dense d = observations_for(m, f.data);
    const rica::DirectTerms t = rica::direct_terms(m.w, m.components, d);
    fmt::print(
        "observations\t{}\nobjective\t{:.10g}\nreconstruction\t{:.10g}\nreconstruction_per_obs\t"
        "{:.10g}\nl1_per_obs\t{:.10g}\nhoyer_sparsity\t{:.10g}\n",
        d.n, t.objective(m.lambda), t.reconstruction, t.reconstruction / double(d.n),
        t.l1 / double(d.n), t.hoyer);
}

void add_use(CLI::App& rica, bool transform) {
    auto f = std::make_shared<UseFlags>();
    auto* c = transform
                  ? rica.add_subcommand("transform",
                                        "The features W x of each observation, one row each (TSV)")
                  : rica.add_subcommand("eval",
                                        "Objective, reconstruction error and sparsity of W x on "
                                        "observations");
    c->add_option("--model,-m", f->model, "A model file of `rotor rica train`")->required();
    c->add_option("--data,-d", f->data, "Observations: dense CSV or TSV (gzip allowed)")
        ->required();
    if (transform) c->add_option("--out,-o", f->out, "Write here (default: stdout)");
    c->callback([f, transform] {
        if (transform) {
            run_transform(*f);
        } else {
            run_eval(*f);
        }
    });
}

}  // namespace

void add_rica_commands(CLI::App& app, comm::Communicator* world) {
    auto* rica = app.add_subcommand(
        "rica", "Reconstruction ICA on servers and workers: train, transform, eval");
    rica->require_subcommand(1);
    add_train(*rica, world);
    add_use(*rica, true);
    add_use(*rica, false);
}

}  // namespace rotor::apps
