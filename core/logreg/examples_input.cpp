#include "core/logreg/examples_input.h"

#include <algorithm>
#include <cstring>
#include <fstream>

#include "core/base/error.h"
#include "core/io/byte_source.h"
#include "core/io/line_reader.h"
#include "core/logreg/examples_binary.h"

namespace rotor::logreg {

ExamplesForm examples_form(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "cannot open");
    char head[8] = {};
    in.read(head, sizeof head);
    const std::string_view prefix(head, static_cast<std::size_t>(in.gcount()));
    if (has_examples_binary_magic(prefix)) return ExamplesForm::kBinary;
    if (core::has_gzip_magic(prefix)) return ExamplesForm::kGzip;
    return ExamplesForm::kText;
}

namespace {

/// The start of the first line whose first byte is at or after `at`.
std::uint64_t line_start_at(std::string_view data, std::uint64_t at) {
    if (at == 0) return 0;
    if (at >= data.size()) return data.size();
    const void* nl = std::memchr(data.data() + at - 1, '\n', data.size() - (at - 1));
    if (nl == nullptr) return data.size();
    return static_cast<std::uint64_t>(static_cast<const char*>(nl) - data.data()) + 1;
}

}  // namespace

TextRange text_range(std::string_view data, std::size_t part, std::size_t parts) {
    const std::uint64_t size = data.size();
    const auto cut = [&](std::size_t p) {
        // size·p/parts without overflow for any file size
        const std::uint64_t q = size / parts, r = size % parts;
        return q * p + r * p / parts;
    };
    return {line_start_at(data, cut(part)), line_start_at(data, cut(part + 1))};
}

TextCount count_text(std::string_view data, TextRange range) {
    TextCount c;
    bool in_field = false;
    std::uint64_t fields_on_line = 0;
    const auto end_line = [&] {
        if (fields_on_line > 0) {
            ++c.lines;
            c.fields += fields_on_line - 1;
        }
        fields_on_line = 0;
        in_field = false;
    };
    for (std::uint64_t i = range.begin; i < range.end; ++i) {
        const char ch = data[i];
        if (ch == '\n') {
            ++c.newlines;
            end_line();
        } else if (ch == ' ' || ch == '\t' || ch == '\r') {
            in_field = false;
        } else if (!in_field) {
            in_field = true;
            ++fields_on_line;
        }
    }
    end_line();
    return c;
}

Examples read_examples_range(const std::string& path, std::string_view data, TextRange range,
                             std::uint64_t first_line, const ReadExamplesOptions& options) {
    core::LineReader reader(
        core::memory_byte_source(path, data.substr(range.begin, range.end - range.begin)));
    reader.number_from(first_line);
    return read_examples(reader, options);
}

Examples share_of(const Examples& all, std::size_t part, std::size_t parts) {
    Examples out;
    const std::size_t n = all.size();
    for (std::size_t i = n * part / parts; i < n * (part + 1) / parts; ++i) {
        out.add(all.labels[i], all.keys_of(i), all.values_of(i));
    }
    return out;
}

}  // namespace rotor::logreg
