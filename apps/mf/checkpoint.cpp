#include "apps/mf/checkpoint.h"

#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "train/json_fields.h"
#include "train/state_checkpoint.h"

#include "comm/wire.h"
#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "train/checkpoint_dir.h"

namespace rotor::mf {
namespace {

/// Parts begin "RMFC".
constexpr std::array<const char*, 4> kInputFields{"users", "items", "ratings", "hash"};
constexpr train::StateCheckpointFormat kCheckpoint{
    "rotor-mf-checkpoint", 1, "an MF", 0x4346'4d52, 1, "options", "ratings", kInputFields};

template <class T>
std::span<const std::byte> bytes_of(std::span<const T> v) {
    return std::as_bytes(v);
}

// ---- state.json -------------------------------------------------------------------------------

nlohmann::ordered_json options_json(const TrainOptions& o) {
    return {{"solver", std::string(solver_name(o.solver))},
            {"rank", o.rank},
            {"lambda", o.objective.lambda},
            {"lambda_bias", o.objective.lambda_bias},
            {"lambda_form", o.objective.form == LambdaForm::kPlain ? "plain" : "weighted"},
            {"bias", o.objective.bias},
            {"inner", o.inner},
            {"eta", o.eta},
            {"iterations", o.iterations},
            {"seed", o.seed},
            {"eval_every", o.eval_every},
            {"deterministic", o.deterministic},
            {"blocks", o.blocks},
            {"timer", o.timer},
            {"timer_always", o.timer_always},
            {"timer_low", o.timer_params.low},
            {"timer_high", o.timer_params.high},
            {"timer_initial_s", o.timer_params.initial_s},
            {"implicit", o.implicit},
            {"alpha", o.alpha},
            {"cg_steps", o.cg_steps},
            {"ranking_k", o.ranking_k}};
}

TrainOptions options_from_json(const nlohmann::json& j, const std::string& path) {
    TrainOptions o;
    try {
        o.solver = parse_solver(train::json_string(j, "solver", path));
    } catch (const ConfigError& e) {
        throw InputError(path, e.what());
    }
    o.rank = static_cast<std::uint32_t>(train::json_unsigned(j, "rank", path, kMaxRank));
    o.objective.lambda = train::json_double(j, "lambda", path);
    o.objective.lambda_bias = train::json_double(j, "lambda_bias", path);
    const std::string form = train::json_string(j, "lambda_form", path);
    if (form != "plain" && form != "weighted")
        throw InputError(path, "\"lambda_form\" must be \"plain\" or \"weighted\"");
    o.objective.form = form == "plain" ? LambdaForm::kPlain : LambdaForm::kWeighted;
    o.objective.bias = train::json_bool(j, "bias", path);
    o.inner = static_cast<std::uint32_t>(train::json_unsigned(j, "inner", path, 1U << 20));
    o.eta = train::json_double(j, "eta", path);
    o.iterations =
        static_cast<std::uint32_t>(train::json_unsigned(j, "iterations", path, 1U << 30));
    o.seed = train::json_unsigned(j, "seed", path);
    o.eval_every =
        static_cast<std::uint32_t>(train::json_unsigned(j, "eval_every", path, 1U << 30));
    o.deterministic = train::json_bool(j, "deterministic", path);
    o.blocks = static_cast<int>(train::json_unsigned(j, "blocks", path, 4096));
    o.timer = train::json_bool(j, "timer", path);
    // Absent in checkpoints written before it existed, whose runs cut every round.
    o.timer_always = !j.contains("timer_always") || train::json_bool(j, "timer_always", path);
    o.timer_params.low = train::json_double(j, "timer_low", path);
    o.timer_params.high = train::json_double(j, "timer_high", path);
    o.timer_params.initial_s = train::json_double(j, "timer_initial_s", path);
    if (j.contains("implicit")) {  // absent in checkpoints written before implicit feedback
        o.implicit = train::json_bool(j, "implicit", path);
        o.alpha = train::json_double(j, "alpha", path);
        o.cg_steps = static_cast<std::uint32_t>(train::json_unsigned(j, "cg_steps", path, 1024));
        o.ranking_k =
            static_cast<std::uint32_t>(train::json_unsigned(j, "ranking_k", path, 1U << 30));
    }
    try {
        o.validate(1);
    } catch (const ConfigError& e) {
        throw InputError(path, fmt::format("bad options: {}", e.what()));
    }
    return o;
}

// ---- part 0: the state ------------------------------------------------------------------------

std::vector<std::byte> encode_state(const TrainerState& s) {
    const Model& m = s.model;
    comm::WireWriter w = train::begin_state_part(kCheckpoint);
    w.put(s.iterations_done);
    w.put(s.timer_budget);
    w.put(m.mu);
    w.put(m.w.rows());
    w.put(m.h.rows());
    w.put(m.w.k());
    for (const Factors* f : {&m.w, &m.h}) {  // as vectors, without a copy of the values
        w.put_length(f->values().size());
        w.put_array(f->values());
    }
    for (const auto* v :
         {&m.row_bias, &m.col_bias, &s.w_gsum, &s.h_gsum, &s.b_gsum, &s.c_gsum, &s.residuals})
        w.put(*v);
    return w.take();
}

/// Reads a factor matrix written as a vector straight into place.
Factors get_factors(std::uint32_t rows, std::uint32_t k, comm::WireReader& r) {
    const std::size_t n = r.get_length(sizeof(float));
    if (n != static_cast<std::uint64_t>(rows) * k)
        r.fail(fmt::format("a factor matrix holds {} values, not {} x {}", n, rows, k));
    Factors f(rows, k);
    r.get_array(f.values());
    return f;
}

TrainerState decode_state(std::span<const std::byte> bytes, const std::string& name) {
    comm::WireReader r(bytes, name, 0);
    train::expect_state_part(r, kCheckpoint);
    TrainerState s;
    r.get(s.iterations_done);
    r.get(s.timer_budget);
    r.get(s.model.mu);
    const auto n = r.get<std::uint32_t>();
    const auto m = r.get<std::uint32_t>();
    const auto k = r.get<std::uint32_t>();
    if (k == 0 || k > kMaxRank) r.fail(fmt::format("rank {} out of range", k));
    s.model.w = get_factors(n, k, r);
    s.model.h = get_factors(m, k, r);
    for (auto* v : {&s.model.row_bias, &s.model.col_bias, &s.w_gsum, &s.h_gsum, &s.b_gsum,
                    &s.c_gsum, &s.residuals})
        r.get(*v);
    r.finish();
    return s;
}

}  // namespace

RatingsFingerprint fingerprint(const Ratings& a, const IdMap& users, const IdMap& items) {
    std::uint64_t h = train::fnv1a(bytes_of(a.user_offsets()));
    h = train::fnv1a(bytes_of(a.user_items()), h);
    h = train::fnv1a(bytes_of(a.user_values()), h);
    for (const IdMap* map : {&users, &items}) {
        for (std::uint32_t i = 0; i < map->size(); ++i) {
            const std::string id = map->name(i);
            h = train::fnv1a(std::as_bytes(std::span(id.data(), id.size() + 1)), h);
        }
    }
    return {a.num_users(), a.num_items(), a.nnz(), h};
}

RatingsFingerprint fingerprint(const RatingsFile& train) {
    return fingerprint(train.ratings, train.users, train.items);
}

TrainOptions resumed_options(const TrainOptions& ours, const Checkpoint& c) {
    TrainOptions o = c.options;
    o.iterations = ours.iterations;
    o.eval_every = ours.eval_every;
    o.record_schedule = ours.record_schedule;
    return o;
}

void check_same_ratings(const RatingsFingerprint& theirs, const RatingsFingerprint& ours,
                        const std::string& resume, const std::string& name,
                        const std::string& flag) {
    if (theirs == ours) return;
    const auto sizes = [](const RatingsFingerprint& f) {
        return fmt::format("{} users, {} items and {} ratings", f.users, f.items, f.ratings);
    };
    train::refuse_other_input(resume, "other ratings", name, sizes(ours), sizes(theirs),
                              "other ratings or ids", flag);
}

std::vector<train::ResumeSetting> resume_settings(const TrainOptions& a, const TrainOptions& b) {
    auto form = [](const TrainOptions& o) {
        return o.objective.form == LambdaForm::kPlain ? "plain" : "weighted";
    };
    return {
        {"--solver", std::string(solver_name(a.solver)), std::string(solver_name(b.solver))},
        {"--rank", std::to_string(a.rank), std::to_string(b.rank)},
        {"--lambda", fmt::format("{}", a.objective.lambda), fmt::format("{}", b.objective.lambda)},
        {"--lambda-bias", fmt::format("{}", a.objective.lambda_bias),
         fmt::format("{}", b.objective.lambda_bias)},
        {"--lambda-form", form(a), form(b)},
        {"--no-bias", a.objective.bias ? "off" : "on", b.objective.bias ? "off" : "on"},
        {"--inner", std::to_string(a.inner), std::to_string(b.inner)},
        {"--eta", fmt::format("{}", a.eta), fmt::format("{}", b.eta)},
        {"--seed", std::to_string(a.seed), std::to_string(b.seed)},
        {"--deterministic", a.deterministic ? "on" : "off", b.deterministic ? "on" : "off"},
        {"--blocks", std::to_string(a.blocks), std::to_string(b.blocks)},
        {"--timer", a.timer ? "on" : "off", b.timer ? "on" : "off"},
        {"--timer-always", a.timer_always ? "on" : "off", b.timer_always ? "on" : "off"},
        {"--implicit", a.implicit ? "on" : "off", b.implicit ? "on" : "off"},
        {"--alpha", fmt::format("{}", a.alpha), fmt::format("{}", b.alpha)},
        {"--cg-steps", std::to_string(a.cg_steps), std::to_string(b.cg_steps)},
        {"--ranking", std::to_string(a.ranking_k), std::to_string(b.ranking_k)}};
}

std::uint64_t checkpoint_memory(const Ratings& train, const TrainOptions& options) {
    const std::uint64_t rows = std::uint64_t{train.num_users()} + train.num_items();
    // W and H, biases and accumulators; ccd's residuals.
    std::uint64_t state = 4 * rows * options.rank + 16 * rows;
    if (options.solver == Solver::kCcd) state += 4 * train.nnz();
    return 2 * state;
}

void write_checkpoint(const std::string& dir, Trainer& trainer, const TrainOptions& options,
                      const RatingsFingerprint& ratings, comm::Communicator& comm) {
    const TrainerState state = trainer.gather_state();  // whole on rank 0
    train::write_state_checkpoint(dir, comm, kCheckpoint,
                                  comm.rank() == 0 ? encode_state(state) : std::vector<std::byte>{},
                                  options_json(options), trainer.iterations_done(),
                                  {ratings.users, ratings.items, ratings.ratings, ratings.hash});
}

Checkpoint read_checkpoint(const std::string& dir) {
    const train::StateCheckpointFiles files = train::read_state_checkpoint(dir, kCheckpoint);
    const std::string& path = files.path;
    const std::string& part_path = files.part_path;
    Checkpoint c;
    c.options = options_from_json(train::state_options(files, kCheckpoint), path);
    c.ranks = files.ranks;
    const train::InputFingerprint r = train::read_input_fingerprint(files, kCheckpoint);
    c.ratings = {r[0], r[1], r[2], r[3]};
    c.state = train::decode_state_part(files, decode_state, 1U << 30);
    if (c.state.iterations_done > c.options.iterations)
        throw InputError(path, "\"iterations_done\" is beyond the run's iterations");
    if (c.state.model.w.rows() != c.ratings.users || c.state.model.h.rows() != c.ratings.items ||
        c.state.model.w.k() != c.options.rank)
        throw InputError(part_path, "the factors' shapes disagree with state.json");
    c.state.model.params = c.options.objective;
    c.state.model.solver = std::string(solver_name(c.options.solver));
    c.state.model.seed = c.options.seed;
    c.state.model.iterations = c.state.iterations_done;
    return c;
}

}  // namespace rotor::mf
