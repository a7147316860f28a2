// `rotor logreg train|predict|eval|build`: the flags (train runs in train_run.cpp: each worker
// reads only its part of the data; the servers own equal key ranges; rank 0 gathers the weights
// and writes the model), predict and eval, and the binary form's builder (docs/logreg.md,
// "Command line").
#include "apps/logreg/cli.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/logreg/input.h"
#include "apps/logreg/newton_run.h"
#include "apps/logreg/path_run.h"
#include "apps/logreg/train_run.h"
#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/logreg/examples_binary.h"
#include "core/logreg/examples_input.h"
#include "core/logreg/metrics.h"
#include "core/logreg/model_file.h"
#include "train/common_flags.h"

namespace rotor::apps {
namespace {

using logreg::Examples;
using logreg::Model;

/// The test metrics of `m` on a file.
logreg::Metrics metrics_on(const Model& m, const std::string& path) {
    const Examples ex = logreg::read_whole(path, m.hashed, "the model");
    std::vector<double> margins(ex.size());
    for (std::size_t i = 0; i < ex.size(); ++i)
        margins[i] = m.margin(ex.keys_of(i), ex.values_of(i));
    return logreg::compute_metrics(margins, ex.labels);
}

/// The flags every `rotor <model> train` has (train::add_common_train_flags), as logreg means
/// them: --out keeps its -o, --iterations and --eval-every default by solver, --threads says
/// what it does for each solver and defaults to 1 (docs/logreg.md, "Speed"); --trace and --no-pin
/// (logreg runs no block scheduler) removed.
void add_common_flags(CLI::App& c, train::CommonTrainFlags& f) {
    f.iterations = 1000;  // newton's iterations or prox's passes (docs/logreg.md, "Defaults")
    f.eval_every = 0;     // given or not, as auto_settings and train_newton read it
    f.threads = 1;        // not every core: see --threads
    train::add_common_train_flags(c, f);
    for (const char* name : {"--out", "--trace", "--no-pin"}) c.remove_option(c.get_option(name));
    c.add_option("--out,-o", f.out, "The model file to write (new, or --overwrite)")->required();
    c.get_option("--iterations")
        ->description(
            "At most this many iterations: newton's Newton iterations (default 1000), "
            "prox's block iterations (default 1000 passes); the run stops earlier by "
            "--tol (a resumed run continues up to this number)");
    c.get_option("--threads")
        ->description(
            "Threads per worker (0: every core, per rank under mpiexec); prox's "
            "workers share their examples among them (the model is the same for any "
            "number; default 1: 2 threads took twice as long on sotu-party, whose "
            "rounds are too small to share); newton is single-threaded, ignores them")
        ->default_str("1");
    c.get_option("--seed")->description("Seed of the blocks and their order");
    c.get_option("--metrics")
        ->description("JSON-lines file: one record per evaluation, appended and flushed as made");
    c.get_option("--eval-every")
        ->description(
            "Evaluate (objective, KKT, --test, the stopping rule) every N iterations "
            "(0: at the end only; default: every Newton iteration, prox with --tol > 0 "
            "every 4 passes)");
    c.get_option("--resume")
        ->description(
            "Continue the run checkpointed in this directory (any ranks; tau = 0: "
            "bitwise)");
    c.get_option("--max-memory")
        ->description("Refuse runs needing more per rank (e.g. 8G; default 90% of RAM)");
}

/// The flags of a run beyond the model and the common ones: the stopping rule, the straggler.
void add_run_flags(CLI::App& c, logreg::TrainFlags& f) {
    c.add_option("--tol", f.tol,
                 "Stop when the min-norm subgradient's 1-norm is <= tol times its value at w = 0 "
                 "(liblinear's -e rule; 0: never)")
        ->capture_default_str();
    c.add_option("--time-limit", f.time_limit,
                 "Stop at the first evaluation (prox) or Newton iteration after this many "
                 "training seconds (0: none)")
        ->capture_default_str();
    c.add_option("--simulate-straggler", f.straggler,
                 "Testing/benchmark aid: the worker on rank RANK sleeps (FACTOR - 1) x its "
                 "compute CPU time each iteration (RANK:FACTOR)");
}

void add_train(CLI::App& logreg, comm::Communicator* world) {
    auto f = std::make_shared<logreg::TrainFlags>();
    logreg::DelayedOptions& o = f->options;
    auto* c = logreg.add_subcommand("train", "Fit L1-regularised logistic regression");
    c->add_option("--data,-d", f->data,
                  "Training examples: LIBSVM/svmlight (gzip allowed) or the binary form of "
                  "`rotor logreg build`; each worker reads only its part")
        ->required();
    c->add_option(
         "--lambda", o.prox.lambda,
         "L1 penalty: sum log(1 + exp(-y x.w)) + lambda ||w||_1 (liblinear's C = 1/lambda); "
         "required unless --resume")
        ->capture_default_str();
    c->add_option("--solver", f->solver,
                  "newton (newGLMNET, one process, one thread), prox (the parameter server's "
                  "block proximal gradient: mpiexec, delay, filters, checkpoints) or auto: newton "
                  "in one process unless a flag of prox's is given")
        ->check(CLI::IsMember({"auto", "newton", "prox"}))
        ->capture_default_str();
    c->add_option(
        "--blocks", o.prox.blocks,
        "Feature blocks (by a hash of key and seed; with --block-file, those of the "
        "keys it does not list; default: keys / 8, at most 1024, 256 with threads or ranks)");
    c->add_option("--block-file", f->block_file,
                  "Feature groups, key<TAB>group lines (names with --hash-features): a block "
                  "each");
    c->add_option("--delay", f->delay, "Bounded delay tau: 0 (sequential) .. inf (eventual)")
        ->capture_default_str();
    c->add_option("--servers", f->servers,
                  "Server ranks (the first ones; the rest are workers); 0: every rank both")
        ->capture_default_str();
    c->add_option("--curvature", f->curvature,
                  "bound (1/4: every step descends) or local (sigma(1 - sigma) at w); default: "
                  "local with --max-step 1 at delay 0, bound with delay")
        ->check(CLI::IsMember({"bound", "local"}));
    c->add_option("--eta", o.prox.eta, "Step scale in (0, 1]")->capture_default_str();
    c->add_option("--timeout", o.timeout_s, "Seconds without a message before a rank gives up")
        ->capture_default_str();
    c->add_option("--max-step", o.prox.max_step,
                  "Trust region: clamp each step's change of a weight (0: none; use with local)")
        ->capture_default_str();
    // Filters of pushes and pulls (docs/logreg.md, "Filters").
    c->add_option(
        "--filters", f->filters,
        "Filters stacked in this order: kkt, sigmod, skip, keycache, zstd (comma list; all: "
        "every one, in that order; none)");
    c->add_option("--kkt-delta", o.filters.kkt_delta,
                  "kkt: skip w_k = 0 with |last gradient| <= lambda - delta")
        ->capture_default_str();
    c->add_option("--kkt-refresh", o.filters.kkt_refresh,
                  "kkt: every this-many-th pass pushes every key (0: never)")
        ->capture_default_str();
    c->add_option("--sigmod-threshold", o.filters.sigmod_threshold,
                  "sigmod: send entries changed by more than c / (t + 1)")
        ->capture_default_str();
    c->add_option("--skip-rate", o.filters.skip_rate, "skip: share of push entries skipped")
        ->capture_default_str();
    c->add_flag("--deterministic", f->deterministic,
                "prox: push the exact sums' limbs at any delay (64 bytes a key: the same sums "
                "for any split and order of arrival); default: exact at --delay 0, float32 "
                "g and u (8 bytes a key) with delay");
    c->add_option("--stats", f->stats, "Write the bytes sent (per role and filter) as JSON here");
    c->add_option("--test", f->test, "Examples to report logloss, AUC and accuracy on");
    c->add_flag("--no-intercept", f->no_intercept, "Fit no intercept");
    c->add_flag("--hash-features", f->hash_features, "Features are strings, hashed to keys");
    add_common_flags(*c, f->common);
    add_run_flags(*c, *f);
    c->callback([f, world, c] {
        // The common flags the solvers read from options (as the Python package sets them).
        f->options.threads = f->common.threads;
        f->options.prox.seed = f->common.seed;
        if (c->count("--iterations") > 0) f->options.iterations = f->common.iterations;
        f->eval_every = f->common.eval_every;
        f->quiet = f->common.quiet;
        for (const char* flag : logreg::kModelFlags)
            if (c->count(flag) > 0) f->given.emplace_back(flag);
        for (const char* flag : {"--iterations", "--eval-every"})
            if (c->count(flag) > 0) f->given.emplace_back(flag);
        for (const char* flag : logreg::kProxOnlyFlags)
            if (c->count(flag) > 0) f->given.emplace_back(flag);
        if (world != nullptr) {
            logreg::run_train(*f, *world);
        } else {
            comm::InProcessGroup one(1);  // one process: a world of one rank
            logreg::run_train(*f, one.at(0));
        }
    });
}

struct UseFlags {
    std::string model;
    std::string data;
    std::string out;
};

void run_predict(const UseFlags& f) {
    const Model m = logreg::read_model(f.model);
    const Examples ex = logreg::read_whole(f.data, m.hashed, "the model");
    std::string text;
    for (std::size_t i = 0; i < ex.size(); ++i) {
        const double margin = m.margin(ex.keys_of(i), ex.values_of(i));
        text += fmt::format("{:.17g}\n", 1.0 / (1.0 + std::exp(-margin)));
    }
    if (f.out.empty()) {
        std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
        core::write_file_atomically(f.out, text);
    }
}

void add_use(CLI::App& logreg, bool predict) {
    auto f = std::make_shared<UseFlags>();
    auto* c = predict ? logreg.add_subcommand("predict",
                                              "The probability of +1 for each example, one a line")
                      : logreg.add_subcommand("eval", "Logloss, AUC and accuracy on examples");
    c->add_option("--model,-m", f->model, "A model file of `rotor logreg train`")->required();
    c->add_option("--data,-d", f->data,
                  "Examples: LIBSVM/svmlight (gzip allowed) or the binary form")
        ->required();
    if (predict) c->add_option("--out,-o", f->out, "Write here (default: stdout)");
    c->callback([f, predict] {
        if (predict) {
            run_predict(*f);
            return;
        }
        const logreg::Metrics t = metrics_on(logreg::read_model(f->model), f->data);
        fmt::print("examples\t{}\nlogloss\t{:.10g}\nauc\t{:.10g}\naccuracy\t{:.10g}\n", t.examples,
                   t.logloss, t.auc, t.accuracy);
    });
}

struct BuildFlags {
    std::string data;
    std::string out;
    bool hash_features = false;
    bool quiet = false;
};

void add_build(CLI::App& logreg) {
    auto f = std::make_shared<BuildFlags>();
    auto* c = logreg.add_subcommand(
        "build",
        "Write examples in the binary form (mmap, CRC-checked) train, eval and predict read");
    c->add_option("--data,-d", f->data, "Examples: LIBSVM/svmlight (gzip allowed)")->required();
    c->add_option("--out,-o", f->out, "The binary file to write")->required();
    c->add_flag("--hash-features", f->hash_features, "Features are strings, hashed to keys");
    c->add_flag("--quiet,-q", f->quiet, "No summary line");
    c->callback([f] {
        logreg::ReadExamplesOptions ro;
        ro.hash_features = f->hash_features;
        const Examples ex = logreg::read_examples(f->data, ro);
        std::vector<std::uint64_t> keys(ex.keys);
        std::sort(keys.begin(), keys.end());
        const auto distinct =
            static_cast<std::uint64_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
        logreg::write_examples_binary(f->out, ex, f->hash_features, distinct);
        if (!f->quiet)
            fmt::print("rotor: {} examples, {} nonzeros, {} keys written to {}\n", ex.size(),
                       ex.nonzeros(), distinct, f->out);
    });
}

}  // namespace

void add_logreg_commands(CLI::App& app, comm::Communicator* world) {
    auto* logreg = app.add_subcommand(
        "logreg",
        "Sparse L1 logistic regression on servers and workers: train, path, predict, eval, build");
    logreg->require_subcommand(1);
    add_train(*logreg, world);
    logreg::add_path_command(*logreg, world);
    add_use(*logreg, true);
    add_use(*logreg, false);
    add_build(*logreg);
}

}  // namespace rotor::apps
