// rotor.Lasso's native half: RawData from a CSR design matrix, lasso::Trainer (the trainer of
// `rotor lasso train`, one process) iterated to the stopping rule, the model as arrays,
// write_model/read_model.
#include <optional>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "apps/lasso/checkpoint.h"
#include "apps/lasso/trainer.h"
#include "comm/inprocess_communicator.h"
#include "common.h"
#include "core/base/error.h"
#include "core/lasso/model_file.h"
#include "sched/topology.h"
#include "train/memory_plan.h"

namespace rotor::python {
namespace {

constexpr ParamNames kNames = {{"--lambda", "alpha"},
                               {"--schedule", "schedule"},
                               {"--parallel", "parallel"},
                               {"--candidates", "candidates"},
                               {"--rho", "rho"},
                               {"--eta", "eta"},
                               {"--tol", "tol"},
                               {"--stop", "stop"},
                               {"--max-iterations", "max_iter"},
                               {"--eval-every", "evaluate_every"},
                               {"--seed", "random_state"},
                               {"--no-intercept", "fit_intercept"},
                               {"--no-standardize", "standardize"},
                               {"--no-active-set", "active_set"},
                               {"--tile-rows", "tile_rows"},
                               {"--threads", "n_jobs"},
                               {"--max-memory", "max_memory"}};

py::dict state_of(const lasso::Model& m) {
    py::dict s;
    s["features"] = m.features;
    s["samples"] = m.samples;
    s["lambda"] = m.lambda;
    s["schedule"] = m.schedule;
    s["iterations"] = m.iterations;
    s["objective"] = m.objective;
    s["relative_gap"] = m.relative_gap;
    s["standardize"] = m.standardize;
    s["intercept_fitted"] = m.standardization.intercept;
    s["y_mean"] = m.standardization.y_mean;
    s["y_scale"] = m.standardization.y_scale;
    s["means"] = to_numpy(m.standardization.means);
    s["scales"] = to_numpy(m.standardization.scales);
    s["beta"] = to_numpy(m.beta);
    s["intercept"] = m.intercept;
    s["feature_names"] = m.feature_names;
    return s;
}

lasso::Model model_of(const py::dict& s) {
    lasso::Model m;
    m.features = s["features"].cast<std::uint32_t>();
    m.samples = s["samples"].cast<std::uint64_t>();
    m.lambda = s["lambda"].cast<double>();
    m.schedule = s["schedule"].cast<std::string>();
    m.iterations = s["iterations"].cast<std::uint32_t>();
    m.objective = s["objective"].cast<double>();
    m.relative_gap = s["relative_gap"].cast<double>();
    m.standardize = s["standardize"].cast<bool>();
    m.standardization.intercept = s["intercept_fitted"].cast<bool>();
    m.standardization.y_mean = s["y_mean"].cast<double>();
    m.standardization.y_scale = s["y_scale"].cast<double>();
    m.standardization.means = vector_of<double>(s["means"]);
    m.standardization.scales = vector_of<double>(s["scales"]);
    m.beta = vector_of<double>(s["beta"]);
    m.intercept = s["intercept"].cast<double>();
    m.feature_names = s["feature_names"].cast<std::vector<std::string>>();
    m.check("model state");
    return m;
}

/// The samples of a CSR matrix (scipy's arrays read in place, checked in one pass; indices
/// sorted within rows, as Python hands them over) and targets.
lasso::RawData raw_of(const py::array& indptr, const py::array& indices, const py::array& values,
                      std::uint32_t features, const Array<double>& y) {
    lasso::RawData raw;
    raw.features = features;
    visit_csr(indptr, indices, values, [&](auto off, auto col, auto val) {
        py::gil_scoped_release release;
        check_csr(off, col, val, features, "X");
        raw.row_offsets.assign(off.begin(), off.end());
        raw.cols.assign(col.begin(), col.end());
        raw.values.assign(val.begin(), val.end());
    });
    raw.targets.assign(y.data(), y.data() + y.size());
    return raw;
}

py::tuple fit(const py::array& indptr, const py::array& indices, const py::array& values,
              std::uint32_t features, const Array<double>& y, const py::dict& p, py::list& sink) {
    py::tuple result;
    std::optional<Records> records;
    run_fit(
        [&] {
            lasso::TrainOptions o;
            o.lambda = p["alpha"].cast<double>();
            o.schedule = lasso::parse_schedule(p["schedule"].cast<std::string>());
            o.strads.parallel = p["parallel"].cast<std::uint32_t>();
            o.strads.candidates = p["candidates"].cast<std::uint32_t>();
            o.strads.rho = p["rho"].cast<double>();
            o.strads.eta = p["eta"].cast<double>();
            o.tol = p["tol"].cast<double>();
            o.stop = lasso::parse_stop_rule(p["stop"].cast<std::string>());
            o.max_iterations = p["max_iter"].cast<std::uint32_t>();
            o.standardize.intercept = p["fit_intercept"].cast<bool>();
            o.standardize.standardize = p["standardize"].cast<bool>();
            o.active_set = p["active_set"].cast<bool>();
            o.seed = p["random_state"].cast<std::uint64_t>();
            o.eval_every = p["evaluate_every"].cast<std::uint32_t>();
            const int n_jobs = p["n_jobs"].cast<int>();
            int threads = resolve_threads(n_jobs);
            const bool pin = p["pin"].cast<bool>();
            const bool verbose = p["verbose"].cast<bool>();
            const std::string max_memory = p["max_memory"].cast<std::string>();
            const CheckpointParams ck(p);
            o.validate();
            ck.prepare();
            std::optional<lasso::Checkpoint> resume;
            std::uint32_t resumed_at = 0;  // the checkpoint's iterations (its state is freed)
            if (!ck.resume.empty()) {
                // As `lasso train --resume` with every setting given.
                resume = lasso::read_checkpoint(ck.resume);
                check_resume(lasso::resume_settings(o, resume->options),
                             resume->state.iterations_done, o.max_iterations, ck.resume,
                             "--max-iterations");
                const std::uint32_t target = o.max_iterations;
                o = resume->options;
                o.max_iterations = target;
                resumed_at = resume->state.iterations_done;
            }
            const auto entries = static_cast<std::uint64_t>(values.size());
            const std::uint64_t samples = indptr.size() > 0 ? indptr.size() - 1 : 0;
            if (n_jobs == 0) {  // None: chosen as `rotor lasso train` chooses without --threads
                threads =
                    lasso::choose_threads(entries, features, o, threads, sched::host_load_average())
                        .threads;
            }
            // The memory plan of `lasso train` in one process (the samples copied once, as from
            // the binary form): refused before the copy.
            train::check_memory(lasso::estimate_memory(entries, samples, features, false, 1,
                                                       threads, ck.writes() || resume, o),
                                train::memory_limit(max_memory), "raise max_memory");
            lasso::RawData raw = raw_of(indptr, indices, values, features, y);
            // The data's fingerprint, as `lasso train` takes it of the file it read.
            lasso::DataFingerprint print;
            if (ck.writes() || resume) print = lasso::fingerprint(raw);
            if (resume) lasso::check_same_data(resume->data, print, ck.resume, "X");
            records.emplace(lasso::record_schema(), verbose);
            lasso::Model model;
            bool converged = false;
            double lambda_max = 0;
            {
                py::gil_scoped_release release;
                const SignalCheck check;
                sched::Runtime runtime(threads, pin_mode(pin));
                comm::InProcessGroup one(1);
                lasso::Trainer t(std::move(raw), o, runtime, one.at(0));
                if (resume) {
                    t.restore(resume->state, 0);
                    resume->state = {};
                }
                lasso::fit(
                    t, &*records, [&t](train::Record& r) { t.evaluate_record(r); }, std::nullopt,
                    [&] {
                        // The last iteration too (converged or not), as `lasso train` writes.
                        const std::uint32_t i = t.iterations_done();
                        if (ck.due(i, o.max_iterations) || (ck.writes() && t.converged()))
                            lasso::write_checkpoint(ck.dir, t, o, print, one.at(0));
                        check();
                    });
                model = lasso::Model::from_standardized(t.coefficients().b, t.standardization());
                model.samples = samples;
                model.lambda = o.lambda;
                model.schedule = std::string(lasso::schedule_name(o.schedule));
                model.iterations = t.iterations_done();
                model.objective = t.last_evaluation().objective;
                model.relative_gap = t.last_evaluation().relative_gap;
                model.standardize = o.standardize.standardize;
                converged = t.converged();
                lambda_max = t.lambda_max();
            }
            result = py::make_tuple(state_of(model), converged, lambda_max, resumed_at);
        },
        kNames, records, sink);
    return result;
}

void save(const py::dict& state, const std::string& path) {
    translate_errors([&] { lasso::write_model(path, model_of(state)); }, {});
}

py::dict load(const std::string& path) {
    py::dict s;
    translate_errors([&] { s = state_of(lasso::read_model(path)); }, {});
    return s;
}

}  // namespace

void add_lasso(py::module_& m) {
    m.def("lasso_fit", &fit);
    m.def("lasso_save", &save);
    m.def("lasso_load", &load);
}

}  // namespace rotor::python
