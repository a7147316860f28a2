// rotor.MF's native half: Ratings from (user, item, rating) arrays, mf::make_trainer (the
// trainer of `rotor mf train`, one process) on train::run_iterations, the model as arrays,
// write_model/read_model, and predictions through ModelView.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "apps/mf/checkpoint.h"
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
                               {"--seed", "random_state"},
                               {"--deterministic", "deterministic"},
                               {"--no-bias", "bias"},
                               {"--max-memory", "max_memory"},
                               {"--threads", "n_jobs"}};

/// Calls f(row, value) for each element of the 1-d array `a` (of any stride), read as a double.
/// The dtypes are those the Python side hands over (float64, float32, int64, int32, uint64,
/// uint32 in native byte order; it converts the others).
template <class F>
void each_number(const py::array& a, F&& f) {
    const auto run = [&]<class T>(T*) {
        const auto v = a.unchecked<T, 1>();
        for (py::ssize_t r = 0; r < v.shape(0); ++r)
            f(static_cast<std::size_t>(r), static_cast<double>(v(r)));
    };
    const char kind = a.dtype().kind();
    const auto size = a.itemsize();
    if (kind == 'f' && size == 8) return run(static_cast<double*>(nullptr));
    if (kind == 'f' && size == 4) return run(static_cast<float*>(nullptr));
    if (kind == 'i' && size == 8) return run(static_cast<std::int64_t*>(nullptr));
    if (kind == 'i' && size == 4) return run(static_cast<std::int32_t*>(nullptr));
    if (kind == 'u' && size == 8) return run(static_cast<std::uint64_t*>(nullptr));
    if (kind == 'u' && size == 4) return run(static_cast<std::uint32_t*>(nullptr));
    throw py::type_error("ratings: unsupported dtype " + py::str(a.dtype()).cast<std::string>());
}

/// Ratings given as three columns (users, items, ratings; `name` is the array they come from),
/// checked and converted in one pass each: InputError naming the first bad row, its ids when
/// they are not non-negative integers below 2^32 - 2, its rating when it is not finite.
struct Triples {
    std::vector<mf::RatingTriple> triples;
    std::uint64_t users = 0;  ///< the largest user id + 1
    std::uint64_t items = 0;  ///< the largest item id + 1
};

Triples read_triples(const py::array& users, const py::array& items, const py::array& values,
                     const std::string& name) {
    constexpr double kMaxId = 4294967293.0;  // ids below 2^32 - 2: the counts fit in 32 bits
    Triples t;
    t.triples.resize(static_cast<std::size_t>(values.size()));
    if (users.size() != values.size() || items.size() != values.size())
        throw InputError(name, "the user, item and rating columns differ in length");
    std::size_t bad_id = t.triples.size();
    const auto id = [&](std::size_t r, double v, std::uint64_t& max) {
        if (!(v >= 0 && v <= kMaxId && v == std::floor(v))) {
            bad_id = std::min(bad_id, r);
            return std::uint32_t{0};
        }
        max = std::max(max, static_cast<std::uint64_t>(v) + 1);
        return static_cast<std::uint32_t>(v);
    };
    each_number(users, [&](std::size_t r, double v) { t.triples[r].user = id(r, v, t.users); });
    each_number(items, [&](std::size_t r, double v) { t.triples[r].item = id(r, v, t.items); });
    if (bad_id < t.triples.size()) {
        const auto at = [bad_id](const py::array& a) {
            return py::float_(a.attr("__getitem__")(bad_id)).cast<double>();
        };
        throw InputError(name, fmt::format("row {}: user and item must be non-negative integers "
                                           "below 2^32 - 2, got {:g}, {:g}",
                                           bad_id, at(users), at(items)));
    }
    std::size_t bad_value = t.triples.size();
    each_number(values, [&](std::size_t r, double v) {
        if (!std::isfinite(v)) bad_value = std::min(bad_value, r);
        t.triples[r].value = static_cast<float>(v);
    });
    if (bad_value < t.triples.size())
        throw InputError(name, fmt::format("row {}: rating {} is not finite", bad_value,
                                           t.triples[bad_value].value));
    return t;
}

