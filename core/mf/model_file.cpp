// Writing and reading MF model directories (core/mf/model_file.h; docs/formats.md, "MF models").
#include "core/mf/model_file.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <set>
#include <span>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/checksum.h"
#include "core/io/manifest.h"
#include "core/io/whole_file.h"

namespace rotor::mf {
namespace {

static_assert(std::endian::native == std::endian::little,
              "MF model files are little-endian; big-endian hosts need byte swapping");

constexpr char kFormat[] = "rotor-mf-model";
constexpr std::uint64_t kVersion = 1;
constexpr char kParams[] = "params.json";
constexpr char kW[] = "w.bin";
constexpr char kH[] = "h.bin";
constexpr char kBias[] = "bias.bin";
constexpr char kSeen[] = "seen.bin";
constexpr char kUsers[] = "users.txt";
constexpr char kItems[] = "items.txt";

std::string join(const std::string& dir, const char* name) {
    return (std::filesystem::path(dir) / name).string();
}

std::uint32_t crc_start() { return 0; }  // the CRC-32 of no bytes

std::uint32_t crc_update(std::uint32_t crc, std::span<const std::byte> bytes) {
    return core::crc32(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                       crc);
}

void check_finite(std::span<const float> values, std::uint32_t k, const std::string& name,
                  const char* what) {
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (!std::isfinite(values[i])) {
            throw InputError(name, fmt::format("{}: non-finite value at row {}, column {}", what,
                                               k == 0 ? i : i / k, k == 0 ? 0 : i % k));
        }
    }
}

void check_ids(const IdMap& map, std::uint32_t expected, const std::string& name,
               const char* what) {
    if (map.size() != expected) {
        throw InputError(name, fmt::format("{} {} ids for {} rows", map.size(), what, expected));
    }
    for (std::uint32_t i = 0; i < map.size(); ++i) {
        const std::string& id = map.name(i);
        if (id.empty()) throw InputError(name, fmt::format("{} id {} is empty", what, i));
        if (id.find_first_of("\t\n") != std::string::npos) {
            throw InputError(
                name, fmt::format("{} id {} (\"{}\") holds a tab or a newline", what, i, id));
        }
    }
}

void check_seen(const Model& m, const std::string& name) {
    if (m.seen_offsets.empty() && m.seen_items.empty()) return;
    const std::uint32_t n = m.w.rows();
    if (m.seen_offsets.size() != std::size_t{n} + 1 || m.seen_offsets.front() != 0 ||
        m.seen_offsets.back() != m.seen_items.size()) {
        throw InputError(name, fmt::format("seen items: {} offsets for {} users and {} items",
                                           m.seen_offsets.size(), n, m.seen_items.size()));
    }
    for (std::uint32_t u = 0; u < n; ++u) {
        const std::uint64_t b = m.seen_offsets[u];
        const std::uint64_t e = m.seen_offsets[u + 1];
        if (e < b)
            throw InputError(name, fmt::format("seen items: offsets decrease at user {}", u));
        for (std::uint64_t t = b; t < e; ++t) {
            if (m.seen_items[t] >= m.h.rows()) {
                throw InputError(name, fmt::format("seen items: item {} of user {} is not < M = {}",
                                                   m.seen_items[t], u, m.h.rows()));
            }
            if (t > b && m.seen_items[t] <= m.seen_items[t - 1]) {
                throw InputError(name,
                                 fmt::format("seen items: items of user {} do not increase", u));
            }
        }
    }
}

}  // namespace

