#include "core/io/dense_table.h"

#include <algorithm>
#include <string_view>

#include "core/io/number.h"
#include "core/io/parse.h"

namespace rotor::core {
namespace {

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

}  // namespace

std::size_t read_dense_table(
    LineReader& r, const DenseTableOptions& options,
    const std::function<void(const std::vector<std::string>&, std::size_t)>& on_first,
    const std::function<void(std::span<const double>)>& on_row) {
    std::vector<Field> fields;
    std::vector<double> row;
    std::size_t width = 0;  // fields per line, 0 before the first data line
    char sep = ',';
    std::string_view line;
    while (r.next(line)) {
        const std::size_t start = skip_blanks(line, 0);
        if (start == line.size() || line[start] == '#') continue;
        if (width == 0) {
            sep = line.find(',', start) != std::string_view::npos ? ',' : '\t';
            split(line, start, sep, fields);
            if (fields.size() < options.min_columns) {
                r.fail(start + 1, options.too_few);
            }
            width = fields.size();
            const bool header = options.header == DenseHeader::kPresent ||
                                (options.header == DenseHeader::kAuto &&
                                 std::any_of(fields.begin(), fields.end(),
                                             [](const Field& f) { return !parse_number(f.text); }));
            std::vector<std::string> names;
            if (header) {
                for (const Field& f : fields) names.push_back(unquote(f.text));
            }
            on_first(names, width);
            if (header) continue;
        }
        split(line, start, sep, fields);
        if (fields.size() != width) {
            const std::size_t col = fields.size() > width ? fields[width].col : line.size();
            r.fail(col + 1, std::to_string(fields.size()) + " fields, the first line has " +
                                std::to_string(width));
        }
        row.clear();
        for (const Field& f : fields) {
            if (f.text.empty()) r.fail(f.col + 1, "empty field (missing values are not supported)");
            const auto v = parse_number(f.text);
            if (!v) r.fail(f.col + 1, "\"" + std::string(f.text) + "\" is not a finite number");
            row.push_back(*v);
        }
        on_row(row);
    }
    return width;
}

}  // namespace rotor::core
