// rotor.RICA's native half: the observations from a dense numpy array, the trainer of `rotor rica
// train` (RowWorker and run_segment over a one-rank key-value layout: the rank is its own server
// and worker) run in segments between evaluations with the command line's stopping rule, and
// write_model/read_model.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "apps/rica/checkpoint.h"
#include "apps/rica/trainer.h"
#include "comm/inprocess_communicator.h"
#include "common.h"
#include "core/base/error.h"
#include "core/base/timer.h"
#include "core/io/atomic_file.h"
#include "core/rica/model_file.h"
#include "train/memory_plan.h"
#include "train/record.h"

namespace rotor::python {
namespace {

constexpr ParamNames kNames = {
    {"--components", "n_components"},     {"--lambda", "alpha"},          {"--eta", "eta"},
    {"--admm-iterations", "admm_iter"},   {"--block-rows", "block_rows"}, {"--threads", "n_jobs"},
    {"--iterations", "max_iter"},         {"--solver", "solver"},         {"--rho", "rho"},
    {"--inner-iterations", "inner_iter"}, {"--max-memory", "max_memory"}};

py::dict state_of(const rica::Model& m) {
    py::dict s;
    s["components"] = m.components;
    s["dimension"] = m.dimension;
    s["lambda"] = m.lambda;
    s["iterations"] = m.iterations;
    s["objective"] = m.objective;
    s["time_s"] = m.time_s;
    s["w"] = to_numpy(m.w);
    return s;
}

rica::Model model_of(const py::dict& s) {
    rica::Model m;
    m.components = s["components"].cast<std::size_t>();
    m.dimension = s["dimension"].cast<std::size_t>();
    m.lambda = s["lambda"].cast<double>();
    m.iterations = s["iterations"].cast<std::uint64_t>();
    m.objective = s["objective"].cast<double>();
    m.time_s = s["time_s"].cast<double>();
    const auto w = s["w"].cast<Array<double>>();
    m.w.assign(w.data(), w.data() + w.size());
    if (m.w.size() != m.components * m.dimension)
        throw InputError("model state", "w is not components x dimension");
    return m;
}

py::tuple fit(const Array<double>& x, std::size_t n, std::size_t p, const py::dict& params,
              py::list& sink) {
    py::tuple result;
    std::vector<std::string> lines;
    run_fit(
        [&] {
            rica::TrainerOptions o;
            o.components = params["n_components"].cast<std::size_t>();
            o.lambda = params["alpha"].cast<double>();
            // One process holds every row: auto is ADMM on all of W, as `rotor rica train`.
            o.solver = params["solver"].cast<std::string>() == "prox" ? rica::Solver::kProx
                                                                      : rica::Solver::kAdmm;
            o.rho = params["rho"].cast<double>();
            o.inner_iterations = params["inner_iter"].cast<int>();
            o.eta = params["eta"].cast<double>();
            o.admm_iterations = params["admm_iter"].cast<int>();
            o.block_rows = params["block_rows"].cast<std::size_t>();
            o.seed = params["random_state"].cast<std::uint64_t>();
            o.threads = resolve_threads(params["n_jobs"].cast<int>());
            const std::uint64_t iterations = params["max_iter"].cast<std::uint64_t>();
            const std::uint64_t every = params["evaluate_every"].cast<std::uint64_t>();
            const double tol = params["tol"].cast<double>();
            const std::string max_memory = params["max_memory"].cast<std::string>();
            const bool verbose = params["verbose"].cast<bool>();
            const CheckpointParams ck(params);
            if (o.components < 1) throw ConfigError("--components", "must be >= 1");
            if (!(o.lambda > 0) || !std::isfinite(o.lambda))
                throw ConfigError("--lambda", "must be > 0");
            if (!(o.eta > 0)) throw ConfigError("--eta", "must be > 0");
            if (o.admm_iterations < 1) throw ConfigError("--admm-iterations", "must be >= 1");
            if (o.block_rows < 1) throw ConfigError("--block-rows", "must be >= 1");
            if (every < 1) throw ConfigError("--eval-every", "must be >= 1");
            // The checkpoint is one file, as the command line's <out>.checkpoint.
            if (ck.writes()) core::check_output_parent(ck.dir, "--checkpoint-dir");
            // As `rica train --resume`: the same components and lambda, data of its dimension.
            std::optional<rica::Model> resume;
            if (!ck.resume.empty()) {
                resume = rica::read_checkpoint(ck.resume, o.components, o.lambda, iterations);
                rica::check_dimension(*resume, ck.resume, "X", p);
            }
            // The memory plan of `rica train` with one worker holding every row.
            train::check_memory(rica::estimate_memory(n, p, o.components, o),
                                train::memory_limit(max_memory),
                                "use fewer components (n_components) or raise max_memory");
            rica::Dense d;
            d.n = n;
            d.p = p;
            d.x.assign(x.data(), x.data() + x.size());
            rica::Model model;
            bool converged = false;
            std::uint64_t done = resume ? resume->iterations : 0;
            const std::uint64_t resumed_at = done;
            double time_s = resume ? resume->time_s : 0;
            {
                py::gil_scoped_release release;
                const SignalCheck check;
                const std::vector<double> c = rica::gram(d);
                const rica::Spectrum spectrum = rica::Spectrum::of(c, p);
                const auto [b0, b1] = rica::worker_blocks(o.components, o.block_rows, 0, 1);
                std::vector<double> w, metric;
                if (resume) {
                    w = std::move(resume->w);
                    metric = std::move(resume->metric);
                    resume.reset();
                } else {
                    w = rica::initial_rows(o.seed, 0, o.components, p, o.components);
                }
                rica::RowWorker rows(d, c, spectrum, o, b0, b1, std::move(w), std::move(metric));
                comm::InProcessGroup one(1);
                const comm::KvLayout layout = comm::KvLayout::even({0}, {0});
                const train::RecordSchema schema = rica::record_schema();
                double previous = NAN;
                // `rotor rica train`'s segments (cut at evaluations and checkpoints), records and
                // stopping rule (apps/rica/train_run.cpp).
                for (bool stop = false; !stop;) {
                    std::uint64_t steps = std::min(every - done % every, iterations - done);
                    if (ck.writes()) steps = std::min(steps, ck.every - done % ck.every);
                    if (done >= iterations) steps = 0;
                    Stopwatch clock;
                    const rica::SegmentResult r =
                        rica::run_segment(one.at(0), layout, &rows, p, steps, o);
                    const double seconds = clock.seconds();
                    time_s += seconds;
                    done += steps;
                    const double smooth =
                        rica::smooth_terms(rica::s_of(r.pulled, p), c, p, false).value;
                    model.objective = smooth + o.lambda * r.pulled.back();
                    stop = done >= iterations;
                    if (steps > 0 && (done % every == 0 || stop)) {
                        const train::Record rec = rica::evaluation_record(
                            done, steps, seconds, time_s, n, model.objective, smooth,
                            r.pulled.back(), previous);
                        const double change = *rec.get("relative_change");
                        lines.push_back(train::record_json(rec, schema));
                        if (verbose) {  // the command line's progress line, on stdout
                            std::fputs(rica::progress_line(rec, iterations).c_str(), stdout);
                            std::fflush(stdout);
                        }
                        converged = tol > 0 && change >= 0 && change < tol;
                        stop = stop || converged;
                        previous = model.objective;
                    }
                    model.components = o.components;
                    model.dimension = p;
                    model.lambda = o.lambda;
                    model.iterations = done;
                    model.time_s = time_s;
                    if (ck.writes() && (done % ck.every == 0 || stop)) {
                        model.w = rows.w();
                        model.metric = rows.metric();
                        rica::write_model(ck.dir, model);
                        model.metric.clear();
                    }
                    check();
                }
                model.w = rows.w();
            }
            result = py::make_tuple(state_of(model), converged, resumed_at);
        },
        kNames, lines, sink);
    return result;
}

void save(const py::dict& state, const std::string& path) {
    translate_errors([&] { rica::write_model(path, model_of(state)); }, {});
}

py::dict load(const std::string& path) {
    py::dict s;
    translate_errors([&] { s = state_of(rica::read_model(path)); }, {});
    return s;
}

}  // namespace

void add_rica(py::module_& m) {
    m.def("rica_fit", &fit);
    m.def("rica_save", &save);
    m.def("rica_load", &load);
}

}  // namespace rotor::python