void Model::check(const std::string& name) const {
    if (solver != "ccd" && solver != "sgd" && solver != "als") {
        throw InputError(name, fmt::format("solver \"{}\" is not ccd, sgd or als", solver));
    }
    if (solver == "als" && (params.bias || !(alpha >= 0) || !std::isfinite(alpha)))
        throw InputError(name, "an als (implicit) model has no bias and a finite alpha >= 0");
    try {
        params.validate();
    } catch (const ConfigError& e) {
        throw InputError(name, e.what());
    }
    if (w.k() == 0 || w.k() > kMaxRank || h.k() != w.k()) {
        throw InputError(name, fmt::format("rank K = {} (W) and {} (H): both must be equal and in "
                                           "1..{}",
                                           w.k(), h.k(), kMaxRank));
    }
    check_ids(users, w.rows(), name, "user");
    check_ids(items, h.rows(), name, "item");
    if (!std::isfinite(mu)) throw InputError(name, "the global mean mu is not finite");
    const std::size_t bias_rows = params.bias ? w.rows() : 0;
    const std::size_t bias_cols = params.bias ? h.rows() : 0;
    if (row_bias.size() != bias_rows || col_bias.size() != bias_cols) {
        throw InputError(
            name, fmt::format("{} user and {} item biases for a model {} bias", row_bias.size(),
                              col_bias.size(), params.bias ? "with" : "without"));
    }
    if (!params.bias && mu != 0) throw InputError(name, "mu must be 0 in a model without bias");
    check_finite(w.values(), w.k(), name, "W");
    check_finite(h.values(), h.k(), name, "H");
    check_finite(row_bias, 0, name, "user biases");
    check_finite(col_bias, 0, name, "item biases");
    check_seen(*this, name);
}

namespace {

/// Writes `bytes` as `name` inside the temporary directory; returns its CRC-32 and adds its
/// manifest entry to `known` (so that the manifest need not read the file back).
std::uint32_t write_binary(const core::AtomicDirectory& dir, const char* name,
                           std::span<const std::span<const std::byte>> parts,
                           std::vector<core::ManifestEntry>& known) {
    core::AtomicFile f(dir.file(name));
    std::uint32_t crc = crc_start();
    std::uint64_t bytes = 0;
    for (const auto part : parts) {
        f.write(part);
        crc = crc_update(crc, part);
        bytes += part.size();
    }
    f.commit();
    known.push_back({name, bytes, crc});
    return crc;
}

void write_ids(const core::AtomicDirectory& dir, const char* name, const IdMap& map) {
    core::AtomicFile f(dir.file(name));
    std::string line;
    for (std::uint32_t i = 0; i < map.size(); ++i) {
        line = map.name(i);
        line += '\n';
        f.write(line);
    }
    f.commit();
}

}  // namespace

void write_model(const std::string& dir, const Model& model) {
    model.check(dir);
    core::check_replaceable(dir, "params.json", "--out");
    core::AtomicDirectory out(dir);
    nlohmann::ordered_json crcs;
    std::vector<core::ManifestEntry> known;
    const std::span<const std::byte> w[] = {std::as_bytes(model.w.values())};
    crcs[kW] = write_binary(out, kW, w, known);
    const std::span<const std::byte> h[] = {std::as_bytes(model.h.values())};
    crcs[kH] = write_binary(out, kH, h, known);
    if (model.params.bias) {
        const std::span<const std::byte> b[] = {std::as_bytes(std::span(model.row_bias)),
                                                std::as_bytes(std::span(model.col_bias))};
        crcs[kBias] = write_binary(out, kBias, b, known);
    }
    const bool seen = !model.seen_offsets.empty();
    if (seen) {
        const std::span<const std::byte> s[] = {std::as_bytes(std::span(model.seen_offsets)),
                                                std::as_bytes(std::span(model.seen_items))};
        crcs[kSeen] = write_binary(out, kSeen, s, known);
    }
    write_ids(out, kUsers, model.users);
    write_ids(out, kItems, model.items);
    nlohmann::ordered_json params = {
        {"format", kFormat},
        {"version", kVersion},
        {"solver", model.solver},
        {"rank", model.w.k()},
        {"users", model.w.rows()},
        {"items", model.h.rows()},
        {"lambda", model.params.lambda},
        {"lambda_bias", model.params.lambda_bias},
        {"lambda_form", model.params.form == LambdaForm::kPlain ? "plain" : "weighted"},
        {"bias", model.params.bias},
        {"mu", model.mu},
        {"iterations", model.iterations},
        {"seed", model.seed},
        {"train", model.train_path},
        {"seen_ratings", seen ? nlohmann::ordered_json(model.seen_items.size()) : nullptr},
        {"crc32", crcs},
        {"manifest", std::string(core::kManifestName)}};
    if (model.solver == "als") params["alpha"] = model.alpha;  // implicit feedback's c = 1 + α r
    core::write_file_atomically(out.file(kParams), params.dump(2) + "\n");
    // Last: it lists every file above (the binary ones by the CRCs taken as they were written:
    // reading them back would map the whole model once more).
    core::write_manifest(out.temp_path(), known);
    out.commit();
}

