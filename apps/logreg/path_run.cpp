#include "apps/logreg/path_run.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "apps/logreg/input.h"
#include "apps/logreg/newton_run.h"
#include "core/base/error.h"
#include "core/base/exact_sum.h"
#include "core/base/timer.h"
#include "core/io/atomic_file.h"
#include "core/logreg/metrics.h"
#include "core/logreg/objective.h"
#include "train/lambda_path.h"

namespace rotor::logreg {
namespace {

/// How the outputs begin (core::check_output).
constexpr std::string_view kPathMarker = "# rotor logreg path:";
constexpr std::string_view kModelMarker = "rotor-logreg-model";

/// The point of `lambda` from the solver's state after run() (the part's margins current).
PathPoint point_of(const Shard& part, const NewtonSolver& solver, double lambda, NewtonStop stop) {
    PathPoint p;
    p.lambda = lambda;
    p.stop = stop;
    p.iterations = solver.status().iteration;
    const auto keys = part.keys();
    const auto w = solver.weights();
    core::ExactSum loss;
    push_loss(part, loss);
    p.objective = loss.value() + penalty(keys, w, lambda);
    Model& m = p.model;
    m.lambda = lambda;
    m.iterations = p.iterations;
    m.objective = p.objective;
    for (std::size_t j = 0; j < keys.size(); ++j) {
        if (w[j] == 0) continue;
        if (keys[j] == kInterceptKey) {
            m.intercept = w[j];
            continue;
        }
        m.keys.push_back(keys[j]);
        m.weights.push_back(w[j]);
    }
    p.nonzeros = m.keys.size();
    return p;
}

/// Examples of `ex` whose fold is (`in`) or is not (!`in`) `fold`, in order.
Examples subset(const Examples& ex, const std::vector<std::uint32_t>& folds, std::uint32_t fold,
                bool in) {
    Examples out;
    for (std::size_t i = 0; i < ex.size(); ++i)
        if ((folds[i] == fold) == in) out.add(ex.labels[i], ex.keys_of(i), ex.values_of(i));
    return out;
}

/// The folds' held-out measures at every λ: [fold][λ].
struct FoldErrors {
    std::vector<std::vector<double>> logloss;
    std::vector<std::vector<double>> accuracy;
};

/// K-fold cross-validation over `grid` (the whole data's): fold f's path is fitted on the other
/// folds at λ · n_f / N (the same penalty per example as on the whole data, glmnet's
/// normalisation) and measured on fold f.
FoldErrors cross_validate_path(const PathFlags& f, const Examples& ex,
                               const std::vector<double>& grid, const NewtonOptions& options) {
    const std::vector<std::uint32_t> folds = train::assign_folds(ex.labels, f.folds, f.seed);
    FoldErrors errors;
    for (std::uint32_t k = 0; k < f.folds; ++k) {
        const Stopwatch clock;
        const Examples heldout_examples = subset(ex, folds, k, true);
        Shard train(subset(ex, folds, k, false), !f.no_intercept);
        Shard heldout(heldout_examples, !f.no_intercept);
        const double scale = double(train.examples()) / double(ex.size());
        std::vector<double> scaled(grid);
        for (double& l : scaled) l *= scale;
        std::vector<double>& logloss = errors.logloss.emplace_back();
        std::vector<double>& accuracy = errors.accuracy.emplace_back();
        std::uint64_t iterations = 0;
        fit_path(train, scaled, options, f.cold_start, &heldout,
                 [&](const PathPoint& p, std::span<const double> margins) {
                     const Metrics m = compute_metrics(margins, heldout_examples.labels);
                     logloss.push_back(m.logloss);
                     accuracy.push_back(m.accuracy);
                     iterations += p.iterations;
                 });
        if (!f.quiet)
            fmt::print(stderr,
                       "rotor: fold {} of {}: {} training, {} held-out examples, {} Newton "
                       "iterations, {:.2f} s\n",
                       k + 1, f.folds, train.examples(), heldout.examples(), iterations,
                       clock.seconds());
    }
    return errors;
}

std::string yes_no(NewtonStop s) { return s == NewtonStop::kConverged ? "yes" : "no"; }

/// The table's lines (the path file's with `weights`: the intercept and the nonzero weights).
std::string table(const std::vector<PathPoint>& points, const train::CrossValidation* cv,
                  const std::vector<double>& acc_mean, const std::vector<double>& acc_sd,
                  bool weights) {
    std::string out = "lambda\tnonzeros\tobjective\titerations\tconverged\ttime_s";
    if (cv != nullptr) out += "\tcv_logloss\tcv_logloss_sd\tcv_accuracy\tcv_accuracy_sd\tchosen";
    if (weights) out += "\tintercept\tweights";
    out += '\n';
    for (std::size_t k = 0; k < points.size(); ++k) {
        const PathPoint& p = points[k];
        out += fmt::format("{:.17g}\t{}\t{:.17g}\t{}\t{}\t{:.6f}", p.lambda, p.nonzeros,
                           p.objective, p.iterations, yes_no(p.stop), p.seconds);
        if (cv != nullptr) {
            std::string chosen = k == cv->best ? "min" : "";
            if (k == cv->one_se) chosen += chosen.empty() ? "1se" : ",1se";
            out += fmt::format("\t{:.10g}\t{:.6g}\t{:.10g}\t{:.6g}\t{}", cv->mean[k], cv->sd[k],
                               acc_mean[k], acc_sd[k], chosen.empty() ? "-" : chosen);
        }
        if (weights) {
            std::string w;
            for (std::size_t j = 0; j < p.model.keys.size(); ++j)
                w += fmt::format("{}{}:{:.17g}", w.empty() ? "" : ",", p.model.keys[j],
                                 p.model.weights[j]);
            out += fmt::format("\t{:.17g}\t{}", p.model.intercept, w.empty() ? "-" : w);
        }
        out += '\n';
    }
    return out;
}

void check_flags(const PathFlags& f, bool select_given) {
    train::check_grid(f.n_lambdas, f.eps);
    if (f.folds == 1) throw ConfigError("--folds", "must be 0 (no cross-validation) or >= 2");
    if (!f.model.empty() && f.folds == 0)
        throw ConfigError("--model", "needs --folds: its lambda is chosen by cross-validation");
    if (select_given && f.folds == 0)
        throw ConfigError("--select", "needs --folds: it chooses by cross-validation");
    if (!(f.tol >= 0)) throw ConfigError("--tol", "must be >= 0");
    if (f.iterations < 1) throw ConfigError("--iterations", "must be at least 1");
    if (!f.out.empty())
        core::check_output(f.out, core::OutputKind::kFile, kPathMarker, f.overwrite, "--out");
    if (!f.model.empty())
        core::check_output(f.model, core::OutputKind::kFile, kModelMarker, f.overwrite, "--model");
}

void run_path(const PathFlags& f, bool select_given) {
    check_flags(f, select_given);
    reuse_freed_memory();
    const Examples ex = read_whole(f.data, f.hash_features, "--hash-features");
    if (ex.size() == 0) throw InputError(f.data, "no examples");
    const auto positives = std::count(ex.labels.begin(), ex.labels.end(), std::int8_t{1});
    if (!f.no_intercept && (positives == 0 || positives == std::ptrdiff_t(ex.size())))
        throw InputError(f.data, fmt::format("every example has label {}: with the intercept no "
                                             "weight ever enters (a path needs both classes)",
                                             positives == 0 ? -1 : 1));
    Shard whole(ex, !f.no_intercept);
    const double top = lambda_max(whole);
    if (!(top > 0)) throw InputError(f.data, "no feature is nonzero in any example: no path");
    const std::vector<double> grid = train::lambda_grid(top, f.n_lambdas, f.eps);
    NewtonOptions o;
    o.tol = f.tol;
    o.max_iterations = f.iterations;
    o.seed = f.seed;
    if (!f.quiet)
        fmt::print(stderr,
                   "rotor: logreg path: {} examples, {} keys; lambda_max {:.6g}, {} lambdas down "
                   "to {:g} x; newton, {} starts{}\n",
                   ex.size(), whole.keys().size() - (f.no_intercept ? 0 : 1), top, grid.size(),
                   f.eps, f.cold_start ? "cold" : "warm",
                   f.folds > 0 ? fmt::format(", {}-fold cross-validation", f.folds) : "");
    const Stopwatch clock;
    std::vector<PathPoint> points = fit_path(whole, grid, o, f.cold_start, nullptr);
    const double path_s = clock.seconds();
    std::optional<train::CrossValidation> cv;
    std::vector<double> acc_mean, acc_sd;
    if (f.folds > 0) {
        const FoldErrors errors = cross_validate_path(f, ex, grid, o);
        cv = train::cross_validate(errors.logloss);
        train::mean_sd(errors.accuracy, acc_mean, acc_sd);
    }
    const train::CrossValidation* c = cv ? &*cv : nullptr;
    for (PathPoint& p : points) p.model.hashed = f.hash_features;
    if (!f.out.empty())
        core::write_file_atomically(
            f.out, fmt::format("{} {}, {} examples, lambda_max {:.17g}, intercept {}, folds {}, "
                               "seed {}, tol {:g}, {} starts\n",
                               kPathMarker, f.data, ex.size(), top, f.no_intercept ? "no" : "yes",
                               f.folds, f.seed, f.tol, f.cold_start ? "cold" : "warm") +
                       table(points, c, acc_mean, acc_sd, true));
    const PathPoint* chosen = nullptr;
    if (!f.model.empty()) {
        chosen = &points[f.select == "min" ? c->best : c->one_se];
        write_model(f.model, chosen->model);
    }
    const std::string lines = table(points, c, acc_mean, acc_sd, false);
    std::fwrite(lines.data(), 1, lines.size(), stdout);
    std::uint64_t iterations = 0, capped = 0;
    for (const PathPoint& p : points) {
        iterations += p.iterations;
        capped += p.stop == NewtonStop::kConverged ? 0 : 1;
    }
    fmt::print(
        "rotor: path of {} lambdas from lambda_max {:.6g}: {:.3f} s, {} Newton iterations; "
        "{}\n",
        points.size(), top, path_s, iterations,
        capped == 0 ? fmt::format("every lambda converged (--tol {:g})", f.tol)
                    : fmt::format("{} lambdas NOT converged (--iterations {} or a stalled "
                                  "line search; see the converged column)",
                                  capped, f.iterations));
    if (c != nullptr) {
        const auto said = [&](std::uint32_t k) {
            return fmt::format("{:.6g} (cv logloss {:.6g} +- {:.3g}, accuracy {:.4f}, {} nonzeros)",
                               points[k].lambda, c->mean[k], c->sd[k], acc_mean[k],
                               points[k].nonzeros);
        };
        fmt::print("rotor: {}-fold cross-validation (seed {}): lambda.min {}, lambda.1se {}\n",
                   f.folds, f.seed, said(c->best), said(c->one_se));
    }
    if (!f.out.empty()) fmt::print("rotor: path written to {}\n", f.out);
    if (chosen != nullptr)
        fmt::print("rotor: the model at lambda.{} = {:.6g} written to {}\n", f.select,
                   chosen->lambda, f.model);
}

}  // namespace

std::vector<PathPoint> fit_path(Shard& train, const std::vector<double>& grid,
                                const NewtonOptions& options, bool cold, Shard* heldout,
                                const PathVisitor& on_point) {
    NewtonOptions o = options;
    std::optional<NewtonSolver> solver;
    std::vector<PathPoint> points;
    for (const double lambda : grid) {
        const Stopwatch clock;
        if (cold || !solver) {
            o.lambda = lambda;
            solver.emplace(train, o);
        } else {
            solver->set_lambda(lambda);
        }
        const NewtonStop stop = solver->run();
        PathPoint p = point_of(train, *solver, lambda, stop);
        p.seconds = clock.seconds();
        std::span<const double> margins;
        if (heldout != nullptr) {
            set_margins(*heldout, train.keys(), solver->weights());
            margins = heldout->margins();
        }
        if (on_point) on_point(p, margins);
        points.push_back(std::move(p));
    }
    return points;
}

void add_path_command(CLI::App& logreg, comm::Communicator* world) {
    auto f = std::make_shared<PathFlags>();
    auto* c = logreg.add_subcommand(
        "path",
        "Fit lambdas from lambda_max down to eps * lambda_max (newton, each warm started from "
        "the last), with K-fold cross-validation choosing lambda (--folds)");
    c->add_option("--data,-d", f->data,
                  "Training examples: LIBSVM/svmlight (gzip allowed) or the binary form of "
                  "`rotor logreg build`")
        ->required();
    c->add_option("--out,-o", f->out,
                  "The path file (TSV: the table, then each lambda's intercept and weights)");
    c->add_option("--model,-m", f->model,
                  "Write the model at the lambda --select chooses (needs --folds)");
    c->add_flag("--overwrite", f->overwrite,
                "Replace an earlier output of rotor at --out and --model");
    c->add_option("--n-lambdas", f->n_lambdas, "Number of lambdas, log-spaced")
        ->capture_default_str();
    c->add_option("--eps", f->eps, "The smallest lambda over lambda_max")->capture_default_str();
    c->add_option("--folds", f->folds,
                  "K-fold cross-validation (stratified by label) of every lambda: held-out "
                  "logloss and accuracy (0: none)")
        ->capture_default_str();
    auto* select = c->add_option("--select", f->select,
                                 "The lambda --model gets: min (least mean held-out logloss, "
                                 "glmnet's lambda.min) or 1se (the largest within one standard "
                                 "error of it, lambda.1se)")
                       ->check(CLI::IsMember({"min", "1se"}))
                       ->capture_default_str();
    c->add_option("--seed", f->seed, "Seed of the folds and of newton's coordinate orders")
        ->capture_default_str();
    c->add_option("--tol", f->tol,
                  "Stop each lambda when the min-norm subgradient's 1-norm is <= tol times its "
                  "value at w = 0 (as train)")
        ->capture_default_str();
    c->add_option("--iterations", f->iterations, "At most this many Newton iterations a lambda")
        ->capture_default_str();
    c->add_flag("--cold-start", f->cold_start,
                "Fit every lambda from w = 0 instead of the last solution (a benchmark aid)");
    c->add_flag("--no-intercept", f->no_intercept, "Fit no intercept");
    c->add_flag("--hash-features", f->hash_features, "Features are strings, hashed to keys");
    c->add_flag("--quiet,-q", f->quiet, "No progress lines");
    c->callback([f, select, world] {
        if (world != nullptr && world->size() > 1)
            throw ConfigError("logreg path", "runs in one process (newton), not under mpiexec");
        run_path(*f, select->count() > 0);
    });
}

}  // namespace rotor::logreg
