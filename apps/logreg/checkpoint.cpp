#include "apps/logreg/checkpoint.h"

#include <algorithm>
#include <array>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/logreg/train_run.h"
#include "comm/wire.h"
#include "core/base/error.h"
#include "core/logreg/examples.h"
#include "train/json_fields.h"
#include "train/state_checkpoint.h"

namespace rotor::logreg {
namespace {

/// Parts begin "RRLC".
constexpr std::array<const char*, 4> kInputFields{"examples", "nonzeros", "hash", nullptr};
constexpr train::StateCheckpointFormat kCheckpoint{"rotor-logreg-checkpoint",
                                                   1,
                                                   "a logistic-regression",
                                                   0x434C'5252,
                                                   1,
                                                   "settings",
                                                   "data",
                                                   kInputFields};

nlohmann::ordered_json settings_json(const CheckpointSettings& s) {
    nlohmann::ordered_json j = {{"lambda", s.lambda},     {"blocks", s.blocks},
                                {"seed", s.seed},         {"eta", s.eta},
                                {"max_step", s.max_step}, {"curvature", s.curvature},
                                {"delay", s.delay},       {"intercept", s.intercept},
                                {"hashed", s.hashed},     {"iterations", s.iterations}};
    if (!s.block_file.empty()) j["block_file"] = s.block_file;  // absent: none
    return j;
}

CheckpointSettings settings_from_json(const nlohmann::json& j, const std::string& path) {
    CheckpointSettings s;
    s.lambda = train::json_double(j, "lambda", path);
    s.blocks = static_cast<std::uint32_t>(train::json_unsigned(j, "blocks", path, 1U << 30));
    s.seed = train::json_unsigned(j, "seed", path);
    s.eta = train::json_double(j, "eta", path);
    s.max_step = train::json_double(j, "max_step", path);
    s.curvature = train::json_string(j, "curvature", path);
    s.delay = train::json_string(j, "delay", path);
    s.intercept = train::json_bool(j, "intercept", path);
    s.hashed = train::json_bool(j, "hashed", path);
    if (j.contains("block_file")) s.block_file = train::json_string(j, "block_file", path);
    s.iterations = train::json_unsigned(j, "iterations", path);
    if (!(s.lambda > 0) || s.blocks < 1 || !(s.eta > 0 && s.eta <= 1) || !(s.max_step >= 0) ||
        (s.curvature != "bound" && s.curvature != "local"))
        throw InputError(path, "bad settings");
    return s;
}

std::vector<std::byte> encode_state(const CheckpointState& s) {
    comm::WireWriter w = train::begin_state_part(kCheckpoint);
    w.put(s.iterations_done);
    w.put(s.time_s);
    w.put(s.keys);
    w.put(s.weights);
    w.put(s.margins);
    return w.take();
}

CheckpointState decode_state(std::span<const std::byte> bytes, const std::string& name) {
    comm::WireReader r(bytes, name, 0);
    train::expect_state_part(r, kCheckpoint);
    CheckpointState s;
    r.get(s.iterations_done);
    r.get(s.time_s);
    r.get(s.keys);
    r.get(s.weights);
    r.get(s.margins);
    r.finish();
    return s;
}

}  // namespace

std::vector<train::ResumeSetting> resume_settings(const CheckpointSettings& ours,
                                                  const CheckpointSettings& theirs) {
    const auto g = [](double v) { return fmt::format("{:.17g}", v); };
    const auto on = [](bool v) { return std::string(v ? "on" : "off"); };
    const auto file = [](const std::string& digest) {
        return digest.empty() ? std::string("none") : digest;
    };
    const std::pair<std::string, std::string> values[] = {
        {g(ours.lambda), g(theirs.lambda)},
        {std::to_string(ours.blocks), std::to_string(theirs.blocks)},
        {std::to_string(ours.seed), std::to_string(theirs.seed)},
        {g(ours.eta), g(theirs.eta)},
        {ours.curvature, theirs.curvature},
        {ours.delay, theirs.delay},
        {on(!ours.intercept), on(!theirs.intercept)},
        {on(ours.hashed), on(theirs.hashed)},
        {g(ours.max_step), g(theirs.max_step)},
        {file(ours.block_file), file(theirs.block_file)}};
    static_assert(std::size(values) == std::size(kModelFlags));
    std::vector<train::ResumeSetting> settings;
    for (std::size_t i = 0; i < std::size(kModelFlags); ++i)
        settings.push_back({kModelFlags[i], values[i].first, values[i].second});
    return settings;
}

void check_same_data(const DataFingerprint& theirs, const DataFingerprint& ours,
                     const std::string& resume, const std::string& name, const std::string& flag) {
    if (theirs == ours) return;
    const auto sizes = [](const DataFingerprint& f) {
        return fmt::format("{} examples and {} nonzeros", f.examples, f.nonzeros);
    };
    train::refuse_other_input(resume, "other data", name, sizes(ours), sizes(theirs),
                              "other values", flag);
}

CheckpointState checkpoint_state(const Model& m, std::vector<double> margins, std::uint64_t done,
                                 double time_s) {
    CheckpointState st;
    st.iterations_done = done;
    st.time_s = time_s;
    st.keys = m.keys;
    st.weights = m.weights;
    if (m.intercept != 0) {
        st.keys.push_back(kInterceptKey);
        st.weights.push_back(m.intercept);
    }
    st.margins = std::move(margins);
    return st;
}

void restore_state(const CheckpointState& st, Shard* part, std::uint64_t first_example,
                   DelayedStart& start) {
    for (std::size_t i = 0; i < st.keys.size(); ++i)
        start.server_weights.emplace(st.keys[i], st.weights[i]);
    if (part == nullptr) return;
    const auto keys = part->keys();
    start.worker_weights.assign(keys.size(), 0.0);
    std::size_t j = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        while (j < st.keys.size() && st.keys[j] < keys[i]) ++j;
        if (j < st.keys.size() && st.keys[j] == keys[i]) start.worker_weights[i] = st.weights[j];
    }
    const auto m = part->margins();
    std::copy_n(st.margins.begin() + static_cast<std::ptrdiff_t>(first_example), m.size(),
                m.begin());
}

void write_checkpoint(const std::string& dir, comm::Communicator& comm,
                      const CheckpointSettings& settings, const DataFingerprint& data,
                      const CheckpointState& state) {
    train::write_state_checkpoint(
        dir, comm, kCheckpoint, comm.rank() == 0 ? encode_state(state) : std::vector<std::byte>{},
        settings_json(settings), state.iterations_done, {data.examples, data.nonzeros, data.hash});
}

Checkpoint read_checkpoint(const std::string& dir) {
    const train::StateCheckpointFiles files = train::read_state_checkpoint(dir, kCheckpoint);
    Checkpoint c;
    c.settings = settings_from_json(train::state_options(files, kCheckpoint), files.path);
    c.ranks = files.ranks;
    const train::InputFingerprint d = train::read_input_fingerprint(files, kCheckpoint);
    c.data = {d[0], d[1], d[2]};
    c.state = train::decode_state_part(files, decode_state);
    const CheckpointState& s = c.state;
    bool sorted = true;
    for (std::size_t i = 1; i < s.keys.size(); ++i) sorted = sorted && s.keys[i - 1] < s.keys[i];
    if (s.keys.size() != s.weights.size() || s.margins.size() != c.data.examples || !sorted ||
        s.iterations_done > c.settings.iterations)
        throw InputError(files.part_path, "the state's shapes disagree with state.json");
    return c;
}

}  // namespace rotor::logreg
