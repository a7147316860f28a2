#include "core/rica/model_file.h"

#include <fmt/format.h>

#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/byte_source.h"
#include "core/io/checksum.h"
#include "core/io/dense_table.h"
#include "core/io/line_reader.h"
#include "core/io/number.h"
#include "core/io/parse.h"
#include "core/io/whole_file.h"

namespace rotor::rica {
namespace {

using core::LineReader;

std::string_view next_line(LineReader& r, const char* what) {
    std::string_view line;
    if (!r.next(line)) r.fail(1, std::string("missing ") + what);
    return line;
}

/// The value of a `<name> <value>` line.
std::string_view field(LineReader& r, std::string_view name) {
    const std::string_view line = next_line(r, std::string(name).c_str());
    if (!line.starts_with(name) || (line.size() > name.size() && line[name.size()] != ' '))
        r.fail(1, fmt::format("expected \"{} <value>\"", name));
    return line.size() > name.size() ? line.substr(name.size() + 1) : std::string_view();
}

double number(LineReader& r, std::string_view text, std::size_t col) {
    const auto v = core::parse_number(text);
    if (!v) r.fail(col, fmt::format("\"{}\" is not a finite number", text));
    return *v;
}

std::uint64_t count(LineReader& r, std::string_view text, std::size_t col) {
    std::size_t pos = 0;
    std::uint64_t v = 0;
    if (core::parse_uint(text, pos, v) != core::ParseStatus::kOk || pos != text.size())
        r.fail(col, fmt::format("\"{}\" is not an unsigned integer", text));
    return v;
}

/// The numbers of `text` separated by `sep`: exactly `want` of them.
void numbers(LineReader& r, std::string_view text, char sep, std::size_t want, std::size_t col0,
             std::vector<double>& out) {
    std::size_t pos = 0, got = 0;
    while (pos <= text.size() && !text.empty()) {
        const std::size_t end = std::min(text.find(sep, pos), text.size());
        if (got == want) r.fail(col0 + pos, fmt::format("more than {} numbers", want));
        out.push_back(number(r, text.substr(pos, end - pos), col0 + pos));
        ++got;
        pos = end + 1;
    }
    if (got != want) r.fail(col0 + text.size(), fmt::format("{} numbers, expected {}", got, want));
}

}  // namespace

void write_model(const std::string& path, const Model& m) {
    std::string text = fmt::format(
        "{}\ncomponents {}\ndimension {}\nlambda {:.17g}\niterations {}\nobjective {:.17g}\n"
        "time_s {:.17g}\nmetric",
        kModelMagic, m.components, m.dimension, m.lambda, m.iterations, m.objective, m.time_s);
    for (const double h : m.metric) text += fmt::format(" {:.17g}", h);
    text += '\n';
    for (std::size_t j = 0; j < m.components; ++j) {
        for (std::size_t k = 0; k < m.dimension; ++k)
            text += fmt::format("{}{:.17g}", k == 0 ? "" : "\t", m.w[j * m.dimension + k]);
        text += '\n';
    }
    core::write_file_atomically(path, text + core::crc32_line(text, ' '));
}

Model read_model(const std::string& path) { return parse_model(core::read_whole_file(path), path); }

Model parse_model(const std::string& text, const std::string& path) {
    if (!text.starts_with(std::string(kModelMagic) + "\n")) {
        LineReader r(core::memory_byte_source(path, text));
        next_line(r, "header");
        r.fail(1, fmt::format("not a \"{}\" file", kModelMagic));
    }
    const std::string_view body = core::checked_body(text, path, ' ');
    LineReader r(core::memory_byte_source(path, body));
    next_line(r, "header");
    Model m;
    m.components = count(r, field(r, "components"), 12);
    m.dimension = count(r, field(r, "dimension"), 11);
    if (m.components == 0 || m.dimension == 0 || m.components > (1U << 20) ||
        m.dimension > (1U << 16))
        r.fail(1, "components in 1..2^20 and dimension in 1..2^16");
    m.lambda = number(r, field(r, "lambda"), 8);
    m.iterations = count(r, field(r, "iterations"), 12);
    m.objective = number(r, field(r, "objective"), 11);
    m.time_s = number(r, field(r, "time_s"), 8);
    const std::string_view metric = field(r, "metric");
    if (!metric.empty()) numbers(r, metric, ' ', m.components, 8, m.metric);
    m.w.reserve(m.components * m.dimension);
    for (std::size_t j = 0; j < m.components; ++j)
        numbers(r, next_line(r, "rows of W"), '\t', m.dimension, 1, m.w);
    std::string_view extra;
    if (r.next(extra)) r.fail(1, "more lines than the components announced");
    return m;
}

Dense read_observations(const std::string& path) {
    LineReader r(path);
    Dense d;
    core::DenseTableOptions table;
    core::read_dense_table(
        r, table, [&](const std::vector<std::string>&, std::size_t width) { d.p = width; },
        [&](std::span<const double> values) {
            d.x.insert(d.x.end(), values.begin(), values.end());
            ++d.n;
        });
    if (d.n == 0) throw InputError(path, "no observations");
    return d;
}

}  // namespace rotor::rica
