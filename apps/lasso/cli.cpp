// `rotor lasso train` and `rotor lasso path`: the CLI parses flags into lasso::TrainOptions and
// drives a lasso::Trainer, in one process or as one rank of `mpiexec -n P`. Every rank reads
// the data file and keeps its slice of the samples (split_by_entries); rank 0 writes the outputs.
#include "apps/lasso/cli.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "apps/lasso/checkpoint.h"
#include "apps/lasso/data.h"
#include "apps/lasso/trainer.h"
#include "comm/agreed.h"
#include "comm/communicator.h"
#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "core/base/timer.h"
#include "core/io/atomic_file.h"
#include "core/lasso/model_file.h"
#include "sched/runtime.h"
#include "sched/topology.h"
#include "train/checkpoint_dir.h"
#include "train/common_flags.h"
#include "train/lambda_path.h"
#include "train/memory_plan.h"
#include "train/reporter.h"
#include "train/resume.h"
#include "train/run_outputs.h"

namespace rotor::apps {
namespace {

using lasso::Trainer;

/// How the outputs of rotor begin: a model file and a path file (core::check_output).
constexpr std::string_view kLassoModelMarker = "rotor-lasso-model";
constexpr std::string_view kPathMarker = "# rotor lasso path:";

/// The flags of `train` and `path`.
struct FitFlags {
    lasso_cli::DataFlags data;
    train::CommonTrainFlags common;
    std::string schedule = "cyclic";
    std::string stop = "gap";
    bool no_intercept = false;
    bool no_standardize = false;
    bool no_active_set = false;
    lasso::TrainOptions options;
    /// The model-defining flags given on the command line (with --resume they must agree with
    /// the checkpoint).
    std::vector<std::string> given;
    const CLI::Option* candidates = nullptr;  ///< --candidates, to tell whether it was given
    // path only
    bool path = false;
    std::uint32_t n_lambdas = 20;
    double eps = 1e-3;
    std::string models;
};

/// What a run sets up before training, on every rank alike.
struct FitSetup {
    std::uint32_t samples = 0;
    std::uint32_t features = 0;
    std::vector<std::string> names;
    std::uint64_t plan = 0;
    std::optional<sched::Runtime> runtime;
    std::unique_ptr<Trainer> trainer;
    std::unique_ptr<train::JsonLinesReporter> metrics;  // rank 0 only
    std::uint32_t first_row = 0;                        // this rank's first sample
    std::string threads_reason;    // why this many threads, when --threads was not given
    lasso::DataFingerprint print;  // with checkpoints or --resume
    std::optional<lasso::Checkpoint> resume;
};

/// --resume: the run continues with the checkpoint's options. A model-defining flag given with a
/// different value is refused by name; --max-iterations (the total to reach) may change.
void apply_checkpoint(FitFlags& f, const lasso::Checkpoint& c) {
    const auto given = [&f](const std::string& flag) {
        return std::find(f.given.begin(), f.given.end(), flag) != f.given.end();
    };
    train::refuse_resume_conflicts(lasso::resume_settings(f.options, c.options), given,
                                   f.common.resume);
    const std::uint32_t target =
        given("--max-iterations") ? f.options.max_iterations : c.options.max_iterations;
    train::check_resume_target(c.state.iterations_done, target, f.common.resume,
                               "--max-iterations");
    f.options = c.options;
    f.options.max_iterations = target;
    f.schedule = lasso::schedule_name(c.options.schedule);
    f.no_intercept = !c.options.standardize.intercept;
    f.no_standardize = !c.options.standardize.standardize;
}

void apply_flags(FitFlags& f) {
    lasso::TrainOptions& o = f.options;
    o.schedule = lasso::parse_schedule(f.schedule);
    o.stop = lasso::parse_stop_rule(f.stop);
    o.standardize.intercept = !f.no_intercept;
    o.standardize.standardize = !f.no_standardize;
    o.active_set = !f.no_active_set;
    o.seed = f.common.seed;
    o.eval_every = f.common.eval_every;
    // strads draws twice the coordinates it keeps by default (L' = 32, L = 16): a larger
    // --parallel without --candidates keeps that ratio instead of being refused.
    if (f.candidates != nullptr && f.candidates->count() == 0)
        o.strads.candidates = std::max(o.strads.candidates, 2 * o.strads.parallel);
}

/// This rank's samples, and what the checks and the memory plan need of the whole data.
struct RankData {
    lasso::RawData slice;  ///< rows [first_row, first_row + slice.samples()) of the data
    std::uint32_t first_row = 0;
    std::uint32_t samples = 0;     ///< N of the whole data
    std::uint64_t entries = 0;     ///< stored entries of the whole data
    bool whole_read = true;        ///< every sample was copied (text input), not only the slice
    lasso::DataFingerprint print;  ///< of the whole data, when asked for
};

/// Splits the samples over the ranks by stored entries (split_by_entries) and returns this
/// rank's. Text input is parsed whole by every rank, then sliced. The binary form is mapped: every
/// rank checks its header, CRC-32 and row offsets and copies (and checks) only its own samples,
/// so no rank holds the whole data. `print`: also fingerprint the whole data (checkpoints).
RankData read_rank_data(const lasso_cli::DataFlags& flags, const comm::Communicator& world,
                        const core::ReadLimits& limits, bool print) {
    RankData r;
    const auto split = [&](std::span<const std::uint64_t> row_offsets) {
        r.samples = static_cast<std::uint32_t>(row_offsets.size() - 1);
        r.entries = row_offsets.back();
        if (r.samples == 0) throw InputError(flags.path, "no samples");
        train::check_work_per_rank(r.samples, world.size(), "samples");
        const std::vector<std::uint32_t> begin = lasso::split_by_entries(row_offsets, world.size());
        r.first_row = begin[world.rank()];
        return std::pair(begin[world.rank()], begin[world.rank() + 1]);
    };
    if (const std::optional<lasso::MappedData> mapped = flags.map_binary()) {
        const auto [lo, hi] = split(mapped->row_offsets());
        if (print) {
            r.print = lasso::fingerprint(mapped->features(), mapped->row_offsets(), mapped->cols(),
                                         mapped->values(), mapped->targets());
            mapped->release_all();  // the hash read it all: not resident beside the copy
        }
        r.slice = mapped->rows(lo, hi, limits);
        r.whole_read = false;
        return r;
    }
    const lasso::RawData raw = flags.read(0, limits);
    const auto [lo, hi] = split(raw.row_offsets);
    if (print) r.print = lasso::fingerprint(raw);
    r.slice = lasso::slice_rows(raw, lo, hi);
    return r;
}

/// The load other processes put on this host's cores (sched::host_load_average), rank 0's on
/// every rank (so they choose alike).
double other_load(comm::Communicator& world) {
    double load = world.rank() == 0 ? sched::host_load_average() : 0;
    if (world.size() > 1) {
        std::vector<double> v{load};  // rank 0's; the others add 0
        world.allreduce_sum(v);
        load = v[0];
    }
    return load;
}

/// Before any work: the outputs may be written (train::CommonTrainFlags::check_outputs): the
/// model file of `train`, or the path file and the --models directory of `path`.
void check_outputs(const FitFlags& f) {
    if (!f.path) {
        f.common.check_outputs(core::OutputKind::kFile, kLassoModelMarker);
        return;
    }
    f.common.check_outputs(core::OutputKind::kFile, kPathMarker);
    if (!f.models.empty())
        core::check_output(f.models, core::OutputKind::kDirectory, "model-000.txt",
                           f.common.overwrite, "--models");
}

void prepare(FitFlags& f, comm::Communicator& world, FitSetup& s, bool metrics_per_iteration) {
    const int host_ranks = train::ranks_on_this_host(world);
    const double load = other_load(world);  // a collective: before any step that may throw
    lasso::RawData slice;
    comm::run_agreed(world, [&] {
        if (world.rank() == 0) check_outputs(f);
        apply_flags(f);
        f.options.validate();
        if (!f.common.resume.empty()) {
            s.resume = lasso::read_checkpoint(f.common.resume);
            apply_checkpoint(f, *s.resume);
        }
        if (f.common.checkpoint_every > 0 && world.rank() == 0)
            train::remove_stale_temporaries(f.common.resolved_checkpoint_dir());
        // The memory limit bounds the samples as they are read, before the plan.
        const core::ReadLimits limits = train::corpus_limits(f.common.max_memory, host_ranks);
        const bool print = f.common.checkpoint_every > 0 || s.resume.has_value();
        RankData data = read_rank_data(f.data, world, limits, print);
        if (print) s.print = data.print;
        if (s.resume) lasso::check_same_data(s.resume->data, s.print, f.common.resume, f.data.path);
        s.samples = data.samples;
        s.features = data.slice.features;
        s.names = data.slice.feature_names;
        int threads = f.common.resolved_threads(host_ranks);  // validates --threads too
        if (f.common.threads == 0) {
            // Not given: from the cost of a round on this rank (the ranks' slices are balanced
            // by stored entries, so every rank chooses alike).
            const lasso::ThreadChoice c =
                lasso::choose_threads(data.entries / static_cast<std::uint64_t>(world.size()),
                                      data.slice.features, f.options, threads, load);
            threads = c.threads;
            s.threads_reason = c.reason;
        }
        const std::string warning =
            train::CommonTrainFlags::oversubscription_warning(threads, host_ranks);
        if (!warning.empty() && world.rank() == 0) fmt::print(stderr, "{}\n", warning);
        s.plan = lasso::estimate_memory(data.entries, data.samples, data.slice.features,
                                        data.whole_read, world.size(), threads, print, f.options);
        train::check_memory(s.plan, train::memory_limit(f.common.max_memory, host_ranks),
                            "use more ranks (mpiexec) or raise --max-memory", world.size() > 1);
        slice = std::move(data.slice);
        s.first_row = data.first_row;
        s.runtime.emplace(threads, f.common.pin_mode());
        if (world.rank() == 0 && !f.common.metrics.empty() && metrics_per_iteration)
            s.metrics = std::make_unique<train::JsonLinesReporter>(  // resumed: kept up to it
                f.common.metrics, lasso::record_schema(),
                s.resume ? std::optional<std::uint64_t>(s.resume->state.iterations_done)
                         : std::nullopt);
    });
    comm::run_agreed(world, [&] {
        s.trainer = std::make_unique<Trainer>(std::move(slice), f.options, *s.runtime, world);
    });
    if (s.resume) {
        comm::run_agreed(world, [&] { s.trainer->restore(s.resume->state, s.first_row); });
        s.resume->state = {};
        if (!f.common.quiet && world.rank() == 0)
            fmt::print("rotor: resumed {} at iteration {}\n", f.common.resume,
                       s.trainer->iterations_done());
    }
}

/// Iterates until the stopping rule holds or max_iterations; evaluates every eval_every
/// iterations and at the last; `lambda` is added to every record when given.
train::Record fit(Trainer& t, train::Reporter* reporter, std::optional<double> lambda,
                  comm::Communicator& world, const std::function<void()>& after_iteration = {}) {
    // Divergence is agreed: every rank throws the same.
    const auto evaluate = [&](train::Record& r) {
        comm::run_agreed(world, [&] { t.evaluate_record(r); });
    };
    return lasso::fit(t, reporter, evaluate, lambda, after_iteration);
}

lasso::Model model_of(const Trainer& t, const FitFlags& f, const FitSetup& s) {
    lasso::Model m = lasso::Model::from_standardized(t.coefficients().b, t.standardization());
    m.samples = s.samples;
    m.lambda = t.options().lambda;
    m.schedule = std::string(lasso::schedule_name(t.options().schedule));
    m.iterations = t.iterations_done();
    m.objective = t.last_evaluation().objective;
    m.relative_gap = t.last_evaluation().relative_gap;
    m.standardize = !f.no_standardize;
    m.feature_names = s.names;
    return m;
}

void print_start(const FitFlags& f, const FitSetup& s, comm::Communicator& world,
                 const char* what) {
    if (f.common.quiet || world.rank() != 0) return;
    fmt::print(
        "rotor: lasso {}: {} samples x {} features; schedule {}, {} thread{}{}{}{}; lambda_max "
        "{:.6g}; memory plan {}{}\n",
        what, s.samples, s.features, f.schedule, s.runtime->threads(),
        s.runtime->threads() == 1 ? "" : "s",
        s.threads_reason.empty() ? "" : fmt::format(" (automatic: {})", s.threads_reason),
        world.size() > 1 ? fmt::format(" x {} ranks", world.size()) : "",
        s.trainer->tiles() > static_cast<std::size_t>(s.runtime->threads())
            ? fmt::format(" ({} row tiles{})", s.trainer->tiles(),
                          world.size() > 1 ? " on rank 0" : "")
            : "",
        s.trainer->lambda_max(), train::human_bytes(s.plan), world.size() > 1 ? " per rank" : "");
    std::fflush(stdout);
    if (world.size() > 1 && s.trainer->options().schedule == lasso::Schedule::kCyclic)
        fmt::print(stderr,
                   "rotor: warning: --schedule cyclic on {} ranks reduces every coordinate "
                   "update across the ranks (one allreduce each); --schedule shotgun or strads "
                   "reduce L updates at a time (docs/lasso.md)\n",
                   world.size());
}

void run_train(FitFlags& f, comm::Communicator& world) {
    FitSetup s;
    prepare(f, world, s, true);
    print_start(f, s, world, "train");
    Trainer& t = *s.trainer;
    train::TerminalReporter terminal(stdout, lasso::record_schema());
    train::TeeReporter tee;
    if (!f.common.quiet && world.rank() == 0) tee.add(terminal);
    if (s.metrics) tee.add(*s.metrics);
    const std::uint32_t every = f.common.checkpoint_every;
    const std::string dir = f.common.resolved_checkpoint_dir();
    fit(t, &tee, std::nullopt, world, [&] {
        // The last iteration too (converged or not), so a finished run can be continued.
        const std::uint32_t i = t.iterations_done();
        if (every > 0 && (i % every == 0 || i == f.options.max_iterations || t.converged()))
            lasso::write_checkpoint(dir, t, f.options, s.print, world);
    });
    comm::run_agreed(world, [&] {
        if (world.rank() != 0) return;
        lasso::write_model(f.common.out, model_of(t, f, s));
        train::write_run_outputs(f.common.out, {[&] {  // the model first, then what records it
                                     if (s.metrics) s.metrics->commit();
                                 }});
    });
    if (f.common.quiet || world.rank() != 0) return;
    const lasso::Evaluation& e = t.last_evaluation();
    fmt::print(
        "rotor: {} after {} iterations ({} updates): objective {:.10g}, relative gap {:.3g}, "
        "kkt {:.3g}, {} nonzeros\n",
        t.converged() ? "converged" : "stopped at --max-iterations", t.iterations_done(),
        t.total_updates(), e.objective, e.relative_gap, e.kkt_violation, e.nonzeros);
    if (t.rollbacks() > 0)
        fmt::print(
            "rotor: the parallel updates diverged {} time{}: each time the run went back to its "
            "last evaluation and halved --parallel, from {} to {} (docs/lasso.md)\n",
            t.rollbacks(), t.rollbacks() == 1 ? "" : "s", f.options.strads.parallel, t.parallel());
    const std::string summary = terminal.summary();
    fmt::print("rotor: model written to {}{}\n", f.common.out,
               summary.empty() ? "" : " (" + summary + ")");
}

/// One λ of a path.
struct PathPoint {
    double lambda = 0;
    lasso::Evaluation eval;
    std::uint32_t iterations = 0;
    double time_s = 0;
    lasso::Model model;
};

std::string path_text(const FitFlags& f, const FitSetup& s, const std::vector<PathPoint>& points) {
    std::string out = fmt::format(
        "# rotor lasso path: {}, {} samples x {} features, lambda_max {:.17g}, schedule {}\n"
        "lambda\tobjective\trelative_gap\tkkt\tnonzeros\titerations\ttime_s\tintercept\t"
        "coefficients\n",
        f.data.path, s.samples, s.features, s.trainer->lambda_max(), f.schedule);
    for (const PathPoint& p : points) {
        std::string coefs;
        for (std::uint32_t j = 0; j < p.model.features; ++j) {
            if (p.model.beta[j] == 0) continue;
            coefs += fmt::format("{}{}:{:.17g}", coefs.empty() ? "" : ",", j + 1, p.model.beta[j]);
        }
        out += fmt::format("{:.17g}\t{:.17g}\t{:.6g}\t{:.6g}\t{}\t{}\t{:.6f}\t{:.17g}\t{}\n",
                           p.lambda, p.eval.objective, p.eval.relative_gap, p.eval.kkt_violation,
                           p.eval.nonzeros, p.iterations, p.time_s, p.model.intercept, coefs);
    }
    return out;
}

void run_path(FitFlags& f, comm::Communicator& world) {
    comm::run_agreed(world, [&] { train::check_grid(f.n_lambdas, f.eps); });
    FitSetup s;
    prepare(f, world, s, true);
    print_start(f, s, world, "path");
    Trainer& t = *s.trainer;
    const bool talk = !f.common.quiet && world.rank() == 0;
    if (talk) fmt::print("lambda\tobjective\tnonzeros\trelative_gap\ttime_s\n");
    std::vector<PathPoint> points;
    Stopwatch total;
    // Log-spaced from λ_max down, each λ warm started from the previous one's solution.
    for (const double lambda : train::lambda_grid(t.lambda_max(), f.n_lambdas, f.eps)) {
        t.set_lambda(lambda);
        Stopwatch clock;
        fit(t, s.metrics.get(), lambda, world);
        PathPoint p{lambda, t.last_evaluation(), t.iterations_done(), clock.seconds(),
                    model_of(t, f, s)};
        if (talk) {
            fmt::print("{:.6g}\t{:.10g}\t{}\t{:.3g}\t{:.3f}\n", lambda, p.eval.objective,
                       p.eval.nonzeros, p.eval.relative_gap, total.seconds());
            std::fflush(stdout);
        }
        points.push_back(std::move(p));
    }
    comm::run_agreed(world, [&] {
        if (world.rank() != 0) return;
        if (!f.models.empty()) {
            std::filesystem::create_directory(f.models);  // its parent was checked
            for (std::size_t k = 0; k < points.size(); ++k)
                lasso::write_model(fmt::format("{}/model-{:03}.txt", f.models, k), points[k].model);
        }
        core::write_file_atomically(f.common.out, path_text(f, s, points));
        train::write_run_outputs(f.common.out, {[&] {
                                     if (s.metrics) s.metrics->commit();
                                 }});
    });
    if (talk) fmt::print("rotor: path of {} lambdas written to {}\n", points.size(), f.common.out);
}

/// The flags `train` and `path` share.
void add_fit_flags(CLI::App& c, FitFlags& f) {
    lasso::TrainOptions& o = f.options;
    f.data.add(c, "Training samples: LIBSVM/svmlight or CSV/TSV (gzip allowed)");
    c.add_option("--schedule", f.schedule,
                 "cyclic (coordinate descent in order), shotgun (L random coordinates a round) or "
                 "strads (L of L' candidates drawn by priority, correlated ones rejected)")
        ->check(CLI::IsMember({"cyclic", "shotgun", "strads"}))
        ->capture_default_str();
    c.add_option("--parallel,-L", o.strads.parallel, "shotgun, strads: coordinates per round (L)")
        ->capture_default_str();
    f.candidates = c.add_option("--candidates", o.strads.candidates,
                                "strads: candidates drawn per round (L'; default also at "
                                "least 2L)")
                       ->capture_default_str();
    c.add_option("--rho", o.strads.rho,
                 "strads: keep a candidate only if |correlation| < rho with every kept one")
        ->capture_default_str();
    c.add_option("--eta", o.strads.eta, "strads: priority floor (delta_j^2 + eta)")
        ->capture_default_str();
    c.add_option("--tol", o.tol,
                 "Stop when the relative duality gap (scikit-learn's test; --stop kkt: the KKT "
                 "violation in standardised units) is below this")
        ->capture_default_str();
    c.add_option("--stop", f.stop, "gap or kkt: what --tol bounds")
        ->check(CLI::IsMember({"gap", "kkt"}))
        ->capture_default_str();
    c.add_option("--max-iterations", o.max_iterations,
                 "At most this many iterations (p coordinate updates each)")
        ->capture_default_str();
    c.add_flag("--no-active-set", f.no_active_set,
               "Sweep every coordinate each iteration (default: the active set and the "
               "coordinates the last evaluation's gradients select, glmnet's strategy; shotgun "
               "and strads draw their rounds from that set)");
    c.add_flag("--no-intercept", f.no_intercept, "Fit no intercept (nothing is centred)");
    c.add_flag("--no-standardize", f.no_standardize,
               "Penalise the raw coefficients (glmnet standardize = FALSE)");
    c.add_option("--threads,-t", f.common.threads,
                 "Worker threads per rank (0: chosen from the cost of a round, said on the start "
                 "line; docs/lasso.md)")
        ->capture_default_str();
    c.add_option("--tile-rows", o.tile_rows,
                 "Cut each worker's samples into tiles of at most this many rows, walked one "
                 "after another so the residuals stay in cache (0: no tiles; the same model "
                 "either way)")
        ->capture_default_str();
    c.add_option("--seed", f.common.seed, "Seed of the shotgun and strads schedules")
        ->capture_default_str();
    f.common.eval_every = 1;
    c.add_option("--eval-every", f.common.eval_every,
                 "Evaluate (objective, gap, KKT) and test --tol every N iterations")
        ->capture_default_str();
    c.add_option("--metrics", f.common.metrics, "JSON-lines file, one record per iteration");
    c.add_option("--max-memory", f.common.max_memory,
                 "Refuse runs needing more (e.g. 8G; default 90% of RAM)");
    c.add_flag("--quiet,-q", f.common.quiet, "No progress lines");
    c.add_flag("--no-pin", f.common.no_pin,
               "Do not pin workers to cores (pinned by default when they are as many as the CPUs "
               "the process may use)");
}

template <class Run>
void on_world(comm::Communicator* world, Run run) {
    if (world != nullptr) {
        run(*world);
    } else {
        comm::InProcessGroup one(1);  // one process: a world of one rank
        run(one.at(0));
    }
}

void add_train(CLI::App& lasso, comm::Communicator* world) {
    auto f = std::make_shared<FitFlags>();
    auto* c = lasso.add_subcommand("train", "Fit a Lasso model at one lambda");
    add_fit_flags(*c, *f);
    c->add_option("--lambda", f->options.lambda,
                  "L1 penalty, glmnet/scikit-learn normalisation (1/(2N)||y - Xb||^2 + "
                  "lambda ||b||_1)")
        ->required();
    c->add_option("--out,-o", f->common.out, "The model file to write (new, or --overwrite)")
        ->required();
    train::add_overwrite_flag(*c, f->common.overwrite);
    c->add_option("--checkpoint-every", f->common.checkpoint_every,
                  "Write a checkpoint every N iterations and at the end (0: never)")
        ->capture_default_str();
    c->add_option("--checkpoint-dir", f->common.checkpoint_dir,
                  "Checkpoint directory (default <out>.checkpoint)");
    c->add_option("--resume", f->common.resume,
                  "Continue the run checkpointed in this directory (bitwise as if never stopped)");
    c->callback([f, world, c] {
        for (const train::ResumeSetting& s : lasso::resume_settings({}, {}))
            if (c->count(s.flag) > 0) f->given.emplace_back(s.flag);
        if (c->count("--max-iterations") > 0) f->given.emplace_back("--max-iterations");
        on_world(world, [&](comm::Communicator& w) { run_train(*f, w); });
    });
}

void add_path(CLI::App& lasso, comm::Communicator* world) {
    auto f = std::make_shared<FitFlags>();
    f->path = true;
    f->options.max_iterations = 1000;
    auto* c = lasso.add_subcommand(
        "path", "Fit a path of lambdas from lambda_max down to eps * lambda_max, warm started");
    add_fit_flags(*c, *f);
    c->add_option("--n-lambdas", f->n_lambdas, "Number of lambdas, log-spaced")
        ->capture_default_str();
    c->add_option("--eps", f->eps, "The smallest lambda over lambda_max")->capture_default_str();
    c->add_option("--out,-o", f->common.out,
                  "The path file (TSV: one line per lambda with its nonzero coefficients)")
        ->required();
    c->add_option("--models", f->models,
                  "Also write one model file per lambda into this directory");
    train::add_overwrite_flag(*c, f->common.overwrite);
    c->callback([f, world] { on_world(world, [&](comm::Communicator& w) { run_path(*f, w); }); });
}

}  // namespace

void add_lasso_commands(CLI::App& app, comm::Communicator* world) {
    auto* lasso =
        app.add_subcommand("lasso", "Lasso regression: train, path, predict, eval, build");
    lasso->require_subcommand(1);
    add_train(*lasso, world);
    add_path(*lasso, world);
    add_lasso_use_commands(*lasso);
}

}  // namespace rotor::apps