// ---- reading ------------------------------------------------------------------------------------

namespace {

/// params.json's keys: each of the JSON type and range asked for, or InputError naming the file
/// and the key. Every key must be read once; keys() left over are unknown.
class Params {
  public:
    Params(std::string path, const std::string& text) : path_(std::move(path)) {
        parse(text);
        if (!json_.is_object()) throw InputError(path_, "not a JSON object");
    }

    const nlohmann::json& at(const nlohmann::json& j, const char* key) {
        if (&j == &json_) used_.insert(key);
        if (!j.contains(key)) throw InputError(path_, fmt::format("missing key \"{}\"", key));
        return j.at(key);
    }
    const nlohmann::json& root() const { return json_; }

    std::uint64_t get_unsigned(const char* key, std::uint64_t max) {
        const auto& v = at(json_, key);
        if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max)
            fail(key, fmt::format("an integer in 0..{}", max));
        return v.get<std::uint64_t>();
    }
    double get_double(const char* key) {
        const auto& v = at(json_, key);
        if (!v.is_number() || !std::isfinite(v.get<double>())) fail(key, "a finite number");
        return v.get<double>();
    }
    bool get_bool(const char* key) {
        const auto& v = at(json_, key);
        if (!v.is_boolean()) fail(key, "true or false");
        return v.get<bool>();
    }
    std::string get_string(const char* key) {
        const auto& v = at(json_, key);
        if (!v.is_string()) fail(key, "a string");
        return v.get<std::string>();
    }
    [[noreturn]] void fail(const char* key, const std::string& must) const {
        throw InputError(path_, fmt::format("\"{}\" must be {}", key, must));
    }
    /// Throws on a key no get_*() asked for.
    void refuse_unknown() const {
        for (const auto& [key, value] : json_.items()) {
            if (!used_.contains(key))
                throw InputError(path_, fmt::format("unknown key \"{}\"", key));
        }
    }
    const std::string& path() const { return path_; }

  private:
    /// Strict: trailing bytes are a syntax error (nlohmann's default), and so is a key given
    /// twice in one object (nlohmann would keep the last silently).
    void parse(const std::string& text) {
        core::check_json_text(text, path_);
        std::vector<std::set<std::string>> open;
        std::string duplicate;
        const auto callback = [&](int, nlohmann::json::parse_event_t event,
                                  nlohmann::json& parsed) {
            using E = nlohmann::json::parse_event_t;
            if (event == E::object_start) open.emplace_back();
            if (event == E::object_end && !open.empty()) open.pop_back();
            if (event == E::key && !open.empty() &&
                !open.back().insert(parsed.get<std::string>()).second && duplicate.empty())
                duplicate = parsed.get<std::string>();
            return true;
        };
        try {
            json_ = nlohmann::json::parse(text, callback);
        } catch (const nlohmann::json::parse_error& e) {
            throw InputError(path_, fmt::format("not valid JSON: {}", e.what()));
        }
        if (!duplicate.empty())
            throw InputError(path_, fmt::format("key \"{}\" appears twice", duplicate));
    }

    std::string path_;
    nlohmann::json json_;
    std::set<std::string> used_;
};

/// What params.json says besides the model's own fields.
struct Layout {
    std::uint32_t k = 0;
    std::uint32_t n = 0;
    std::uint32_t m = 0;
    bool seen = false;
    std::uint64_t seen_ratings = 0;
    std::uint32_t crc_w = 0, crc_h = 0, crc_bias = 0, crc_seen = 0;
    bool manifest = false;  ///< "manifest": written with a MANIFEST (absent in older models)
};

std::uint32_t get_crc(Params& p, const nlohmann::json& crcs, const char* file) {
    const auto& v = p.at(crcs, file);
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > 0xFFFFFFFFu)
        throw InputError(p.path(), fmt::format("\"crc32\".\"{}\" must be an integer in 0..{}", file,
                                               0xFFFFFFFFu));
    return static_cast<std::uint32_t>(v.get<std::uint64_t>());
}

