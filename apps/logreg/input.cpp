#include "apps/logreg/input.h"

#include <algorithm>

#include "core/base/error.h"
#include "core/io/line_reader.h"
#include "core/io/mapped_file.h"
#include "core/logreg/examples_binary.h"
#include "train/checkpoint_dir.h"

namespace rotor::logreg {
namespace {

constexpr std::uint64_t kHashBase = 0x9E3779B97F4A7C15ULL;  // odd: P^k never vanishes mod 2^64

std::uint64_t power(std::uint64_t base, std::uint64_t e) {
    std::uint64_t r = 1;
    for (; e > 0; e >>= 1, base *= base)
        if (e & 1) r *= base;
    return r;
}

std::string_view text_of(const core::MappedFile& f) {
    return {reinterpret_cast<const char*>(f.bytes().data()), f.bytes().size()};
}

/// gzip: the whole stream is decompressed and counted (no byte ranges).
PartCount count_gzip(const std::string& path) {
    PartCount c;
    c.form = ExamplesForm::kGzip;
    core::LineReader r(path);
    std::string_view line;
    while (r.next(line)) {
        const TextCount t = count_text(line, {0, line.size()});
        c.examples += t.lines;
        c.nonzeros += t.fields;
    }
    c.parsed_examples = c.examples;
    c.parsed_nonzeros = c.nonzeros;
    c.keys = c.nonzeros + 1;
    return c;
}

}  // namespace

PartCount count_part(const std::string& path, std::size_t w, std::size_t workers) {
    PartCount c;
    c.form = examples_form(path);
    if (c.form == ExamplesForm::kGzip) {
        PartCount g = count_gzip(path);
        g.examples = g.examples / workers + 1;  // the share kept
        return g;
    }
    if (c.form == ExamplesForm::kBinary) {
        const ExamplesBinaryInfo info = read_examples_binary_info(path, w, workers);
        c.examples = info.part_examples;
        c.nonzeros = info.part_nonzeros;
        c.keys = info.keys + 1;
        return c;
    }
    const core::MappedFile file(path);
    const std::string_view data = text_of(file);
    const TextCount t = count_text(data, text_range(data, w, workers));
    c.newlines = t.newlines;
    c.examples = t.lines;
    c.nonzeros = t.fields;
    c.keys = t.fields + 1;
    return c;
}

Examples read_part(const std::string& path, const PartCount& count, std::size_t w,
                   std::size_t workers, std::uint64_t first_line,
                   const ReadExamplesOptions& options, bool& hashed) {
    hashed = false;
    switch (count.form) {
        case ExamplesForm::kBinary: {
            ExamplesBinaryPart p = read_examples_binary(path, w, workers);
            hashed = p.info.hashed;
            return std::move(p.examples);
        }
        case ExamplesForm::kGzip:
            return share_of(read_examples(path, options), w, workers);
        case ExamplesForm::kText:
            break;
    }
    const core::MappedFile file(path);
    const std::string_view data = text_of(file);
    return read_examples_range(path, data, text_range(data, w, workers), first_line, options);
}

Examples read_whole(const std::string& path, bool hashed, const std::string& by) {
    if (examples_form(path) == ExamplesForm::kBinary) {
        ExamplesBinaryPart p = read_examples_binary(path);
        if (p.info.hashed != hashed)
            throw InputError(path, hashed ? "holds numeric keys but " + by + " hashes features"
                                          : "holds hashed features but " + by + " does not");
        return std::move(p.examples);
    }
    ReadExamplesOptions ro;
    ro.hash_features = hashed;
    return read_examples(path, ro);
}

DataFingerprint fingerprint(const Examples& part) {
    DataFingerprint f{part.size(), part.nonzeros(), 0};
    for (std::size_t i = 0; i < part.size(); ++i) {
        std::uint64_t h = train::fnv1a(std::as_bytes(std::span(&part.labels[i], 1)));
        h = train::fnv1a(std::as_bytes(part.keys_of(i)), h);
        h = train::fnv1a(std::as_bytes(part.values_of(i)), h);
        f.hash = f.hash * kHashBase + h;
    }
    return f;
}

DataFingerprint combine(std::span<const DataFingerprint> parts) {
    DataFingerprint f;
    for (const DataFingerprint& p : parts) {
        f.hash = f.hash * power(kHashBase, p.examples) + p.hash;
        f.examples += p.examples;
        f.nonzeros += p.nonzeros;
    }
    return f;
}

std::uint64_t estimate_memory(const PlanInputs& in) {
    const PartCount& c = in.count;
    const std::uint64_t keys = std::min(c.nonzeros + 1, in.all_keys);
    std::uint64_t bytes = 0;
    // gzip parses the whole file first; then the part as Examples (16 a nonzero, 9 an example),
    // its column form (12 a nonzero, 16 a key, 9 an example), the worker's w, blocks and index
    // (24 a key), scratch (28 an example, 8 a key), and an evaluation's full gradient (exact
    // sums of g and u: 64 a key; 40 more as limbs to send).
    bytes += 16 * c.parsed_nonzeros + 9 * c.parsed_examples;
    bytes += 16 * c.nonzeros + 9 * c.examples;
    bytes += 12 * c.nonzeros + 18 * c.examples + 16 * keys;
    bytes += 28 * c.examples + 32 * keys + 104 * keys;
    // Each thread's column slices of every block: begin, end and max |x| (24 a key); with
    // threads, one more set over every row (the team alone runs it).
    const int sets = in.threads > 1 ? in.threads + 1 : 1;
    bytes += 24 * keys * static_cast<std::uint64_t>(sets);
    if (in.server) {
        // w in a map (64 a key) over this server's share; pending sums of the iterations in
        // flight (112 a key of a block).
        const std::uint64_t share = in.all_keys / in.servers + 1;
        const std::uint64_t flight = in.delay < 0 ? 17 : std::min<std::int64_t>(in.delay, 16) + 1;
        bytes += 64 * share + 112 * flight * (share / std::max<std::uint32_t>(in.blocks, 1) + 1);
    }
    if (in.rank0) {
        // the gathered model (keys and w, three copies), the evaluations' gradients, the
        // checkpoint's margins (two copies)
        bytes += 48 * in.all_keys + 40 * in.all_keys + 16 * in.all_examples;
    }
    return bytes + (std::uint64_t{16} << 20);  // buffers and the rest
}

}  // namespace rotor::logreg
