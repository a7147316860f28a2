#include "core/lasso/libsvm_reader.h"

#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/io/number.h"
#include "core/io/parse.h"

namespace rotor::lasso {
namespace {

using core::is_blank;
using core::LineReader;
using core::skip_blanks;

constexpr std::uint64_t kMaxIndex = 0xFFFFFFFEu;  // 1-based; p must fit in a uint32

/// The next blank-separated field of `line` from `pos` (empty at the end); pos moves past it.
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

/// The unsigned integer spelt by all of `s`, or fails at `col`.
std::uint64_t index_or_fail(const LineReader& r, std::string_view s, std::size_t col,
                            const char* what) {
    std::size_t pos = 0;
    std::uint64_t v = 0;
    const core::ParseStatus st = core::parse_uint(s, pos, v);
    if (st == core::ParseStatus::kOverflow || (st == core::ParseStatus::kOk && v > kMaxIndex)) {
        r.fail(col + 1, std::string(what) + " " + std::string(s) + " is too large");
    }
    if (st != core::ParseStatus::kOk || pos != s.size()) {
        r.fail(col + 1,
               std::string(what) + " \"" + std::string(s) + "\" is not an unsigned integer");
    }
    return v;
}

}  // namespace

RawData read_libsvm(LineReader& r, const ReadLibsvmOptions& options) {
    RawData out;
    std::vector<std::uint32_t> cols;
    std::vector<double> values;
    std::uint64_t max_index = options.min_features;
    std::string_view line;
    while (r.next(line)) {
        std::size_t pos = 0;
        line = line.substr(0, line.find('#'));
        std::size_t col = 0;
        const std::string_view target = next_field(line, pos, col);
        if (target.empty()) continue;
        const double y = number_or_fail(r, target, col, "target");
        cols.clear();
        values.clear();
        std::uint64_t previous = 0;
        bool first = true;
        for (std::string_view f = next_field(line, pos, col); !f.empty();
             f = next_field(line, pos, col), first = false) {
            const std::size_t colon = f.find(':');
            if (colon == std::string_view::npos) {
                r.fail(col + 1, "expected index:value, got \"" + std::string(f) + "\"");
            }
            const std::string_view key = f.substr(0, colon);
            const std::string_view val = f.substr(colon + 1);
            if (first && key == "qid") {
                index_or_fail(r, val, col + colon + 1, "qid");
                continue;
            }
            const std::uint64_t index = index_or_fail(r, key, col, "feature index");
            if (index == 0) r.fail(col + 1, "feature index 0: indices are 1-based");
            if (index <= previous) {
                r.fail(col + 1, "feature index " + std::to_string(index) +
                                    " does not increase (previous " + std::to_string(previous) +
                                    ")");
            }
            previous = index;
            const double v = number_or_fail(r, val, col + colon + 1, "feature value");
            if (v == 0) continue;
            cols.push_back(static_cast<std::uint32_t>(index - 1));
            values.push_back(v);
        }
        if (previous > max_index) max_index = previous;
        if (out.targets.size() >= 0xFFFFFFFFu) r.fail(1, "more than 2^32 - 1 samples");
        out.add_sample(y, cols, values);
        const std::uint64_t bytes = out.reading_bytes();
        if (bytes > options.limits.max_bytes)
            options.limits.refuse_bytes(bytes, r.name(), r.line_number(), 1, "the samples");
    }
    out.features = static_cast<std::uint32_t>(max_index);
    return out;
}

RawData read_libsvm(const std::string& path, const ReadLibsvmOptions& options) {
    LineReader reader(path);
    return read_libsvm(reader, options);
}

}  // namespace rotor::lasso