Layout read_params(Params& p, Model& m) {
    if (p.get_string("format") != kFormat)
        throw InputError(p.path(),
                         fmt::format("not a rotor MF model (\"format\" is not \"{}\")", kFormat));
    if (const auto v = p.get_unsigned("version", std::numeric_limits<std::uint64_t>::max());
        v != kVersion)
        throw InputError(p.path(),
                         fmt::format("unsupported version {} (this rotor reads {})", v, kVersion));
    Layout l;
    m.solver = p.get_string("solver");
    if (m.solver != "ccd" && m.solver != "sgd" && m.solver != "als")
        p.fail("solver", "\"ccd\", \"sgd\" or \"als\"");
    if (m.solver == "als") m.alpha = p.get_double("alpha");
    l.k = static_cast<std::uint32_t>(p.get_unsigned("rank", kMaxRank));
    if (l.k == 0) p.fail("rank", fmt::format("an integer in 1..{}", kMaxRank));
    l.n = static_cast<std::uint32_t>(p.get_unsigned("users", IdMap::kMaxSize));
    l.m = static_cast<std::uint32_t>(p.get_unsigned("items", IdMap::kMaxSize));
    m.params.lambda = p.get_double("lambda");
    m.params.lambda_bias = p.get_double("lambda_bias");
    const std::string form = p.get_string("lambda_form");
    if (form != "plain" && form != "weighted") p.fail("lambda_form", "\"plain\" or \"weighted\"");
    m.params.form = form == "plain" ? LambdaForm::kPlain : LambdaForm::kWeighted;
    m.params.bias = p.get_bool("bias");
    m.mu = p.get_double("mu");
    m.iterations = static_cast<std::uint32_t>(p.get_unsigned("iterations", 0xFFFFFFFFu));
    m.seed = p.get_unsigned("seed", std::numeric_limits<std::uint64_t>::max());
    m.train_path = p.get_string("train");
    const auto& seen = p.at(p.root(), "seen_ratings");
    l.seen = !seen.is_null();
    if (l.seen) l.seen_ratings = p.get_unsigned("seen_ratings", std::uint64_t{1} << 56);
    try {
        m.params.validate();
    } catch (const ConfigError& e) {
        throw InputError(p.path(), e.what());
    }
    const auto& crcs = p.at(p.root(), "crc32");
    if (!crcs.is_object()) p.fail("crc32", "an object");
    l.crc_w = get_crc(p, crcs, kW);
    l.crc_h = get_crc(p, crcs, kH);
    if (m.params.bias) l.crc_bias = get_crc(p, crcs, kBias);
    if (l.seen) l.crc_seen = get_crc(p, crcs, kSeen);
    const std::size_t expected = 2 + (m.params.bias ? 1 : 0) + (l.seen ? 1 : 0);
    if (crcs.size() != expected)
        throw InputError(
            p.path(), fmt::format("\"crc32\" lists {} files, expected {}", crcs.size(), expected));
    l.manifest = p.root().contains("manifest");
    if (l.manifest && p.get_string("manifest") != core::kManifestName)
        p.fail("manifest", fmt::format("\"{}\"", core::kManifestName));
    p.refuse_unknown();
    return l;
}

/// A binary file opened for reading after checking its size against what params.json implies
/// (before anything is allocated for its contents).
std::ifstream open_binary(const std::string& path, std::uint64_t expected_bytes) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, fmt::format("cannot open: {}", std::strerror(errno)));
    in.seekg(0, std::ios::end);
    const auto size = static_cast<std::uint64_t>(in.tellg());
    in.seekg(0, std::ios::beg);
    if (!in || size != expected_bytes) {
        throw InputError(path, fmt::format("{} bytes where params.json implies {} (truncated or "
                                           "of another shape)",
                                           size, expected_bytes));
    }
    return in;
}

/// Reads the rest of `in` into `parts` in order, then checks the CRC-32 of what was read.
void read_parts(std::ifstream& in, const std::string& path, std::uint32_t crc,
                std::initializer_list<std::span<std::byte>> parts) {
    std::uint32_t got = crc_start();
    for (const auto part : parts) {
        if (!in.read(reinterpret_cast<char*>(part.data()),
                     static_cast<std::streamsize>(part.size()))) {
            throw InputError(path, "read error (truncated while reading?)");
        }
        got = crc_update(got, part);
    }
    if (got != crc) {
        throw InputError(path, fmt::format("CRC-32 mismatch (corrupt file): params.json says "
                                           "{:08x}, the file has {:08x}",
                                           crc, got));
    }
}

