#include "core/logreg/block_groups.h"

#include <string_view>
#include <utility>

#include "core/base/error.h"
#include "core/io/line_reader.h"
#include "core/io/parse.h"
#include "core/logreg/examples.h"

namespace rotor::logreg {
namespace {

constexpr std::uint64_t kFnvOffset = 0xCBF2'9CE4'8422'2325ULL;
constexpr std::uint64_t kFnvPrime = 0x0000'0100'0000'01B3ULL;

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h) {
    for (const char c : bytes) {
        h ^= static_cast<unsigned char>(c);
        h *= kFnvPrime;
    }
    return h;
}

std::uint64_t key_of(const core::LineReader& r, std::string_view text, bool hash_features) {
    if (hash_features) return hash_feature(text);
    std::size_t pos = 0;
    std::uint64_t v = 0;
    const core::ParseStatus st = core::parse_uint(text, pos, v);
    if (st == core::ParseStatus::kOverflow || (st == core::ParseStatus::kOk && v == kInterceptKey))
        r.fail(1, "key " + std::string(text) + " is too large");
    if (st != core::ParseStatus::kOk || pos != text.size())
        r.fail(1, "key \"" + std::string(text) + "\" is not an unsigned integer");
    return v;
}

}  // namespace

BlockGroups::BlockGroups(std::unordered_map<std::uint64_t, std::uint32_t> group_of,
                         std::vector<std::string> names, std::uint64_t digest)
    : group_of_(std::move(group_of)), names_(std::move(names)), digest_(digest) {}

std::optional<std::uint32_t> BlockGroups::group_of(std::uint64_t key) const {
    const auto it = group_of_.find(key);
    if (it == group_of_.end()) return std::nullopt;
    return it->second;
}

std::uint64_t block_file_digest(const std::string& path) {
    core::LineReader r(path);
    std::uint64_t h = kFnvOffset;
    std::string_view line;
    while (r.next(line)) h = fnv1a("\n", fnv1a(line, h));
    return h;
}

BlockGroups read_block_file(const std::string& path, bool hash_features) {
    core::LineReader r(path);
    std::unordered_map<std::uint64_t, std::uint32_t> group_of;
    std::unordered_map<std::string, std::uint32_t> group_index;
    std::unordered_map<std::uint64_t, std::uint64_t> line_of;
    std::vector<std::string> names;
    std::uint64_t h = kFnvOffset;
    std::string_view line;
    while (r.next(line)) {
        h = fnv1a("\n", fnv1a(line, h));
        const std::size_t tab = line.find('\t');
        if (tab == std::string_view::npos) r.fail(1, "expected key<TAB>group");
        if (line.find('\t', tab + 1) != std::string_view::npos)
            r.fail(line.find('\t', tab + 1) + 1, "more than one tab");
        const std::string_view key_text = line.substr(0, tab), group = line.substr(tab + 1);
        if (key_text.empty()) r.fail(1, "empty key");
        if (group.empty()) r.fail(tab + 2, "empty group");
        const std::uint64_t key = key_of(r, key_text, hash_features);
        const auto [gi, fresh] =
            group_index.try_emplace(std::string(group), static_cast<std::uint32_t>(names.size()));
        if (fresh) names.emplace_back(group);
        const auto [at, inserted] = line_of.try_emplace(key, r.line_number());
        if (!inserted)
            r.fail(1, "key \"" + std::string(key_text) + "\" is already listed on line " +
                          std::to_string(at->second));
        group_of.emplace(key, gi->second);
    }
    if (names.empty()) throw InputError(path, "no groups (expected key<TAB>group lines)");
    return BlockGroups(std::move(group_of), std::move(names), h);
}

}  // namespace rotor::logreg
