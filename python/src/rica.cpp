// rotor.RICA's native half: the observations from a dense numpy array, the trainer of `rotor rica
// train` (RowWorker and run_segment over a one-rank key-value layout: the rank is its own server
// and worker) run in segments between evaluations with the command line's stopping rule, and
// write_model/read_model.
#include <cmath>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "apps/rica/trainer.h"
#include "comm/inprocess_communicator.h"
#include "common.h"
#include "core/base/error.h"
#include "core/base/timer.h"
#include "core/rica/model_file.h"
#include "train/record.h"

namespace rotor::python {
namespace {

constexpr ParamNames kNames = {
    {"--components", "n_components"},    {"--lambda", "alpha"},          {"--eta", "eta"},
    {"--admm-iterations", "admm_iter"},  {"--block-rows", "block_rows"}, {"--threads", "n_jobs"},
    {"--iterations", "max_iter"},        {"--solver", "solver"},         {"--rho", "rho"},
    {"--inner-iterations", "inner_iter"}};

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

py::tuple fit(const Array<double>& x, std::size_t n, std::size_t p, const py::dict& params) {
    py::tuple result;
    translate_errors(
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
            if (o.components < 1) throw ConfigError("--components", "must be >= 1");
            if (!(o.lambda > 0) || !std::isfinite(o.lambda))
                throw ConfigError("--lambda", "must be > 0");
            if (!(o.eta > 0)) throw ConfigError("--eta", "must be > 0");
            if (o.admm_iterations < 1) throw ConfigError("--admm-iterations", "must be >= 1");
            if (o.block_rows < 1) throw ConfigError("--block-rows", "must be >= 1");
            if (every < 1) throw ConfigError("--eval-every", "must be >= 1");
            rica::Dense d;
            d.n = n;
            d.p = p;
            d.x.assign(x.data(), x.data() + x.size());
            std::vector<std::string> lines;
            rica::Model model;
            bool converged = false;
            {
                py::gil_scoped_release release;
                const SignalCheck check;
                const std::vector<double> c = rica::gram(d);
                const rica::Spectrum spectrum = rica::Spectrum::of(c, p);
                const auto [b0, b1] = rica::worker_blocks(o.components, o.block_rows, 0, 1);
                rica::RowWorker rows(d, c, spectrum, o, b0, b1,
                                     rica::initial_rows(o.seed, 0, o.components, p, o.components),
                                     {});
                comm::InProcessGroup one(1);
                const comm::KvLayout layout = comm::KvLayout::even({0}, {0});
                train::RecordSchema schema;
                schema.count_key = "observations";
                schema.rate_key = "observations_per_s";
                std::uint64_t done = 0;
                double time_s = 0, previous = NAN;
                // `rotor rica train`'s segments and stopping rule (apps/rica/train_run.cpp).
                do {
                    const std::uint64_t steps = std::min(every, iterations - done);
                    Stopwatch clock;
                    const rica::SegmentResult r =
                        rica::run_segment(one.at(0), layout, &rows, p, steps, o);
                    const double seconds = clock.seconds();
                    time_s += seconds;
                    done += steps;
                    const double smooth =
                        rica::smooth_terms(rica::s_of(r.pulled, p), c, p, false).value;
                    model.objective = smooth + o.lambda * r.pulled.back();
                    const double change = (previous - model.objective) / model.objective;
                    train::Record rec;
                    rec.iter = static_cast<std::uint32_t>(done);
                    rec.time_s = time_s;
                    rec.iteration_s = steps > 0 ? seconds / double(steps) : 0;
                    rec.processed = n;
                    rec.per_s = rec.iteration_s > 0 ? double(n) / rec.iteration_s : 0;
                    rec.set("objective", model.objective);
                    rec.set("reconstruction", smooth);
                    rec.set("l1", r.pulled.back());
                    rec.set("relative_change", change);
                    lines.push_back(train::record_json(rec, schema));
                    converged = tol > 0 && change >= 0 && change < tol;
                    previous = model.objective;
                    check();
                } while (done < iterations && !converged);
                model.components = o.components;
                model.dimension = p;
                model.lambda = o.lambda;
                model.iterations = done;
                model.time_s = time_s;
                model.w = rows.w();
            }
            py::list metrics;
            for (const std::string& l : lines) metrics.append(py::str(l));
            result = py::make_tuple(state_of(model), metrics, converged);
        },
        kNames);
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
