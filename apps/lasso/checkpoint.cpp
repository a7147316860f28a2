#include "apps/lasso/checkpoint.h"

#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "train/json_fields.h"
#include "train/state_checkpoint.h"

#include "comm/wire.h"
#include "core/base/error.h"
#include "train/checkpoint_dir.h"

namespace rotor::lasso {
namespace {

/// Parts begin "RSLC"; part version 2 adds the L in use and the rollbacks (shotgun, strads), and
/// version 1 is still read.
constexpr std::array<const char*, 4> kInputFields{"samples", "features", "entries", "hash"};
constexpr train::StateCheckpointFormat kCheckpoint{
    "rotor-lasso-checkpoint", 1, "a Lasso", 0x434C'5352, 2, "options", "data", kInputFields};
constexpr std::uint32_t kPartMagic = kCheckpoint.part_magic;
constexpr std::uint32_t kPartVersion = kCheckpoint.part_version;

// ---- state.json -------------------------------------------------------------------------------

nlohmann::ordered_json options_json(const TrainOptions& o) {
    // λ and the doubles as 17 significant digits in JSON round-trip exactly (nlohmann).
    return {{"lambda", o.lambda},
            {"schedule", std::string(schedule_name(o.schedule))},
            {"parallel", o.strads.parallel},
            {"candidates", o.strads.candidates},
            {"rho", o.strads.rho},
            {"eta", o.strads.eta},
            {"intercept", o.standardize.intercept},
            {"standardize", o.standardize.standardize},
            {"active_set", o.active_set},
            {"tol", o.tol},
            {"stop", std::string(stop_rule_name(o.stop))},
            {"max_iterations", o.max_iterations},
            {"eval_every", o.eval_every},
            {"seed", o.seed}};
}

TrainOptions options_from_json(const nlohmann::json& j, const std::string& path) {
    TrainOptions o;
    try {
        o.schedule = parse_schedule(train::json_string(j, "schedule", path));
        o.stop = parse_stop_rule(train::json_string(j, "stop", path));
    } catch (const ConfigError& e) {
        throw InputError(path, e.what());
    }
    o.lambda = train::json_double(j, "lambda", path);
    o.strads.parallel =
        static_cast<std::uint32_t>(train::json_unsigned(j, "parallel", path, 1U << 30));
    o.strads.candidates =
        static_cast<std::uint32_t>(train::json_unsigned(j, "candidates", path, 1U << 30));
    o.strads.rho = train::json_double(j, "rho", path);
    o.strads.eta = train::json_double(j, "eta", path);
    o.standardize.intercept = train::json_bool(j, "intercept", path);
    o.standardize.standardize = train::json_bool(j, "standardize", path);
    o.active_set = train::json_bool(j, "active_set", path);
    o.tol = train::json_double(j, "tol", path);
    o.max_iterations =
        static_cast<std::uint32_t>(train::json_unsigned(j, "max_iterations", path, 1U << 30));
    o.eval_every =
        static_cast<std::uint32_t>(train::json_unsigned(j, "eval_every", path, 1U << 30));
    o.seed = train::json_unsigned(j, "seed", path);
    try {
        o.validate();
    } catch (const ConfigError& e) {
        throw InputError(path, fmt::format("bad options: {}", e.what()));
    }
    return o;
}

// ---- part 0: the state ------------------------------------------------------------------------

void put_evaluation(comm::WireWriter& w, const Evaluation& e) {
    for (const double v :
         {e.objective, e.objective_paper, e.gap, e.relative_gap, e.kkt_violation, e.l1_norm})
        w.put(v);
    w.put(e.nonzeros);
}

Evaluation get_evaluation(comm::WireReader& r) {
    Evaluation e;
    for (double* v :
         {&e.objective, &e.objective_paper, &e.gap, &e.relative_gap, &e.kkt_violation, &e.l1_norm})
        r.get(*v);
    r.get(e.nonzeros);
    return e;
}

std::vector<std::byte> encode_state(const TrainerState& s) {
    comm::WireWriter w = train::begin_state_part(kCheckpoint);
    w.put(s.iterations_done);
    w.put(s.rounds_done);
    w.put(s.total_updates);
    w.put(s.offset);
    w.put(s.gradient_lambda);
    w.put(s.gradient_fresh);
    w.put(s.inner_tol);
    w.put(s.converged);
    put_evaluation(w, s.last);
    for (const auto* v : {&s.b, &s.last_delta, &s.gradient, &s.residuals}) w.put(*v);
    w.put(s.parallel);
    w.put(s.rollbacks);
    return w.take();
}

TrainerState decode_state(std::span<const std::byte> bytes, const std::string& name) {
    comm::WireReader r(bytes, name, 0);
    r.expect_u32(kPartMagic, "magic");
    const auto version = r.get<std::uint32_t>();
    if (version != 1 && version != kPartVersion)
        r.fail(fmt::format("version {}, not {} (or 1)", version, kPartVersion));
    if (r.get<std::uint8_t>() != 1) r.fail("part 0 does not hold the state");
    TrainerState s;
    r.get(s.iterations_done);
    r.get(s.rounds_done);
    r.get(s.total_updates);
    r.get(s.offset);
    r.get(s.gradient_lambda);
    r.get(s.gradient_fresh);
    r.get(s.inner_tol);
    r.get(s.converged);
    s.last = get_evaluation(r);
    for (auto* v : {&s.b, &s.last_delta, &s.gradient, &s.residuals}) r.get(*v);
    if (version >= 2) {
        r.get(s.parallel);
        r.get(s.rollbacks);
    }
    r.finish();
    return s;
}

}  // namespace

void check_same_data(const DataFingerprint& theirs, const DataFingerprint& ours,
                     const std::string& resume, const std::string& name, const std::string& flag) {
    if (theirs == ours) return;
    const auto sizes = [](const DataFingerprint& f) {
        return fmt::format("{} samples, {} features and {} entries", f.samples, f.features,
                           f.entries);
    };
    train::refuse_other_input(resume, "other data", name, sizes(ours), sizes(theirs),
                              "other values", flag);
}

std::vector<train::ResumeSetting> resume_settings(const TrainOptions& a, const TrainOptions& b) {
    const auto g = [](double v) { return fmt::format("{:.17g}", v); };
    const auto on = [](bool v) { return std::string(v ? "on" : "off"); };
    return {
        {"--lambda", g(a.lambda), g(b.lambda)},
        {"--schedule", std::string(schedule_name(a.schedule)),
         std::string(schedule_name(b.schedule))},
        {"--parallel", std::to_string(a.strads.parallel), std::to_string(b.strads.parallel)},
        {"--candidates", std::to_string(a.strads.candidates), std::to_string(b.strads.candidates)},
        {"--rho", g(a.strads.rho), g(b.strads.rho)},
        {"--eta", g(a.strads.eta), g(b.strads.eta)},
        {"--tol", g(a.tol), g(b.tol)},
        {"--stop", std::string(stop_rule_name(a.stop)), std::string(stop_rule_name(b.stop))},
        {"--eval-every", std::to_string(a.eval_every), std::to_string(b.eval_every)},
        {"--seed", std::to_string(a.seed), std::to_string(b.seed)},
        {"--no-intercept", on(!a.standardize.intercept), on(!b.standardize.intercept)},
        {"--no-standardize", on(!a.standardize.standardize), on(!b.standardize.standardize)},
        {"--no-active-set", on(!a.active_set), on(!b.active_set)}};
}

DataFingerprint fingerprint(const RawData& data) {
    return fingerprint(data.features, data.row_offsets, data.cols, data.values, data.targets);
}

DataFingerprint fingerprint(std::uint32_t features, std::span<const std::uint64_t> row_offsets,
                            std::span<const std::uint32_t> cols, std::span<const double> values,
                            std::span<const double> targets) {
    std::uint64_t h = train::fnv1a(std::as_bytes(row_offsets));
    h = train::fnv1a(std::as_bytes(cols), h);
    h = train::fnv1a(std::as_bytes(values), h);
    h = train::fnv1a(std::as_bytes(targets), h);
    return {targets.size(), features, values.size(), h};
}

void write_checkpoint(const std::string& dir, Trainer& trainer, const TrainOptions& options,
                      const DataFingerprint& data, comm::Communicator& comm) {
    const TrainerState state = trainer.gather_state();  // residuals whole on rank 0
    train::write_state_checkpoint(dir, comm, kCheckpoint,
                                  comm.rank() == 0 ? encode_state(state) : std::vector<std::byte>{},
                                  options_json(options), state.iterations_done,
                                  {data.samples, data.features, data.entries, data.hash});
}

Checkpoint read_checkpoint(const std::string& dir) {
    const train::StateCheckpointFiles files = train::read_state_checkpoint(dir, kCheckpoint);
    const std::string& part_path = files.part_path;
    Checkpoint c;
    c.options = options_from_json(train::state_options(files, kCheckpoint), files.path);
    c.ranks = files.ranks;
    const train::InputFingerprint d = train::read_input_fingerprint(files, kCheckpoint);
    c.data = {d[0], d[1], d[2], d[3]};
    c.state = train::decode_state_part(files, decode_state, 1U << 30);
    const std::size_t p = c.data.features;
    if (c.state.b.size() != p || c.state.last_delta.size() != p || c.state.gradient.size() != p ||
        c.state.residuals.size() != c.data.samples)
        throw InputError(part_path, "the state's shapes disagree with state.json");
    return c;
}

}  // namespace rotor::lasso
