#include "core/logreg/model_file.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/byte_source.h"
#include "core/io/checksum.h"
#include "core/io/line_reader.h"
#include "core/io/text_fields.h"
#include "core/io/whole_file.h"
#include "core/logreg/examples.h"

namespace rotor::logreg {
namespace {

using core::LineReader;
using core::next_line;

constexpr std::string_view kMagic = "rotor-logreg-model 2";
/// Models of rotor before the crc32 line: read, unchecked.
constexpr std::string_view kMagicV1 = "rotor-logreg-model 1";

void read_weights(LineReader& r, std::uint64_t count, Model& m) {
    for (std::uint64_t n = 0; n < count; ++n) {
        const std::string_view line = next_line(r, "weight lines");
        const std::size_t tab = line.find('\t');
        if (tab == std::string_view::npos) r.fail(1, "expected \"<key>\\t<weight>\"");
        const std::uint64_t key = core::unsigned_at(r, line.substr(0, tab), 1);
        if (key == kInterceptKey) r.fail(1, "the intercept's key among the weights");
        if (!m.keys.empty() && key <= m.keys.back()) r.fail(1, "keys do not increase");
        const double w = core::finite_number_at(r, line.substr(tab + 1), tab + 2);
        if (w == 0) r.fail(tab + 2, "a zero weight");
        m.keys.push_back(key);
        m.weights.push_back(w);
    }
    std::string_view extra;
    if (r.next(extra)) r.fail(1, "more lines than the weights announced");
}

}  // namespace

double Model::margin(std::span<const std::uint64_t> k, std::span<const double> v) const {
    double m = intercept;
    std::size_t j = 0;
    for (std::size_t i = 0; i < k.size(); ++i) {
        while (j < keys.size() && keys[j] < k[i]) ++j;
        if (j < keys.size() && keys[j] == k[i]) m += weights[j] * v[i];
    }
    return m;
}

void write_model(const std::string& path, const Model& m) {
    std::string text = fmt::format(
        "{}\nlambda {:.17g}\nhashed {}\niterations {}\nobjective {:.17g}\nintercept "
        "{:.17g}\nweights {}\n",
        kMagic, m.lambda, m.hashed ? 1 : 0, m.iterations, m.objective, m.intercept, m.keys.size());
    for (std::size_t i = 0; i < m.keys.size(); ++i) {
        text += fmt::format("{}\t{:.17g}\n", m.keys[i], m.weights[i]);
    }
    core::write_file_atomically(path, text + core::crc32_line(text, ' '));
}

Model read_model(const std::string& path) { return parse_model(core::read_whole_file(path), path); }

Model parse_model(const std::string& text, const std::string& path) {
    // Version 2 ends with the CRC-32 of every byte before its last line, checked first: any
    // flipped bit, truncation or appended byte is refused as such. (One flipped bit cannot turn
    // the magic's 2 into 1.)
    const bool checked = text.starts_with(std::string(kMagic) + "\n");
    const std::string_view body = checked ? core::checked_body(text, path, ' ') : text;
    LineReader r(core::memory_byte_source(path, body));
    const std::string_view magic = next_line(r, "header");
    if (magic != kMagic && magic != kMagicV1) r.fail(1, fmt::format("not a \"{}\" file", kMagic));
    Model m;
    m.lambda = core::finite_number_at(r, core::named_field(r, "lambda"), 8);
    const std::string_view hashed = core::named_field(r, "hashed");
    if (hashed != "0" && hashed != "1") r.fail(8, "hashed is 0 or 1");
    m.hashed = hashed == "1";
    m.iterations = core::unsigned_at(r, core::named_field(r, "iterations"), 12);
    m.objective = core::finite_number_at(r, core::named_field(r, "objective"), 11);
    m.intercept = core::finite_number_at(r, core::named_field(r, "intercept"), 11);
    read_weights(r, core::unsigned_at(r, core::named_field(r, "weights"), 9), m);
    return m;
}

}  // namespace rotor::logreg
