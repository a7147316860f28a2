#include "core/mf/ratings_reader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "core/base/error.h"
#include "core/io/parse.h"

namespace rotor::mf {
namespace {

using core::is_blank;
using core::LineReader;
using core::skip_blanks;

constexpr std::array<const char*, 3> kFieldNames = {"user id", "item id", "rating"};

/// One field of a line: its bytes and its 0-based column in the line.
struct Field {
    std::string_view text;
    std::size_t col = 0;
};

/// Splits the data fields of `line` from `start`: the first three, or fails naming the first
/// missing one. Fields after the third are not looked at.
std::array<Field, 3> split_fields(const LineReader& r, std::string_view line, std::size_t start,
                                  bool csv) {
    std::array<Field, 3> f{};
    std::size_t pos = start;
    for (std::size_t k = 0; k < f.size(); ++k) {
        if (csv) {
            if (k > 0) {
                if (pos >= line.size())
                    r.fail(line.size() + 1, std::string("missing ") + kFieldNames[k]);
                ++pos;  // the comma
            }
            const std::size_t end = std::min(line.find(',', pos), line.size());
            std::size_t b = skip_blanks(line, pos);
            std::size_t e = end;
            while (e > b && is_blank(line[e - 1])) --e;
            if (b == e) r.fail(b + 1, std::string("empty ") + kFieldNames[k]);
            const std::string_view text = line.substr(b, e - b);
            if (text.front() == '"') r.fail(b + 1, "quoted fields are not supported");
            if (const auto blank = text.find_first_of(" \t"); blank != std::string_view::npos) {
                r.fail(b + blank + 1, std::string("blank inside the ") + kFieldNames[k]);
            }
            f[k] = {text, b};
            pos = end;
        } else {
            const std::size_t b = skip_blanks(line, pos);
            if (b >= line.size()) r.fail(line.size() + 1, std::string("missing ") + kFieldNames[k]);
            std::size_t e = b;
            while (e < line.size() && !is_blank(line[e])) ++e;
            const std::string_view text = line.substr(b, e - b);
            if (const auto comma = text.find(','); comma != std::string_view::npos) {
                r.fail(b + comma + 1,
                       "',' in a blank-separated file (its first data line has no comma)");
            }
            f[k] = {text, b};
            pos = e;
        }
    }
    return f;
}

bool parses_as_number(std::string_view s) {
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && end == s.data() + s.size();
}

float parse_rating(const LineReader& r, const Field& f) {
    float v = 0;
    const char* last = f.text.data() + f.text.size();
    const auto [end, ec] = std::from_chars(f.text.data(), last, v);
    if (ec == std::errc::result_out_of_range) {
        r.fail(f.col + 1, "rating " + std::string(f.text) + " does not fit in a float");
    }
    if (ec != std::errc() || end != last) {
        r.fail(f.col + 1, "rating \"" + std::string(f.text) + "\" is not a number");
    }
    if (!std::isfinite(v)) r.fail(f.col + 1, "rating " + std::string(f.text) + " is not finite");
    return v;
}

/// Lines of the triples: the reader records a break wherever a triple's line is not the
/// previous triple's line + 1 (after a header, comment or blank line).
class LineIndex {
  public:
    void add(std::uint64_t triple, std::uint64_t line) {
        if (breaks_.empty() || line != last_line_ + 1) breaks_.emplace_back(triple, line);
        last_line_ = line;
    }
    std::uint64_t line_of(std::uint64_t triple) const {
        const auto it =
            std::upper_bound(breaks_.begin(), breaks_.end(), triple,
                             [](std::uint64_t t, const auto& b) { return t < b.first; });
        const auto& b = *(it - 1);
        return b.second + (triple - b.first);
    }

  private:
    std::vector<std::pair<std::uint64_t, std::uint64_t>> breaks_;  ///< (triple, its line)
    std::uint64_t last_line_ = 0;
};

/// Maps one kind of id (users or items) to indices, remembering the last id looked up: ratings
/// files are usually grouped by user, so most user lookups skip the map. (Plain integer ids, the
/// common case, are looked up by value in the map itself: IdMap.)
class IdIndexer {
  public:
    IdIndexer(IdMap& map, const char* what) : map_(map), what_(what) {}
    std::uint32_t index(const LineReader& r, const Field& f) {
        if (has_last_ && f.text == last_) return last_index_;
        std::uint32_t index = 0;
        if (const auto found = map_.find(f.text)) {
            index = *found;
        } else {
            if (map_.full()) r.fail(f.col + 1, std::string("more than 2^32 - 1 distinct ") + what_);
            index = map_.insert(f.text).first;
        }
        last_.assign(f.text);
        last_index_ = index;
        has_last_ = true;
        return index;
    }

  private:
    IdMap& map_;
    const char* what_;
    std::string last_;
    std::uint32_t last_index_ = 0;
    bool has_last_ = false;
};

}  // namespace

RatingsFile read_ratings(LineReader& r, const ReadRatingsOptions& options) {
    RatingsFile out;
    if (options.users != nullptr) out.users = *options.users;
    if (options.items != nullptr) out.items = *options.items;
    out.first_new_user = out.users.size();
    out.first_new_item = out.items.size();
    IdIndexer users(out.users, "user ids");
    IdIndexer items(out.items, "item ids");

    TripleList triples;
    LineIndex lines;
    bool first_data_line = true;
    bool csv = false;
    std::string_view line;
    while (r.next(line)) {
        // A UTF-8 BOM is already gone: LineReader drops it for every text format.
        const std::size_t start = skip_blanks(line, 0);
        if (start == line.size() || line[start] == '#') continue;
        if (first_data_line) {
            first_data_line = false;
            csv = line.find(',', start) != std::string_view::npos;
            if (options.header == HeaderMode::kPresent) continue;
            if (options.header == HeaderMode::kAuto) {
                const auto f = split_fields(r, line, start, csv);
                if (std::none_of(f.begin(), f.end(),
                                 [](const Field& x) { return parses_as_number(x.text); })) {
                    continue;
                }
            }
        }
        const auto f = split_fields(r, line, start, csv);
        const float value = parse_rating(r, f[2]);
        if (options.nonnegative != nullptr && value < 0)
            r.fail(f[2].col + 1, "rating " + std::string(f[2].text) + " is negative (" +
                                     options.nonnegative + ")");
        const std::uint32_t u = users.index(r, f[0]);
        const std::uint32_t i = items.index(r, f[1]);
        if (u >= out.first_new_user || i >= out.first_new_item) ++out.ratings_with_new_ids;
        const std::uint64_t bytes = ReadRatingsOptions::kBytesPerRating * (triples.size() + 1);
        if (bytes > options.limits.max_bytes)
            options.limits.refuse_bytes(bytes, r.name(), r.line_number(), 1, "the ratings");
        lines.add(triples.size(), r.line_number());
        triples.push_back({u, i, value});
    }

    TripleOrigin origin;
    origin.path = r.name();
    origin.line_of = [&lines](std::uint64_t t) { return lines.line_of(t); };
    origin.users = &out.users;
    origin.items = &out.items;
    out.ratings =
        Ratings::from_triples(out.users.size(), out.items.size(), std::move(triples), origin);
    return out;
}

RatingsFile read_ratings(const std::string& path, const ReadRatingsOptions& options) {
    LineReader reader(path);
    return read_ratings(reader, options);
}

}  // namespace rotor::mf
