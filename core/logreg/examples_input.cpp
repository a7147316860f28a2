#include "core/logreg/examples_input.h"

#include <algorithm>
#include <bit>
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

namespace {

using Bytes16 = char __attribute__((vector_size(16)));  // GCC/Clang vector extension
using Counts16 = unsigned char __attribute__((vector_size(16)));

/// 0 or −1 (all ones) in each lane: the byte is not a blank (' ', '\t', '\r').
Bytes16 not_blank(Bytes16 b) noexcept { return (b != ' ') & (b != '\t') & (b != '\r'); }

/// The blank-separated fields of [p, e), a line without its '\n': the non-blank bytes whose
/// predecessor is blank or the line's start, 16 bytes at a time.
std::uint64_t count_fields(const char* p, const char* e) {
    const auto n = static_cast<std::size_t>(e - p);
    if (n == 0) return 0;
    const auto blank = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; };
    std::uint64_t fields = blank(p[0]) ? 0 : 1;
    std::size_t i = 1;
    while (i + 16 <= n) {
        Counts16 starts{};  // per lane, the starts seen (at most 255 rounds before a flush)
        for (int round = 0; round < 255 && i + 16 <= n; ++round, i += 16) {
            Bytes16 cur, prev;
            std::memcpy(&cur, p + i, 16);
            std::memcpy(&prev, p + i - 1, 16);
            starts -= std::bit_cast<Counts16>(not_blank(cur) & ~not_blank(prev));  // −255 ≡ +1
        }
        for (int lane = 0; lane < 16; ++lane) fields += starts[lane];
    }
    for (; i < n; ++i) fields += !blank(p[i]) && blank(p[i - 1]) ? 1 : 0;
    return fields;
}

}  // namespace

TextCount count_text(std::string_view data, TextRange range) {
    TextCount c;
    const char* p = data.data() + range.begin;
    const char* const end = data.data() + range.end;
    while (p < end) {
        const auto* nl =
            static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
        const std::uint64_t fields = count_fields(p, nl != nullptr ? nl : end);
        if (fields > 0) {
            ++c.lines;
            c.fields += fields - 1;
        }
        if (nl == nullptr) break;
        ++c.newlines;
        p = nl + 1;
    }
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
