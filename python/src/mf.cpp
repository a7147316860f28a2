// rotor.MF's native half: Ratings from (user, item, rating) arrays, mf::make_trainer (the
// trainer of `rotor mf train`, one process) on train::run_iterations, the model as arrays,
// write_model/read_model, and predictions through ModelView.
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "apps/mf/trainer.h"
#include "comm/inprocess_communicator.h"
#include "common.h"
#include "core/base/error.h"
#include "core/mf/model_file.h"
#include "core/mf/ratings.h"
#include "train/loop.h"
#include "train/memory_plan.h"

namespace rotor::python {
namespace {

constexpr ParamNames kNames = {{"--rank", "n_components"},
                               {"--lambda", "alpha"},
                               {"--lambda-bias", "alpha_bias"},
                               {"--lambda-form", "lambda_form"},
                               {"--solver", "solver"},
                               {"--inner", "inner"},
                               {"--eta", "eta"},
                               {"--blocks", "blocks"},
                               {"--iterations", "max_iter"},
                               {"--max-memory", "max_memory"},
                               {"--threads", "n_jobs"}};

/// Triples checked in Python (indices in range, finite values, no repeated pair).
std::vector<mf::RatingTriple> triples_of(const Array<std::int64_t>& users,
                                         const Array<std::int64_t>& items,
                                         const Array<double>& values) {
    std::vector<mf::RatingTriple> t(static_cast<std::size_t>(values.size()));
    const auto u = view(users);
    const auto i = view(items);
    const auto v = view(values);
    for (std::size_t r = 0; r < t.size(); ++r)
        t[r] = {static_cast<mf::UserId>(u[r]), static_cast<mf::ItemId>(i[r]),
                static_cast<float>(v[r])};
    return t;
}

mf::IdMap index_ids(std::uint32_t n) {
    mf::IdMap ids;
    for (std::uint32_t i = 0; i < n; ++i) ids.insert(std::to_string(i));
    return ids;
}

py::array_t<float> factors_array(const mf::Factors& f) {
    py::array_t<float> a({static_cast<py::ssize_t>(f.rows()), static_cast<py::ssize_t>(f.k())});
    std::copy(f.values().begin(), f.values().end(), a.mutable_data());
    return a;
}

mf::Factors factors_of(const py::handle& h, const char* what) {
    const auto a = h.cast<Array<float>>();
    if (a.ndim() != 2) throw InputError("model state", fmt::format("{} is not 2-d", what));
    mf::Factors f(static_cast<std::uint32_t>(a.shape(0)), static_cast<std::uint32_t>(a.shape(1)));
    std::copy(a.data(), a.data() + a.size(), f.values().begin());
    return f;
}

py::dict state_of(const mf::Model& m) {
    py::dict s;
    s["solver"] = m.solver;
    s["lambda"] = m.params.lambda;
    s["lambda_bias"] = m.params.lambda_bias;
    s["lambda_form"] = m.params.form == mf::LambdaForm::kPlain ? "plain" : "weighted";
    s["bias"] = m.params.bias;
    s["iterations"] = m.iterations;
    s["seed"] = m.seed;
    s["train_path"] = m.train_path;
    s["mu"] = m.mu;
    s["w"] = factors_array(m.w);
    s["h"] = factors_array(m.h);
    s["row_bias"] = to_numpy(m.row_bias);
    s["col_bias"] = to_numpy(m.col_bias);
    s["users"] = std::vector<std::string>(m.users.names().begin(), m.users.names().end());
    s["items"] = std::vector<std::string>(m.items.names().begin(), m.items.names().end());
    s["seen_offsets"] = to_numpy(m.seen_offsets);
    s["seen_items"] = to_numpy(m.seen_items);
    return s;
}

mf::Model model_of(const py::dict& s) {
    mf::Model m;
    m.solver = s["solver"].cast<std::string>();
    m.params.lambda = s["lambda"].cast<double>();
    m.params.lambda_bias = s["lambda_bias"].cast<double>();
    m.params.form = s["lambda_form"].cast<std::string>() == "plain" ? mf::LambdaForm::kPlain
                                                                    : mf::LambdaForm::kWeighted;
    m.params.bias = s["bias"].cast<bool>();
    m.iterations = s["iterations"].cast<std::uint32_t>();
    m.seed = s["seed"].cast<std::uint64_t>();
    m.train_path = s["train_path"].cast<std::string>();
    m.mu = s["mu"].cast<double>();
    m.w = factors_of(s["w"], "w");
    m.h = factors_of(s["h"], "h");
    m.row_bias = vector_of<float>(s["row_bias"]);
    m.col_bias = vector_of<float>(s["col_bias"]);
    for (const std::string& u : s["users"].cast<std::vector<std::string>>()) m.users.insert(u);
    for (const std::string& i : s["items"].cast<std::vector<std::string>>()) m.items.insert(i);
    m.seen_offsets = vector_of<std::uint64_t>(s["seen_offsets"]);
    m.seen_items = vector_of<std::uint32_t>(s["seen_items"]);
    m.check("model state");
    return m;
}

py::tuple fit(const Array<std::int64_t>& users, const Array<std::int64_t>& items,
              const Array<double>& values, std::uint32_t num_users, std::uint32_t num_items,
              const py::dict& p, const std::optional<py::tuple>& test) {
    py::tuple result;
    translate_errors(
        [&] {
            mf::TrainOptions o;
            o.solver = mf::parse_solver(p["solver"].cast<std::string>());
            o.rank = p["n_components"].cast<std::uint32_t>();
            o.objective.lambda = p["alpha"].cast<double>();
            o.objective.lambda_bias = p["alpha_bias"].cast<double>();
            const std::string form = p["lambda_form"].cast<std::string>();
            if (form != "plain" && form != "weighted")
                throw ConfigError("--lambda-form", "must be plain or weighted");
            o.objective.form = form == "plain" ? mf::LambdaForm::kPlain : mf::LambdaForm::kWeighted;
            o.objective.bias = p["bias"].cast<bool>();
            o.inner = p["inner"].cast<std::uint32_t>();
            o.eta = p["eta"].cast<double>();
            o.iterations = p["max_iter"].cast<std::uint32_t>();
            o.seed = p["random_state"].cast<std::uint64_t>();
            o.eval_every = p["evaluate_every"].cast<std::uint32_t>();
            o.deterministic = p["deterministic"].cast<bool>();
            o.blocks = p["blocks"].cast<int>();
            const int threads = resolve_threads(p["n_jobs"].cast<int>());
            const bool pin = p["pin"].cast<bool>();
            const std::string max_memory = p["max_memory"].cast<std::string>();
            const bool verbose = p["verbose"].cast<bool>();
            o.validate(1);
            const std::vector<mf::RatingTriple> t = triples_of(users, items, values);
            const mf::Ratings ratings = mf::Ratings::from_triples(num_users, num_items, t);
            std::optional<mf::TestRatings> test_ratings;
            if (test) {
                test_ratings.emplace();
                const auto tu = view((*test)[0].cast<Array<std::int64_t>>());
                const auto ti = view((*test)[1].cast<Array<std::int64_t>>());
                const auto tv = view((*test)[2].cast<Array<double>>());
                for (std::size_t r = 0; r < tv.size(); ++r) {
                    test_ratings->users.push_back(static_cast<std::uint32_t>(tu[r]));
                    test_ratings->items.push_back(static_cast<std::uint32_t>(ti[r]));
                    test_ratings->values.push_back(static_cast<float>(tv[r]));
                }
            }
            train::check_memory(mf::estimate_memory(ratings, o, 1, threads),
                                train::memory_limit(max_memory),
                                "use a smaller n_components or raise max_memory");
            Records records(mf::record_schema(test.has_value()), verbose);
            mf::Model model;
            {
                py::gil_scoped_release release;
                const SignalCheck check;
                sched::Runtime runtime(threads, pin_mode(pin));
                comm::InProcessGroup one(1);
                const mf::TrainerInputs in{ratings, test_ratings ? &*test_ratings : nullptr, o,
                                           runtime, one.at(0)};
                const std::unique_ptr<mf::Trainer> trainer = mf::make_trainer(in);
                train::Hooks hooks;
                hooks.after_iteration = [&check](const train::Record&) { check(); };
                train::LoopOptions loop;
                loop.last = o.iterations;
                loop.eval_every = o.eval_every;
                train::run_iterations(*trainer, loop, records, hooks);
                model = trainer->gather_model();
            }
            model.users = index_ids(num_users);
            model.items = index_ids(num_items);
            model.seen_offsets.assign(ratings.user_offsets().begin(), ratings.user_offsets().end());
            model.seen_items.assign(ratings.user_items().begin(), ratings.user_items().end());
            result = py::make_tuple(state_of(model), records.lines());
        },
        kNames);
    return result;
}

/// ModelView::predict for each (users[r], items[r]); indices beyond the model's rows are
/// unseen users or items (μ and the known bias).
py::array_t<double> predict(const py::dict& state, const Array<std::int64_t>& users,
                            const Array<std::int64_t>& items) {
    py::array_t<double> out(users.size());
    translate_errors(
        [&] {
            const mf::Model m = model_of(state);
            const mf::ModelView v = m.view();
            const auto u = view(users);
            const auto i = view(items);
            double* y = out.mutable_data();
            for (std::size_t r = 0; r < u.size(); ++r)
                y[r] =
                    v.predict(static_cast<std::uint32_t>(u[r]), static_cast<std::uint32_t>(i[r]));
        },
        {});
    return out;
}

void save(const py::dict& state, const std::string& path) {
    translate_errors([&] { mf::write_model(path, model_of(state)); }, {});
}

py::dict load(const std::string& path) {
    py::dict s;
    translate_errors([&] { s = state_of(mf::read_model(path)); }, {});
    return s;
}

}  // namespace

void add_mf(py::module_& m) {
    m.def("mf_fit", &fit);
    m.def("mf_predict", &predict);
    m.def("mf_save", &save);
    m.def("mf_load", &load);
}

}  // namespace rotor::python
