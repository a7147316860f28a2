#include "apps/mf/pairs_reader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string>
#include <system_error>

#include "core/io/parse.h"

namespace rotor::apps {
namespace {

using core::is_blank;
using core::skip_blanks;

constexpr std::array<const char*, 2> kFieldNames = {"user id", "item id"};

/// One CSV field from `pos` to the next comma (or the end), trimmed; fails when it is empty,
/// quoted or holds a blank. Leaves `pos` at the comma or the end.
std::string_view csv_field(const core::LineReader& r, std::string_view line, std::size_t& pos,
                           const char* what) {
    const std::size_t end = std::min(line.find(',', pos), line.size());
    const std::size_t b = skip_blanks(line, pos);
    std::size_t e = end;
    while (e > b && is_blank(line[e - 1])) --e;
    if (b == e) r.fail(b + 1, std::string("empty ") + what);
    const std::string_view text = line.substr(b, e - b);
    if (text.front() == '"') r.fail(b + 1, "quoted fields are not supported");
    if (const auto blank = text.find_first_of(" \t"); blank != std::string_view::npos)
        r.fail(b + blank + 1, std::string("blank inside the ") + what);
    pos = end;
    return text;
}

/// The first two fields of `line` from `start`, or fails naming the first missing one.
std::array<std::string_view, 2> split(const core::LineReader& r, std::string_view line,
                                      std::size_t start, bool csv) {
    std::array<std::string_view, 2> f{};
    std::size_t pos = start;
    for (std::size_t k = 0; k < f.size(); ++k) {
        if (csv) {
            if (k > 0) {
                if (pos >= line.size())
                    r.fail(line.size() + 1, std::string("missing ") + kFieldNames[k]);
                ++pos;  // the comma
            }
            f[k] = csv_field(r, line, pos, kFieldNames[k]);
            continue;
        }
        const std::size_t b = skip_blanks(line, pos);
        if (b >= line.size()) r.fail(line.size() + 1, std::string("missing ") + kFieldNames[k]);
        std::size_t e = b;
        while (e < line.size() && !is_blank(line[e])) ++e;
        f[k] = line.substr(b, e - b);
        if (const auto comma = f[k].find(','); comma != std::string_view::npos)
            r.fail(b + comma + 1,
                   "',' in a blank-separated file (its first data line has no comma)");
        pos = e;
    }
    return f;
}

bool is_number(std::string_view s) {
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

PairsReader::PairsReader(const std::string& path, const mf::IdMap& users, const mf::IdMap& items,
                         PairsHeader header)
    : reader_(path), users_(users), items_(items), header_(header) {}

bool PairsReader::next(Pair& pair) {
    std::string_view line;
    while (reader_.next(line)) {
        std::size_t start = skip_blanks(line, 0);
        if (start == line.size() || line[start] == '#') continue;
        const bool first = first_data_line_;
        if (first) {
            first_data_line_ = false;
            csv_ = line.find(',', start) != std::string_view::npos;
            if (header_ == PairsHeader::kPresent) continue;
        }
        const auto f = split(reader_, line, start, csv_);
        const auto user = users_.find(f[0]);
        const auto item = items_.find(f[1]);
        // A header names its columns: no number, no id the model knows.
        if (first && header_ == PairsHeader::kAuto && !is_number(f[0]) && !is_number(f[1]) &&
            !user && !item)
            continue;
        pair.user = f[0];
        pair.item = f[1];
        pair.user_index = user.value_or(users_.size());
        pair.item_index = item.value_or(items_.size());
        return true;
    }
    return false;
}

}  // namespace rotor::apps
