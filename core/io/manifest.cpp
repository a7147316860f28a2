#include "core/io/manifest.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/checksum.h"
#include "core/io/mapped_file.h"
#include "core/io/parse.h"
#include "core/io/whole_file.h"

namespace rotor::core {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHeader = "rotor-manifest\t1";

std::string join(const std::string& dir, std::string_view name) {
    return (fs::path(dir) / std::string(name)).string();
}

std::string hex(std::uint32_t crc) { return fmt::format("{:08x}", crc); }

/// Why `name` cannot be listed (a manifest line is `name<TAB>bytes<TAB>crc`), or empty.
std::string_view bad_name(std::string_view name) {
    if (name.empty()) return "an empty name";
    if (name.find_first_of("/\t\n\r") != std::string_view::npos)
        return "a name with '/', a tab or a line break";
    if (name == kManifestName) return "the manifest's own name";
    return {};
}

std::uint32_t crc_of_file(const std::string& path) {
    const MappedFile f(path);
    const auto b = f.bytes();
    return crc32(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
}

/// The fields of one line, split at tabs.
std::vector<std::string_view> fields_of(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t at = 0;
    while (true) {
        const std::size_t tab = line.find('\t', at);
        out.push_back(line.substr(at, tab == std::string_view::npos ? line.npos : tab - at));
        if (tab == std::string_view::npos) return out;
        at = tab + 1;
    }
}

/// Lists `dir`: regular files but the manifest, by name; anything else is an InputError.
std::vector<std::string> files_of(const std::string& dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name == kManifestName) continue;
        std::error_code ignored;
        if (!e.is_regular_file(ignored))
            throw InputError(e.path().string(), "not a regular file: a manifest lists only files");
        names.push_back(name);
    }
    if (ec) throw InputError(dir, fmt::format("cannot list the directory: {}", ec.message()));
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace

std::string manifest_text(std::vector<ManifestEntry> entries) {
    std::sort(entries.begin(), entries.end(),
              [](const ManifestEntry& a, const ManifestEntry& b) { return a.file < b.file; });
    std::string s(kHeader);
    s += '\n';
    for (const ManifestEntry& e : entries) {
        if (const std::string_view why = bad_name(e.file); !why.empty())
            throw InputError(e.file, fmt::format("cannot be listed in a manifest: {}", why));
        s += fmt::format("{}\t{}\t{}\n", e.file, e.bytes, hex(e.crc32));
    }
    return s + crc32_line(s, '\t');
}

std::vector<ManifestEntry> parse_manifest(std::string_view text, const std::string& path) {
    const std::string_view body = checked_body(text, path, '\t');
    std::vector<ManifestEntry> entries;
    std::set<std::string_view> seen;
    std::size_t pos = 0;
    std::uint64_t line = 0;
    const auto fail = [&](std::uint64_t col, const std::string& what) {
        throw InputError(path, line, col, what);
    };
    while (pos < body.size()) {
        ++line;
        const std::size_t end = body.find('\n', pos);  // body ends with one
        const std::string_view l = body.substr(pos, end - pos);
        pos = end + 1;
        if (line == 1) {
            if (l != kHeader)
                fail(1, "not a rotor manifest (the first line is not 'rotor-manifest<TAB>1')");
            continue;
        }
        const std::vector<std::string_view> f = fields_of(l);
        if (f.size() != 3) fail(1, "expected '<file><TAB><bytes><TAB><crc32>'");
        ManifestEntry e;
        e.file = std::string(f[0]);
        if (const std::string_view why = bad_name(e.file); !why.empty()) fail(1, std::string(why));
        if (!seen.insert(f[0]).second) fail(1, fmt::format("'{}' is listed twice", e.file));
        std::size_t p = 0;
        if (parse_uint(f[1], p, e.bytes) != ParseStatus::kOk || p != f[1].size())
            fail(f[0].size() + 2, "the size is not an unsigned integer");
        const std::size_t crc_col = f[0].size() + f[1].size() + 3;
        if (f[2].size() != 8 || f[2].find_first_not_of("0123456789abcdef") != f[2].npos)
            fail(crc_col, "the CRC-32 is not 8 lowercase hex digits");
        e.crc32 = static_cast<std::uint32_t>(std::stoul(std::string(f[2]), nullptr, 16));
        entries.push_back(std::move(e));
    }
    if (line == 0) throw InputError(path, 1, 1, "not a rotor manifest (no header line)");
    return entries;
}

ManifestEntry manifest_entry(const std::string& dir, const std::string& name) {
    const std::string path = join(dir, name);
    std::error_code ec;
    const std::uint64_t bytes = fs::file_size(path, ec);
    if (ec) throw InputError(path, fmt::format("cannot read its size: {}", ec.message()));
    return {name, bytes, crc_of_file(path)};
}

void write_manifest(const std::string& dir, const std::vector<ManifestEntry>& known) {
    std::map<std::string, ManifestEntry> given;
    for (const ManifestEntry& e : known) given[e.file] = e;
    std::vector<ManifestEntry> entries;
    for (const std::string& name : files_of(dir)) {
        const auto it = given.find(name);
        entries.push_back(it != given.end() ? it->second : manifest_entry(dir, name));
    }
    write_file_atomically(join(dir, kManifestName), manifest_text(std::move(entries)));
}

bool verify_manifest(const std::string& dir,
                     const std::function<bool(std::string_view)>& checked_by_caller) {
    const std::string manifest_path = join(dir, kManifestName);
    std::error_code ec;
    if (!fs::exists(manifest_path, ec)) return false;
    const std::string text = read_whole_file(manifest_path);
    std::set<std::string> listed;
    for (const ManifestEntry& e : parse_manifest(text, manifest_path)) {
        const std::string path = join(dir, e.file);
        listed.insert(e.file);
        std::error_code size_ec;
        const std::uint64_t bytes = fs::file_size(path, size_ec);
        if (size_ec)
            throw InputError(path,
                             fmt::format("missing: the manifest lists it ({})", size_ec.message()));
        if (bytes != e.bytes)
            throw InputError(path, fmt::format("has {} bytes, the manifest says {}: the file was "
                                               "truncated or appended to, or edited (after an "
                                               "edit on purpose, `rotor seal` the directory)",
                                               bytes, e.bytes));
        if (checked_by_caller && checked_by_caller(e.file)) continue;
        if (crc_of_file(path) != e.crc32)
            throw InputError(path,
                             "CRC-32 differs from the manifest's: the file is corrupt, or was "
                             "edited (after an edit on purpose, `rotor seal` the directory)");
    }
    for (const std::string& name : files_of(dir)) {
        if (!listed.contains(name))
            throw InputError(join(dir, name),
                             "not listed in the manifest: the directory holds a file it was not "
                             "written with (remove it, or `rotor seal` the directory)");
    }
    return true;
}

void require_manifest(const std::string& dir, bool verified, bool claimed,
                      const std::string& claimed_by) {
    if (verified || !claimed) return;
    throw InputError(join(dir, kManifestName),
                     fmt::format("missing: {} says the directory was written with one (`rotor "
                                 "seal` the directory to write it anew)",
                                 fs::path(claimed_by).filename().string()));
}

}  // namespace rotor::core