/// The ratings matrix of `t`, num_users x num_items (-1: the largest id + 1). Triples sorted by
/// (user, item), as a CSR matrix's or an array made from one, are its rows as they are (no pair
/// can repeat); others are sorted, and a repeated pair is an InputError naming both rows.
mf::Ratings ratings_of(const Triples& t, std::int64_t num_users, std::int64_t num_items,
                       const std::string& name) {
    const std::uint64_t n = num_users < 0 ? t.users : static_cast<std::uint64_t>(num_users);
    const std::uint64_t m = num_items < 0 ? t.items : static_cast<std::uint64_t>(num_items);
    if (n >= 0xffffffffULL || m >= 0xffffffffULL)
        throw InputError(name, "more than 2^32 - 2 users or items");
    if (t.users > n || t.items > m)
        throw InputError(name, fmt::format("ids beyond the {} x {} matrix", n, m));
    const auto& r = t.triples;
    const auto before = [](const mf::RatingTriple& a, const mf::RatingTriple& b) {
        return a.user < b.user || (a.user == b.user && a.item < b.item);
    };
    bool sorted = true;
    for (std::size_t k = 1; k < r.size() && sorted; ++k) sorted = before(r[k - 1], r[k]);
    if (!sorted) {
        mf::TripleOrigin origin;
        origin.path = name;
        origin.rows = true;
        return mf::Ratings::from_triples(static_cast<std::uint32_t>(n),
                                         static_cast<std::uint32_t>(m), r, origin);
    }
    std::vector<std::uint64_t> offsets(n + 1, 0);
    std::vector<mf::ItemId> items(r.size());
    std::vector<float> values(r.size());
    for (std::size_t k = 0; k < r.size(); ++k) {
        ++offsets[r[k].user + 1];
        items[k] = r[k].item;
        values[k] = r[k].value;
    }
    for (std::uint64_t u = 0; u < n; ++u) offsets[u + 1] += offsets[u];
    return mf::Ratings::from_csr(static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(m),
                                 std::move(offsets), std::move(items), std::move(values), name);
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
    s["users"] = m.users.names();
    s["items"] = m.items.names();
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

/// rotor.MF.fit: X's columns (users, items, ratings) and its shape (-1: from the ids), the
/// parameters, and the test ratings' columns.
py::tuple fit(const py::array& users, const py::array& items, const py::array& values,
              std::int64_t num_users, std::int64_t num_items, const py::dict& p,
              const std::optional<py::tuple>& test, py::list& sink) {
    py::tuple result;
    std::optional<Records> records;
    run_fit(
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
            const CheckpointParams ck(p);
            o.validate(1);
            ck.prepare();
            const mf::Ratings ratings =
                ratings_of(read_triples(users, items, values, "X"), num_users, num_items, "X");
            // Row i is user "i", column j item "j": the fingerprint `mf train` takes of a file
            // whose ids are those numbers in order of first appearance.
            mf::IdMap user_ids = index_ids(ratings.num_users());
            mf::IdMap item_ids = index_ids(ratings.num_items());
            mf::RatingsFingerprint print;
            if (ck.writes() || !ck.resume.empty())
                print = mf::fingerprint(ratings, user_ids, item_ids);
            std::optional<mf::Checkpoint> resume;
            std::uint32_t resumed_at = 0;  // the checkpoint's iterations (its state is freed)
            if (!ck.resume.empty()) {
                // As `mf train --resume` with every model-defining flag given.
                resume = mf::read_checkpoint(ck.resume);
                check_resume(mf::resume_settings(o, resume->options), resume->state.iterations_done,
                             o.iterations, ck.resume);
                mf::check_same_ratings(resume->ratings, print, ck.resume, "X");
                o = mf::resumed_options(o, *resume);
                resumed_at = resume->state.iterations_done;
            }
            std::optional<mf::TestRatings> test_ratings;
            if (test) {
                const Triples t =
                    read_triples((*test)[0].cast<py::array>(), (*test)[1].cast<py::array>(),
                                 (*test)[2].cast<py::array>(), "X_test");
                // The test set is checked as the training set is, repeated pairs included.
                ratings_of(t, -1, -1, "X_test");
                test_ratings.emplace();
                for (const mf::RatingTriple& r : t.triples) {
                    test_ratings->users.push_back(r.user);
                    test_ratings->items.push_back(r.item);
                    test_ratings->values.push_back(r.value);
                }
            }
            std::uint64_t plan = mf::estimate_memory(ratings, o, 1, threads);
            if (ck.writes() || resume) plan += mf::checkpoint_memory(ratings, o);
            train::check_memory(plan, train::memory_limit(max_memory),
                                "use a smaller n_components or raise max_memory");
            records.emplace(mf::record_schema(test.has_value()), verbose);
            mf::Model model;
            const InterruptWatch watch;
            {
                py::gil_scoped_release release;
                const SignalCheck check;
                sched::Runtime runtime(threads, pin_mode(pin));
                comm::InProcessGroup one(1);
                const mf::TrainerInputs in{ratings, test_ratings ? &*test_ratings : nullptr, o,
                                           runtime, one.at(0)};
                const std::unique_ptr<mf::Trainer> trainer = mf::make_trainer(in);
                if (resume) {
                    trainer->restore(resume->state);
                    resume->state = {};
                }
                train::Hooks hooks;
                // As LDA's: with the watch, epochs between evaluations and checkpoints may run
                // back to back as on the command line.
                const auto checkpoint_due = [&ck, &o](std::uint32_t iter) {
                    return ck.due(iter, o.iterations);
                };
                hooks.after_iteration = [&](const train::Record& r) {
                    if (checkpoint_due(r.iter))
                        mf::write_checkpoint(ck.dir, *trainer, o, print, one.at(0));
                    watch.poll();
                    check();
                };
                if (!watch.every_iteration()) hooks.needs_state = checkpoint_due;
                train::LoopOptions loop;
                loop.last = o.iterations;
                loop.eval_every = o.eval_every;
                train::run_iterations(*trainer, loop, *records, hooks);
                model = trainer->gather_model();
            }
            model.users = std::move(user_ids);
            model.items = std::move(item_ids);
            model.seen_offsets.assign(ratings.user_offsets().begin(), ratings.user_offsets().end());
            model.seen_items.assign(ratings.user_items().begin(), ratings.user_items().end());
            result = py::make_tuple(state_of(model), resumed_at);
        },
        kNames, records, sink);
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

/// The RMSE of the model's predictions of X's ratings (its columns, checked as fit checks them).
double rmse(const py::dict& state, const py::array& users, const py::array& items,
            const py::array& values) {
    double out = 0;
    translate_errors(
        [&] {
            const Triples t = read_triples(users, items, values, "X");
            const mf::Model m = model_of(state);
            const mf::ModelView v = m.view();
            double sum = 0;
            for (const mf::RatingTriple& r : t.triples) {
                const double e = v.predict(r.user, r.item) - static_cast<double>(r.value);
                sum += e * e;
            }
            out = std::sqrt(sum / static_cast<double>(t.triples.size()));
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
    m.def("mf_rmse", &rmse);
    m.def("mf_save", &save);
    m.def("mf_load", &load);
}

}  // namespace rotor::python
