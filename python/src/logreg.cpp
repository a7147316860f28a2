// rotor.LogisticRegression's native half: Examples from a CSR matrix and ±1 labels, the delayed
// block proximal gradient of `rotor logreg train` (train_delayed over a one-rank key-value
// layout: the rank is its own server and worker) run in segments between evaluations, and
// write_model/read_model.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "apps/logreg/checkpoint.h"
#include "apps/logreg/evaluation.h"
#include "apps/logreg/input.h"
#include "apps/logreg/metrics_log.h"
#include "apps/logreg/newton_run.h"
#include "apps/logreg/train_run.h"
#include "apps/logreg/trainer.h"
#include "comm/inprocess_communicator.h"
#include "comm/kv.h"
#include "common.h"
#include "core/base/error.h"
#include "core/base/timer.h"
#include "core/logreg/examples.h"
#include "core/logreg/model_file.h"
#include "core/logreg/shard.h"
#include "train/memory_plan.h"
#include "train/reporter.h"

namespace rotor::python {
namespace {

constexpr ParamNames kNames = {{"--lambda", "C"},
                               {"--blocks", "blocks"},
                               {"--eta", "eta"},
                               {"--max-step", "max_step"},
                               {"--threads", "n_jobs"},
                               {"--iterations", "max_iter"},
                               {"--solver", "solver"},
                               {"--curvature", "curvature"},
                               {"--seed", "random_state"},
                               {"--no-intercept", "fit_intercept"},
                               {"--eval-every", "evaluate_every"},
                               {"--max-memory", "max_memory"}};

py::dict state_of(const logreg::Model& m) {
    py::dict s;
    s["lambda"] = m.lambda;
    s["hashed"] = m.hashed;
    s["iterations"] = m.iterations;
    s["objective"] = m.objective;
    s["intercept"] = m.intercept;
    s["keys"] = to_numpy(m.keys);
    s["weights"] = to_numpy(m.weights);
    return s;
}

logreg::Model model_of(const py::dict& s) {
    logreg::Model m;
    m.lambda = s["lambda"].cast<double>();
    m.hashed = s["hashed"].cast<bool>();
    m.iterations = s["iterations"].cast<std::uint64_t>();
    m.objective = s["objective"].cast<double>();
    m.intercept = s["intercept"].cast<double>();
    const auto keys = s["keys"].cast<Array<std::uint64_t>>();
    const auto weights = s["weights"].cast<Array<double>>();
    m.keys.assign(keys.data(), keys.data() + keys.size());
    m.weights.assign(weights.data(), weights.data() + weights.size());
    if (m.keys.size() != m.weights.size() || !std::is_sorted(m.keys.begin(), m.keys.end()))
        throw InputError("model state", "keys and weights do not match");
    return m;
}

/// Calls f(i, keys, values) for each CSR row i (scipy's arrays read in place, checked in one
/// pass without the GIL): its stored entries as keys column + 1 (LIBSVM's 1-based feature
/// numbers, so that a model reads the same data as a file) and values as doubles.
template <class F>
void each_row(const py::array& indptr, const py::array& indices, const py::array& values,
              std::uint64_t columns, F&& f) {
    visit_csr(indptr, indices, values,
              [&]<class I, class V>(std::span<const I> off, std::span<const I> col,
                                    std::span<const V> val) {
                  py::gil_scoped_release release;
                  check_csr(off, col, val, columns, "X");
                  std::vector<std::uint64_t> keys;
                  std::vector<double> row;
                  for (std::size_t i = 0; i + 1 < off.size(); ++i) {
                      const auto b = static_cast<std::size_t>(off[i]),
                                 e = static_cast<std::size_t>(off[i + 1]);
                      keys.clear();
                      row.clear();
                      for (std::size_t j = b; j < e; ++j) {
                          keys.push_back(static_cast<std::uint64_t>(col[j]) + 1);
                          row.push_back(static_cast<double>(val[j]));
                      }
                      f(i, std::span<const std::uint64_t>(keys), std::span<const double>(row));
                  }
              });
}

/// Example i: CSR row i (each_row), label ±1 (checked in Python).
logreg::Examples examples_of(const py::array& indptr, const py::array& indices,
                             const py::array& values, std::uint64_t columns,
                             const Array<std::int64_t>& labels) {
    logreg::Examples ex;
    const auto lab = view(labels);
    each_row(indptr, indices, values, columns,
             [&](std::size_t i, std::span<const std::uint64_t> keys, std::span<const double> v) {
                 ex.add(static_cast<int>(lab[i]), keys, v);
             });
    return ex;
}

/// fit's `resume` as `rotor logreg train --resume`: the checkpoint's settings where a parameter
/// is None (the command line's flags not given), the parameters given compared with them (refused
/// by name), and the settings no parameter of this estimator sets (--delay, --hash-features,
/// --block-file) refused unless they are the ones it trains with. The total to reach: max_iter,
/// or the checkpoint's. `o` becomes the run's options.
void apply_checkpoint(const logreg::Checkpoint& c, const py::dict& p, const std::string& resume,
                      logreg::DelayedOptions& o, bool& intercept, std::string& curvature,
                      std::uint64_t& iterations) {
    const logreg::CheckpointSettings& theirs = c.settings;
    std::string other;
    if (theirs.delay != "0") other = fmt::format("--delay {}", theirs.delay);
    if (theirs.hashed) other = "--hash-features";
    if (!theirs.block_file.empty()) other = "--block-file";
    if (!other.empty())
        throw ConfigError("--resume",
                          fmt::format("{} was trained with {}, which LogisticRegression does not "
                                      "take; resume it with `rotor logreg train --resume`",
                                      resume, other));
    logreg::CheckpointSettings ours = theirs;
    ours.lambda = o.prox.lambda;
    ours.seed = o.prox.seed;
    ours.intercept = intercept;
    if (!p["blocks"].is_none()) ours.blocks = o.prox.blocks;
    if (!p["eta"].is_none()) ours.eta = o.prox.eta;
    if (!p["curvature"].is_none()) ours.curvature = curvature;
    if (!p["max_step"].is_none()) ours.max_step = o.prox.max_step;
    iterations = p["max_iter"].is_none() ? theirs.iterations : p["max_iter"].cast<std::uint64_t>();
    std::vector<train::ResumeSetting> settings = logreg::resume_settings(ours, theirs);
    for (train::ResumeSetting& s : settings) {  // C as the parameter has it: 1/λ
        if (s.flag == "--lambda") {
            s.ours = fmt::format("{:.17g}", 1 / ours.lambda);
            s.theirs = fmt::format("{:.17g}", 1 / theirs.lambda);
        }
    }
    check_resume(settings, c.state.iterations_done, iterations, resume, "--iterations");
    o.prox.lambda = theirs.lambda;
    o.prox.blocks = theirs.blocks;
    o.prox.seed = theirs.seed;
    o.prox.eta = theirs.eta;
    o.prox.max_step = theirs.max_step;
    o.prox.curvature =
        theirs.curvature == "local" ? logreg::Curvature::kLocal : logreg::Curvature::kBound;
    o.filters.seed = o.prox.seed;
    curvature = theirs.curvature;
    intercept = theirs.intercept;
}

/// The block proximal gradient as `rotor logreg train --solver prox` runs it on one process
/// (apps/logreg/train_run.cpp, train_segments): segments between evaluations and checkpoints
/// (the evaluations' --tol rule decides convergence), checkpoints written and resumed by the
/// command line's code (apps/logreg/checkpoint.h). Returns the model, the iterations done and
/// whether the rule held; the records go to `lines`.
struct ProxRun {
    logreg::Model model;
    std::uint64_t done = 0;
    bool converged = false;
};

ProxRun train_prox(const logreg::Examples& ex, const py::dict& p, const CheckpointParams& ck,
                   logreg::DelayedOptions o, bool auto_blocks, std::string curvature,
                   std::vector<std::string>& lines, std::uint64_t& resumed_at) {
    const double tol = p["tol"].cast<double>();
    const bool verbose = p["verbose"].cast<bool>();
    bool intercept = p["fit_intercept"].cast<bool>();
    std::uint64_t iterations = 0;
    std::optional<logreg::Checkpoint> resume;
    if (!ck.resume.empty()) {
        resume = logreg::read_checkpoint(ck.resume);
        apply_checkpoint(*resume, p, ck.resume, o, intercept, curvature, iterations);
    }
    // The data's fingerprint, as `logreg train` takes it of the file it read (LIBSVM's keys).
    logreg::DataFingerprint print;
    if (ck.writes() || resume) print = logreg::fingerprint(ex);
    if (resume) logreg::check_same_data(resume->data, print, ck.resume, "X");
    const std::optional<std::uint64_t> max_iter =
        p["max_iter"].is_none() ? std::nullopt
                                : std::optional<std::uint64_t>(p["max_iter"].cast<std::uint64_t>());
    const std::optional<std::uint64_t> eval_every =
        p["evaluate_every"].is_none()
            ? std::nullopt
            : std::optional<std::uint64_t>(p["evaluate_every"].cast<std::uint64_t>());
    ProxRun run;
    double time_s = 0, eval_s = 0;
    std::uint64_t since = 0;  // block iterations since the last record, and their seconds
    double since_s = 0;
    std::optional<train::TerminalReporter> terminal;  // verbose: the command line's progress
    if (verbose) terminal.emplace(stdout, logreg::progress_schema(false));
    py::gil_scoped_release release;
    const SignalCheck check;
    logreg::Shard part(ex, intercept);
    if (!resume && auto_blocks) o.prox.blocks = logreg::auto_blocks(part.keys().size(), o.threads);
    const std::uint64_t pass = o.prox.blocks;
    if (!resume) iterations = max_iter ? *max_iter : logreg::kDefaultPasses * pass;
    const std::uint64_t every = eval_every ? *eval_every : tol > 0 ? logreg::kEvalPasses * pass : 0;
    comm::InProcessGroup one(1);
    comm::Communicator& world = one.at(0);
    const comm::KvLayout layout = comm::KvLayout::even({0}, {0});
    logreg::DelayedStart start;
    if (resume) {
        logreg::restore_state(resume->state, &part, 0, start);
        run.done = resumed_at = resume->state.iterations_done;
        time_s = resume->state.time_s;
        resume.reset();
    }
    logreg::CheckpointSettings settings;  // what a checkpoint of this run records
    settings.lambda = o.prox.lambda;
    settings.blocks = o.prox.blocks;
    settings.seed = o.prox.seed;
    settings.eta = o.prox.eta;
    settings.max_step = o.prox.max_step;
    settings.curvature = curvature;
    settings.intercept = intercept;
    settings.iterations = iterations;
    logreg::DelayedResult r;  // as the server holds it when no iteration is left to run
    r.server_weights = start.server_weights;
    std::optional<logreg::Evaluation> last;
    const double zero = logreg::subgradient_at_zero(world, &part, o.prox.lambda);
    const auto next_stop = [&](std::uint64_t step) {
        return step == 0 ? iterations : std::min(iterations, (run.done / step + 1) * step);
    };
    if (run.done > 0 && tol > 0 && every > 0 && run.done % every == 0) {
        // As the command line: resumed at an evaluation's iteration, the rule is tested there
        // (not recorded again), and the run ends if it held.
        last = logreg::evaluate(world, &part, r, o.prox, nullptr, true);
        run.converged = logreg::subgradient_converged(last->subgradient, zero, tol);
        if (!run.converged) last.reset();
    }
    while (run.done < iterations && !run.converged) {
        logreg::DelayedOptions seg = o;
        seg.first = run.done;
        seg.iterations = std::min(next_stop(every), next_stop(ck.writes() ? ck.every : 0));
        Stopwatch clock;
        r = logreg::train_delayed(world, layout, &part, seg, start);
        const double seconds = clock.seconds();
        time_s += seconds;
        since += seg.iterations - run.done;
        since_s += seconds;
        run.done = seg.iterations;
        start.server_weights = r.server_weights;
        start.worker_weights = r.worker_weights;
        last.reset();
        if ((every > 0 && run.done % every == 0) || run.done == iterations) {
            Stopwatch eval;
            last = logreg::evaluate(world, &part, r, o.prox, nullptr, true);
            eval_s += eval.seconds();
            run.converged = logreg::subgradient_converged(last->subgradient, zero, tol);
            logreg::MetricsRecord record =
                logreg::evaluation_record(*last, run.done, time_s, eval_s);
            record.emplace_back("subgradient_ratio", last->subgradient / zero);
            record.emplace_back("converged", run.converged ? 1 : 0);
            lines.push_back(logreg::metrics_json(record));
            if (terminal) {  // as `logreg train`: examples of the passes since the last record
                const double passes = double(since) / double(pass);
                terminal->on_iteration(
                    logreg::progress_record(
                        record, static_cast<std::uint64_t>(passes * double(ex.size())), since_s),
                    static_cast<std::uint32_t>(iterations));
            }
            since = 0;
            since_s = 0;
        }
        if (ck.writes() && (run.done % ck.every == 0 || run.done == iterations || run.converged)) {
            if (!last) last = logreg::evaluate(world, &part, r, o.prox, nullptr, false);
            const auto margins = part.margins();
            logreg::write_checkpoint(
                ck.dir, world, settings, print,
                logreg::checkpoint_state(last->model,
                                         std::vector<double>(margins.begin(), margins.end()),
                                         run.done, time_s));
        }
        check();
    }
    if (!last) last = logreg::evaluate(world, &part, r, o.prox, nullptr, false);
    run.model = std::move(last->model);
    return run;
}

py::tuple fit(const py::array& indptr, const py::array& indices, const py::array& values,
              std::uint64_t columns, const Array<std::int64_t>& labels, const py::dict& p,
              py::list& sink) {
    py::tuple result;
    std::vector<std::string> lines;
    run_fit(
        [&] {
            logreg::DelayedOptions o;
            o.prox.lambda = 1.0 / p["C"].cast<double>();
            if (!(o.prox.lambda > 0) || !std::isfinite(o.prox.lambda))
                throw ConfigError("--lambda", "must be a positive finite number");
            // None: the command line's defaults (docs/logreg.md, "Defaults").
            const bool auto_blocks = p["blocks"].is_none();
            o.prox.blocks = auto_blocks ? 1 : p["blocks"].cast<std::uint32_t>();
            o.prox.seed = p["random_state"].cast<std::uint64_t>();
            o.prox.eta = p["eta"].is_none() ? 1.0 : p["eta"].cast<double>();
            const std::string curvature =
                p["curvature"].is_none() ? "local" : p["curvature"].cast<std::string>();
            o.prox.curvature =
                curvature == "local" ? logreg::Curvature::kLocal : logreg::Curvature::kBound;
            o.prox.max_step = !p["max_step"].is_none()   ? p["max_step"].cast<double>()
                              : p["curvature"].is_none() ? 1.0
                                                         : 0.0;
            o.threads = resolve_threads(p["n_jobs"].cast<int>());
            o.filters.seed = o.prox.seed;
            const double tol = p["tol"].cast<double>();
            const bool intercept = p["fit_intercept"].cast<bool>();
            const CheckpointParams ck(p);
            if (o.prox.blocks < 1) throw ConfigError("--blocks", "must be >= 1");
            if (!(o.prox.eta > 0 && o.prox.eta <= 1))
                throw ConfigError("--eta", "must be in (0, 1]");
            if (!(o.prox.max_step >= 0)) throw ConfigError("--max-step", "must be >= 0");
            // The command line's rule (apps/logreg/newton_run.h): newton unless a parameter of
            // the block proximal gradient (checkpoints included) is set or solver="prox".
            logreg::TrainFlags f;
            f.solver = p["solver"].cast<std::string>();
            f.options = o;
            f.tol = tol;
            f.quiet = !p["verbose"].cast<bool>();  // train_newton's progress lines
            for (const char* name : {"blocks", "curvature", "max_step", "eta", "evaluate_every"})
                if (!p[name].is_none())
                    f.given.emplace_back(name == std::string("blocks")      ? "--blocks"
                                         : name == std::string("curvature") ? "--curvature"
                                         : name == std::string("max_step")  ? "--max-step"
                                         : name == std::string("eta")       ? "--eta"
                                                                            : "--eval-every");
            if (ck.every > 0) f.given.emplace_back("--checkpoint-every");
            if (!ck.resume.empty()) f.given.emplace_back("--resume");
            if (!p["max_iter"].is_none()) {
                f.options.iterations = p["max_iter"].cast<std::uint64_t>();
                f.given.emplace_back("--iterations");
            }
            const bool newton = logreg::use_newton(f, 1);
            ck.prepare();
            // The memory plan of `logreg train` in one process (its own server, worker and rank
            // 0), from the matrix's shape: refused before the examples are copied.
            logreg::PlanInputs plan;
            plan.count.examples = indptr.size() > 0 ? indptr.size() - 1 : 0;
            plan.count.nonzeros = static_cast<std::uint64_t>(values.size());
            plan.all_examples = plan.count.examples;
            plan.all_keys = std::min<std::uint64_t>(plan.count.nonzeros, columns) + 1;
            plan.server = true;
            plan.rank0 = true;
            plan.blocks = o.prox.blocks;
            plan.threads = o.threads;
            train::check_memory(logreg::estimate_memory(plan),
                                train::memory_limit(p["max_memory"].cast<std::string>()),
                                "raise max_memory");
            const logreg::Examples ex = examples_of(indptr, indices, values, columns, labels);
            logreg::Model model;
            bool converged = false;
            std::uint64_t resumed_at = 0;
            if (newton) {
                py::gil_scoped_release release;
                logreg::Shard part(ex, intercept);
                comm::InProcessGroup one(1);
                logreg::NewtonRun run = logreg::train_newton(
                    f, one.at(0), part, nullptr,
                    [&lines](std::uint64_t, const std::string& json) { lines.push_back(json); });
                model = std::move(run.model);
                model.iterations = run.iterations;
                converged = run.converged;
            } else {
                ProxRun run = train_prox(ex, p, ck, o, auto_blocks, curvature, lines, resumed_at);
                model = std::move(run.model);
                model.iterations = run.done;
                converged = run.converged;
            }
            result = py::make_tuple(state_of(model), converged, resumed_at);
        },
        kNames, lines, sink);
    return result;
}

/// x_iᵀw + intercept of each CSR row (keys column + 1).
py::array_t<double> decision(const py::dict& state, const py::array& indptr,
                             const py::array& indices, const py::array& values,
                             std::uint64_t columns) {
    py::array_t<double> out(std::max<py::ssize_t>(indptr.size() - 1, 0));
    translate_errors(
        [&] {
            const logreg::Model m = model_of(state);
            double* y = out.mutable_data();
            each_row(indptr, indices, values, columns,
                     [&](std::size_t i, std::span<const std::uint64_t> keys,
                         std::span<const double> v) { y[i] = m.margin(keys, v); });
        },
        {});
    return out;
}

void save(const py::dict& state, const std::string& path) {
    translate_errors([&] { logreg::write_model(path, model_of(state)); }, {});
}

py::dict load(const std::string& path) {
    py::dict s;
    translate_errors([&] { s = state_of(logreg::read_model(path)); }, {});
    return s;
}

}  // namespace

void add_logreg(py::module_& m) {
    m.def("logreg_fit", &fit);
    m.def("logreg_decision", &decision);
    m.def("logreg_save", &save);
    m.def("logreg_load", &load);
}

}  // namespace rotor::python
