#include "train/state_checkpoint.h"

#include <fmt/format.h>

#include "comm/wire.h"
#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/manifest.h"
#include "train/checkpoint_dir.h"
#include "train/json_fields.h"

namespace rotor::train {

comm::WireWriter begin_state_part(const StateCheckpointFormat& f, bool holds_state) {
    comm::WireWriter w;
    w.put(f.part_magic);
    w.put(f.part_version);
    w.put(static_cast<std::uint8_t>(holds_state ? 1 : 0));
    return w;
}

void expect_state_part(comm::WireReader& r, const StateCheckpointFormat& f) {
    r.expect_u32(f.part_magic, "magic");
    r.expect_u32(f.part_version, "version");
    if (r.get<std::uint8_t>() != 1) r.fail("part 0 does not hold the state");
}

void write_state_checkpoint(const std::string& dir, comm::Communicator& comm,
                            const StateCheckpointFormat& f, const std::vector<std::byte>& state,
                            const nlohmann::ordered_json& options, std::uint64_t iterations_done,
                            const InputFingerprint& input) {
    std::vector<std::byte> marker;
    if (comm.rank() != 0) marker = begin_state_part(f, false).take();
    const int ranks = comm.size();
    train::write_checkpoint_dir(
        dir, comm, [&](train::PartWriter& out) { out.write(comm.rank() == 0 ? state : marker); },
        [&](const std::vector<train::PartInfo>& parts) {
            nlohmann::ordered_json j;
            j["format"] = f.format;
            j["version"] = f.version;
            j[f.options_key] = options;
            j["iterations_done"] = iterations_done;
            j["ranks"] = ranks;
            auto& ij = j[f.input_key] = nlohmann::ordered_json::object();
            for (std::size_t i = 0; i < f.input_fields.size() && f.input_fields[i] != nullptr; ++i)
                ij[f.input_fields[i]] = input[i];
            j["manifest"] = std::string(core::kManifestName);
            auto& pj = j["parts"] = nlohmann::ordered_json::array();
            for (const auto& p : parts)
                pj.push_back({{"file", p.file}, {"bytes", p.bytes}, {"fnv1a", p.fnv1a}});
            return j.dump(2) + "\n";
        });
}

StateCheckpointFiles read_state_checkpoint(const std::string& given_dir,
                                           const StateCheckpointFormat& f) {
    // Killed between the two renames that replace a checkpoint: the whole previous one is .old.
    const std::string dir = core::existing_or_old(given_dir, "state.json");
    // Every file against the MANIFEST first; part 0's bytes are checked as it is read, against
    // state.json (which this verified), rather than read twice.
    const bool verified = core::verify_manifest(
        dir, [](std::string_view file) { return file == train::part_name(0); });
    StateCheckpointFiles c;
    c.path = dir + "/state.json";
    const std::string& path = c.path;
    c.manifest = read_json_file(path);
    const nlohmann::json& j = c.manifest;
    const bool claimed = j.is_object() && j.contains("manifest");
    if (claimed && json_string(j, "manifest", path) != core::kManifestName)
        throw InputError(path, fmt::format("\"manifest\" must be \"{}\"", core::kManifestName));
    core::require_manifest(dir, verified, claimed, path);
    if (json_string(j, "format", path) != f.format)
        throw InputError(path,
                         fmt::format("not {} checkpoint (format is not \"{}\")", f.name, f.format));
    const std::uint64_t version = json_unsigned(j, "version", path);
    if (version != static_cast<std::uint64_t>(f.version))
        throw InputError(path, fmt::format("version {} is not supported (this rotor reads {})",
                                           version, f.version));
    c.ranks = static_cast<int>(json_unsigned(j, "ranks", path, 1U << 20));
    const auto& parts = json_field(j, "parts", path);
    if (!parts.is_array() || parts.size() != static_cast<std::size_t>(c.ranks) || c.ranks < 1)
        throw InputError(path, "\"parts\" must list one part per rank");
    const train::PartInfo p0{json_string(parts[0], "file", path),
                             json_unsigned(parts[0], "bytes", path),
                             json_unsigned(parts[0], "fnv1a", path)};
    if (p0.file != train::part_name(0)) throw InputError(path, "part 0 is misnamed");
    c.part = train::read_checked_part(dir, p0, 0);
    c.part_path = dir + "/" + p0.file;
    return c;
}

const nlohmann::json& state_options(const StateCheckpointFiles& files,
                                    const StateCheckpointFormat& f) {
    return json_field(files.manifest, f.options_key, files.path);
}

InputFingerprint read_input_fingerprint(const StateCheckpointFiles& files,
                                        const StateCheckpointFormat& f) {
    const nlohmann::json& ij = json_field(files.manifest, f.input_key, files.path);
    InputFingerprint input{};
    for (std::size_t i = 0; i < f.input_fields.size() && f.input_fields[i] != nullptr; ++i)
        input[i] = json_unsigned(ij, f.input_fields[i], files.path);
    return input;
}

void check_iterations_done(const StateCheckpointFiles& files, std::uint64_t done,
                           std::uint64_t max_done) {
    if (json_unsigned(files.manifest, "iterations_done", files.path, max_done) != done)
        throw InputError(files.path, "\"iterations_done\" disagrees with part 0");
}

}  // namespace rotor::train
