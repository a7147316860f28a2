#include "core/rica/model_file.h"

#include <fmt/format.h>

#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/byte_source.h"
#include "core/io/checksum.h"
#include "core/io/dense_table.h"
#include "core/io/line_reader.h"
#include "core/io/text_fields.h"
#include "core/io/whole_file.h"

namespace rotor::rica {
namespace {

using core::LineReader;
using core::next_line;

/// The numbers of `text` separated by `sep`: exactly `want` of them.
void numbers(LineReader& r, std::string_view text, char sep, std::size_t want, std::size_t col0,
             std::vector<double>& out) {
    std::size_t pos = 0, got = 0;
    while (pos <= text.size() && !text.empty()) {
        const std::size_t end = std::min(text.find(sep, pos), text.size());
        if (got == want) r.fail(col0 + pos, fmt::format("more than {} numbers", want));
        out.push_back(core::finite_number_at(r, text.substr(pos, end - pos), col0 + pos));
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
    m.components = core::unsigned_at(r, core::named_field(r, "components", false), 12);
    m.dimension = core::unsigned_at(r, core::named_field(r, "dimension", false), 11);
    if (m.components == 0 || m.dimension == 0 || m.components > (1U << 20) ||
        m.dimension > (1U << 16))
        r.fail(1, "components in 1..2^20 and dimension in 1..2^16");
    m.lambda = core::finite_number_at(r, core::named_field(r, "lambda", false), 8);
    m.iterations = core::unsigned_at(r, core::named_field(r, "iterations", false), 12);
    m.objective = core::finite_number_at(r, core::named_field(r, "objective", false), 11);
    m.time_s = core::finite_number_at(r, core::named_field(r, "time_s", false), 8);
    const std::string_view metric = core::named_field(r, "metric", false);
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
