#include "core/logreg/examples.h"

#include <algorithm>
#include <numeric>

#include "core/base/error.h"
#include "core/io/number.h"
#include "core/io/parse.h"

namespace rotor::logreg {
namespace {

using core::is_blank;
using core::LineReader;
using core::skip_blanks;

/// The next blank-separated field of `line` from `pos` (empty at the end); pos moves past it and
/// col is its 0-based column.
std::string_view next_field(std::string_view line, std::size_t& pos, std::size_t& col) {
    pos = skip_blanks(line, pos);
    col = pos;
    std::size_t e = pos;
    while (e < line.size() && !is_blank(line[e])) ++e;
    const std::string_view f = line.substr(pos, e - pos);
    pos = e;
    return f;
}

double number_or_fail(const LineReader& r, std::string_view text, std::size_t col,
                      const char* what) {
    const auto v = core::parse_number(text);
    if (!v) {
        r.fail(col + 1,
               std::string(what) + " \"" + std::string(text) + "\" is not a finite number");
    }
    return *v;
}

int label_or_fail(const LineReader& r, std::string_view text, std::size_t col) {
    const double y = number_or_fail(r, text, col, "label");
    if (y == 1) return 1;
    if (y == -1 || y == 0) return -1;
    r.fail(col + 1, "label \"" + std::string(text) + "\" is not +1, -1 or 0");
}

/// The unsigned integer spelt by all of `s`, at most 2^64 - 2, or fails at `col`.
std::uint64_t key_or_fail(const LineReader& r, std::string_view s, std::size_t col,
                          const char* what) {
    std::size_t pos = 0;
    std::uint64_t v = 0;
    const core::ParseStatus st = core::parse_uint(s, pos, v);
    if (st == core::ParseStatus::kOverflow ||
        (st == core::ParseStatus::kOk && v == kInterceptKey)) {
        r.fail(col + 1, std::string(what) + " " + std::string(s) + " is too large");
    }
    if (st != core::ParseStatus::kOk || pos != s.size()) {
        r.fail(col + 1,
               std::string(what) + " \"" + std::string(s) + "\" is not an unsigned integer");
    }
    return v;
}

/// Sorts (key, value) pairs by key and adds the values of equal keys (hashed features).
void sort_and_merge(std::vector<std::uint64_t>& keys, std::vector<double>& values) {
    std::vector<std::size_t> order(keys.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
    std::vector<std::uint64_t> k;
    std::vector<double> v;
    for (const std::size_t o : order) {
        if (!k.empty() && k.back() == keys[o]) {
            v.back() += values[o];
        } else {
            k.push_back(keys[o]);
            v.push_back(values[o]);
        }
    }
    keys = std::move(k);
    values = std::move(v);
}

/// Parses the features of one line from `pos` into keys/values (sorted, zeros dropped).
void read_features(const LineReader& r, std::string_view line, std::size_t pos,
                   const ReadExamplesOptions& options, std::vector<std::uint64_t>& keys,
                   std::vector<double>& values) {
    keys.clear();
    values.clear();
    std::size_t col = 0;
    bool first = true;
    bool have_previous = false;
    std::uint64_t previous = 0;
    for (;; first = false) {
        if (!options.hash_features) {
            // The common field, "key:value" with a key of at most 19 digits (no overflow): one
            // scan. Anything else (and every error) takes the general path below.
            pos = skip_blanks(line, pos);
            std::size_t i = pos;
            std::uint64_t key = 0;
            while (i < line.size() && i - pos < 19) {
                const unsigned d = static_cast<unsigned char>(line[i]) - unsigned{'0'};
                if (d > 9) break;
                key = key * 10 + d;
                ++i;
            }
            if (i > pos && i < line.size() && line[i] == ':' &&
                (!have_previous || key > previous)) {
                std::size_t e = i + 1;
                while (e < line.size() && !is_blank(line[e])) ++e;
                const std::string_view text = line.substr(i + 1, e - i - 1);
                keys.push_back(key);
                values.push_back(number_or_fail(r, text, i + 1, "feature value"));
                previous = key;
                have_previous = true;
                pos = e;
                continue;
            }
        }
        const std::string_view f = next_field(line, pos, col);
        if (f.empty()) break;
        const std::size_t colon = f.find(':');
        if (colon == std::string_view::npos && !options.hash_features) {
            r.fail(col + 1, "expected key:value, got \"" + std::string(f) + "\"");
        }
        const std::string_view name = f.substr(0, colon);
        if (first && name == "qid" && colon != std::string_view::npos) {
            key_or_fail(r, f.substr(colon + 1), col + colon + 1, "qid");
            continue;
        }
        if (name.empty()) r.fail(col + 1, "empty feature name");
        const double v =
            colon == std::string_view::npos
                ? 1.0
                : number_or_fail(r, f.substr(colon + 1), col + colon + 1, "feature value");
        std::uint64_t key = 0;
        if (options.hash_features) {
            key = hash_feature(name);
        } else {
            key = key_or_fail(r, name, col, "feature key");
            if (have_previous && key <= previous) {
                r.fail(col + 1, "feature key " + std::to_string(key) +
                                    " does not increase (previous " + std::to_string(previous) +
                                    ")");
            }
            previous = key;
            have_previous = true;
        }
        keys.push_back(key);
        values.push_back(v);
    }
    if (options.hash_features) sort_and_merge(keys, values);
    std::size_t kept = 0;
    for (std::size_t e = 0; e < keys.size(); ++e) {
        if (values[e] == 0) continue;
        keys[kept] = keys[e];
        values[kept++] = values[e];
    }
    keys.resize(kept);
    values.resize(kept);
}

}  // namespace

void Examples::add(int label, std::span<const std::uint64_t> k, std::span<const double> v) {
    ROTOR_ASSERT(label == 1 || label == -1, "labels are -1 or +1");
    ROTOR_ASSERT(k.size() == v.size(), "one value per key");
    labels.push_back(static_cast<std::int8_t>(label));
    keys.insert(keys.end(), k.begin(), k.end());
    values.insert(values.end(), v.begin(), v.end());
    offsets.push_back(keys.size());
}

std::uint64_t hash_feature(std::string_view name) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const char c : name) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
    h ^= h >> 31;
    return h == kInterceptKey ? h - 1 : h;
}

Examples read_examples(LineReader& r, const ReadExamplesOptions& options) {
    Examples out;
    std::vector<std::uint64_t> keys;
    std::vector<double> values;
    std::string_view line;
    while (r.next(line)) {
        std::size_t pos = 0;
        line = line.substr(0, line.find('#'));
        std::size_t col = 0;
        const std::string_view label = next_field(line, pos, col);
        if (label.empty()) continue;
        const int y = label_or_fail(r, label, col);
        read_features(r, line, pos, options, keys, values);
        out.add(y, keys, values);
    }
    return out;
}

Examples read_examples(const std::string& path, const ReadExamplesOptions& options) {
    LineReader reader(path);
    return read_examples(reader, options);
}

}  // namespace rotor::logreg
