#include "core/io/svmlight.h"

#include <algorithm>
#include <numeric>

#include "core/base/error.h"
#include "core/io/number.h"
#include "core/io/parse.h"

namespace rotor::core {
namespace {

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
    const auto v = parse_number(text);
    if (!v) {
        r.fail(col + 1,
               std::string(what) + " \"" + std::string(text) + "\" is not a finite number");
    }
    return *v;
}

/// The largest key a kind accepts: indices must leave p = index in a uint32, and a key of
/// 2^64 - 1 is logistic regression's intercept.
std::uint64_t max_key(SvmlightKeys kind) {
    return kind == SvmlightKeys::kIndex ? std::uint64_t{0xFFFFFFFEu} : ~std::uint64_t{0} - 1;
}

/// The unsigned integer spelt by all of `s`, at most `max`, or fails at `col`.
std::uint64_t key_or_fail(const LineReader& r, std::string_view s, std::size_t col,
                          const std::string& what, std::uint64_t max) {
    std::size_t pos = 0;
    std::uint64_t v = 0;
    const ParseStatus st = parse_uint(s, pos, v);
    if (st == ParseStatus::kOverflow || (st == ParseStatus::kOk && v > max)) {
        r.fail(col + 1, what + " " + std::string(s) + " is too large");
    }
    if (st != ParseStatus::kOk || pos != s.size()) {
        r.fail(col + 1, what + " \"" + std::string(s) + "\" is not an unsigned integer");
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

}  // namespace

SvmlightReader::SvmlightReader(LineReader& reader, SvmlightKeys keys, HashFn hash)
    : reader_(reader), kind_(keys), hash_(hash) {
    ROTOR_ASSERT(kind_ != SvmlightKeys::kHashed || hash_ != nullptr, "hashed keys need a hash");
}

bool SvmlightReader::next(const char* target_name) {
    std::string_view line;
    while (reader_.next(line)) {
        std::size_t pos = 0;
        line = line.substr(0, line.find('#'));
        target_text_ = next_field(line, pos, target_col_);
        if (target_text_.empty()) continue;
        target_ = number_or_fail(reader_, target_text_, target_col_, target_name);
        read_features(line, pos);
        return true;
    }
    return false;
}

void SvmlightReader::read_features(std::string_view line, std::size_t pos) {
    const LineReader& r = reader_;
    const bool hashed = kind_ == SvmlightKeys::kHashed;
    const bool index = kind_ == SvmlightKeys::kIndex;
    const std::string key_what = index ? "feature index" : "feature key";
    const std::uint64_t max = max_key(kind_);
    keys_.clear();
    values_.clear();
    largest_ = 0;
    std::size_t col = 0;
    bool first = true;
    bool have_previous = false;
    std::uint64_t previous = 0;
    for (;; first = false) {
        if (!hashed) {
            // The common field, "key:value" with a key of at most 19 digits (no overflow), valid
            // and increasing: one scan. Anything else (and every error) takes the general path.
            pos = skip_blanks(line, pos);
            std::size_t i = pos;
            std::uint64_t key = 0;
            while (i < line.size() && i - pos < 19) {
                const unsigned d = static_cast<unsigned char>(line[i]) - unsigned{'0'};
                if (d > 9) break;
                key = key * 10 + d;
                ++i;
            }
            if (i > pos && i < line.size() && line[i] == ':' && key <= max &&
                (!index || key != 0) && (!have_previous || key > previous)) {
                std::size_t e = i + 1;
                while (e < line.size() && !is_blank(line[e])) ++e;
                const std::string_view text = line.substr(i + 1, e - i - 1);
                keys_.push_back(key);
                values_.push_back(number_or_fail(r, text, i + 1, "feature value"));
                previous = key;
                have_previous = true;
                pos = e;
                continue;
            }
        }
        const std::string_view f = next_field(line, pos, col);
        if (f.empty()) break;
        const std::size_t colon = f.find(':');
        if (colon == std::string_view::npos && !hashed) {
            r.fail(col + 1, std::string("expected ") + (index ? "index" : "key") +
                                ":value, got \"" + std::string(f) + "\"");
        }
        const std::string_view name = f.substr(0, colon);
        if (first && name == "qid" && colon != std::string_view::npos) {
            key_or_fail(r, f.substr(colon + 1), col + colon + 1, "qid", max);
            continue;
        }
        if (name.empty() && !index) r.fail(col + 1, "empty feature name");
        std::uint64_t key = 0;
        if (hashed) {
            key = hash_(name);
        } else {
            key = key_or_fail(r, name, col, key_what, max);
            if (index && key == 0) r.fail(col + 1, "feature index 0: indices are 1-based");
            if (have_previous && key <= previous) {
                r.fail(col + 1, key_what + " " + std::to_string(key) +
                                    " does not increase (previous " + std::to_string(previous) +
                                    ")");
            }
            previous = key;
            have_previous = true;
        }
        const double v =
            colon == std::string_view::npos
                ? 1.0
                : number_or_fail(r, f.substr(colon + 1), col + colon + 1, "feature value");
        keys_.push_back(key);
        values_.push_back(v);
    }
    if (hashed) {
        sort_and_merge(keys_, values_);
    } else if (have_previous) {
        largest_ = previous;
    }
    std::size_t kept = 0;
    for (std::size_t e = 0; e < keys_.size(); ++e) {
        if (values_[e] == 0) continue;
        keys_[kept] = keys_[e];
        values_[kept++] = values_[e];
    }
    keys_.resize(kept);
    values_.resize(kept);
}

}  // namespace rotor::core
