#include "core/lasso/dense_reader.h"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/io/number.h"
#include "core/io/parse.h"

namespace rotor::lasso {
namespace {

using core::LineReader;

/// One field: its trimmed bytes and its 0-based column in the line.
struct Field {
    std::string_view text;
    std::size_t col = 0;
};

bool is_trimmed(char c, char sep) { return c == ' ' || (sep == ',' && c == '\t'); }

/// Splits `line` from `start` at every `sep`, trimming each field.
void split(std::string_view line, std::size_t start, char sep, std::vector<Field>& out) {
    out.clear();
    std::size_t pos = start;
    for (;;) {
        const std::size_t end = std::min(line.find(sep, pos), line.size());
        std::size_t b = pos, e = end;
        while (b < e && is_trimmed(line[b], sep)) ++b;
        while (e > b && is_trimmed(line[e - 1], sep)) --e;
        out.push_back({line.substr(b, e - b), b});
        if (end == line.size()) return;
        pos = end + 1;
    }
}

std::string unquote(std::string_view s) {
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
    return std::string(s);
}

/// The 0-based target column among `fields` columns.
std::size_t target_column(const ReadDenseOptions& o, const std::vector<std::string>& names,
                          std::size_t fields) {
    if (o.target.empty()) return fields - 1;
    if (std::all_of(o.target.begin(), o.target.end(),
                    [](char c) { return c >= '0' && c <= '9'; })) {
        const std::size_t k = std::stoul(o.target.substr(0, 9));
        if (o.target.size() > 9 || k < 1 || k > fields) {
            throw ConfigError("target",
                              "column " + o.target + " is not in 1.." + std::to_string(fields));
        }
        return k - 1;
    }
    if (names.empty()) throw ConfigError("target", "\"" + o.target + "\" needs a header line");
    const auto it = std::find(names.begin(), names.end(), o.target);
    if (it == names.end()) throw ConfigError("target", "no column named \"" + o.target + "\"");
    return static_cast<std::size_t>(it - names.begin());
}

}  // namespace

RawData read_dense(LineReader& r, const ReadDenseOptions& options) {
    RawData out;
    out.dense = true;
    std::vector<Field> fields;
    std::vector<double> row;
    std::vector<std::uint32_t> cols;
    std::size_t width = 0;  // fields per line, 0 before the first data line
    std::size_t target = 0;
    char sep = ',';
    std::string_view line;
    while (r.next(line)) {
        std::size_t start = core::skip_blanks(line, 0);
        if (start == line.size() || line[start] == '#') continue;
        if (width == 0) {
            sep = line.find(',', start) != std::string_view::npos ? ',' : '\t';
            split(line, start, sep, fields);
            if (fields.size() < 2) {
                r.fail(start + 1,
                       "one column: a target and at least one feature are needed "
                       "(separators are ',' or a tab)");
            }
            width = fields.size();
            const bool header = options.header == DenseHeader::kPresent ||
                                (options.header == DenseHeader::kAuto &&
                                 std::any_of(fields.begin(), fields.end(), [](const Field& f) {
                                     return !core::parse_number(f.text);
                                 }));
            std::vector<std::string> names;
            if (header) {
                for (const Field& f : fields) names.push_back(unquote(f.text));
            }
            target = target_column(options, names, width);
            out.features = static_cast<std::uint32_t>(width - 1);
            cols.resize(width - 1);
            std::iota(cols.begin(), cols.end(), 0u);
            for (std::size_t k = 0; k < names.size(); ++k) {
                if (k != target) out.feature_names.push_back(names[k]);
            }
            if (header) continue;
        }
        split(line, start, sep, fields);
        if (fields.size() != width) {
            const std::size_t col = fields.size() > width ? fields[width].col : line.size();
            r.fail(col + 1, std::to_string(fields.size()) + " fields, the first line has " +
                                std::to_string(width));
        }
        row.clear();
        double y = 0;
        for (std::size_t k = 0; k < width; ++k) {
            const Field& f = fields[k];
            if (f.text.empty()) r.fail(f.col + 1, "empty field (missing values are not supported)");
            const auto v = core::parse_number(f.text);
            if (!v) {
                r.fail(f.col + 1, "\"" + std::string(f.text) + "\" is not a finite number");
            }
            if (k == target) {
                y = *v;
            } else {
                row.push_back(*v);
            }
        }
        if (out.targets.size() >= 0xFFFFFFFFu) r.fail(1, "more than 2^32 - 1 samples");
        out.add_sample(y, cols, row);
        const std::uint64_t bytes = out.reading_bytes();
        if (bytes > options.limits.max_bytes)
            options.limits.refuse_bytes(bytes, r.name(), r.line_number(), 1, "the samples");
    }
    return out;
}

RawData read_dense(const std::string& path, const ReadDenseOptions& options) {
    LineReader reader(path);
    return read_dense(reader, options);
}

}  // namespace rotor::lasso