Factors read_factors(const std::string& path, std::uint32_t rows, std::uint32_t k,
                     std::uint32_t crc, const char* what) {
    std::ifstream in = open_binary(path, std::uint64_t{rows} * k * sizeof(float));
    Factors f(rows, k);
    read_parts(in, path, crc, {std::as_writable_bytes(f.values())});
    check_finite(f.values(), k, path, what);
    return f;
}

IdMap read_ids(const std::string& path, std::uint32_t expected, const char* what) {
    const std::string text = core::read_whole_file(path);
    IdMap map;
    std::size_t pos = 0;
    std::uint64_t line = 0;
    while (pos < text.size()) {
        ++line;
        std::size_t end = text.find('\n', pos);
        if (end == std::string::npos)
            throw InputError(path, line, text.size() - pos + 1, "the last line has no newline");
        const std::string_view id(text.data() + pos, end - pos);
        if (id.empty()) throw InputError(path, line, 1, fmt::format("empty {} id", what));
        if (const auto tab = id.find('\t'); tab != std::string_view::npos)
            throw InputError(path, line, tab + 1, fmt::format("tab in a {} id", what));
        if (line > expected)
            throw InputError(
                path, line, 1,
                fmt::format("more than the {} {} ids params.json says", expected, what));
        const auto [index, added] = map.insert(id);
        if (!added) {
            throw InputError(
                path, line, 1,
                fmt::format("duplicate {} id \"{}\" (first on line {})", what, id, index + 1));
        }
        pos = end + 1;
    }
    if (map.size() != expected)
        throw InputError(
            path, fmt::format("{} {} ids where params.json says {}", map.size(), what, expected));
    return map;
}

void read_seen(const std::string& path, const Layout& l, Model& m) {
    const std::uint64_t offsets_bytes = (std::uint64_t{l.n} + 1) * sizeof(std::uint64_t);
    std::ifstream in = open_binary(path, offsets_bytes + l.seen_ratings * sizeof(std::uint32_t));
    m.seen_offsets.resize(std::size_t{l.n} + 1);
    m.seen_items.resize(l.seen_ratings);
    read_parts(in, path, l.crc_seen,
               {std::as_writable_bytes(std::span(m.seen_offsets)),
                std::as_writable_bytes(std::span(m.seen_items))});
    check_seen(m, path);
}

}  // namespace

Model read_model(const std::string& dir) {
    Model m;
    // Every file against the manifest first, so that a damaged file is named as such.
    const bool verified = core::verify_manifest(dir);
    const std::string params_path = join(dir, kParams);
    Params p(params_path, core::read_whole_file(params_path));
    const Layout l = read_params(p, m);
    core::require_manifest(dir, verified, l.manifest, params_path);
    m.w = read_factors(join(dir, kW), l.n, l.k, l.crc_w, "W");
    m.h = read_factors(join(dir, kH), l.m, l.k, l.crc_h, "H");
    if (m.params.bias) {
        const std::string path = join(dir, kBias);
        std::ifstream in = open_binary(path, (std::uint64_t{l.n} + l.m) * sizeof(float));
        m.row_bias.resize(l.n);
        m.col_bias.resize(l.m);
        read_parts(in, path, l.crc_bias,
                   {std::as_writable_bytes(std::span(m.row_bias)),
                    std::as_writable_bytes(std::span(m.col_bias))});
        check_finite(m.row_bias, 0, path, "user biases");
        check_finite(m.col_bias, 0, path, "item biases");
    } else if (m.mu != 0) {
        throw InputError(params_path, "\"mu\" must be 0 in a model without bias");
    }
    if (l.seen) read_seen(join(dir, kSeen), l, m);
    m.users = read_ids(join(dir, kUsers), l.n, "user");
    m.items = read_ids(join(dir, kItems), l.m, "item");
    m.check(dir);
    return m;
}

}  // namespace rotor::mf
