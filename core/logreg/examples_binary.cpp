#include "core/logreg/examples_binary.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/checksum.h"
#include "core/io/mapped_file.h"

namespace rotor::logreg {
namespace {

constexpr char kMagic[8] = {'R', 'O', 'T', 'O', 'R', 'L', 'R', 'X'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kHashed = 1;  // flags bit 0

/// The 64-byte header at offset 0 (docs/formats.md, "Binary examples").
struct Header {
    char magic[8];
    std::uint32_t version;
    std::uint32_t flags;          ///< bit 0: hashed keys; others 0
    std::uint64_t examples;       ///< n
    std::uint64_t nonzeros;       ///< entries
    std::uint64_t keys;           ///< distinct keys
    std::uint64_t chunk_rows;     ///< rows per CRC chunk (>= 1)
    std::uint64_t payload_bytes;  ///< file size - 64
    std::uint32_t table_crc;      ///< CRC-32 of the chunk table
    std::uint32_t header_crc;     ///< CRC-32 of the 60 bytes before it
};
static_assert(sizeof(Header) == 64);

std::uint64_t padded(std::uint64_t n) { return (n + 7) / 8 * 8; }

std::uint32_t crc_of(std::uint32_t crc, const void* p, std::size_t n) {
    return core::crc32(std::string_view(static_cast<const char*>(p), n), crc);
}

std::uint32_t header_crc(const Header& h) { return crc_of(0, &h, offsetof(Header, header_crc)); }

/// Section offsets in the file, from the header's sizes.
struct Layout {
    std::uint64_t offsets, keys, values, labels, table, end, chunks;
};

Layout layout_of(const Header& h) {
    Layout l{};
    l.chunks = h.examples == 0 ? 0 : (h.examples + h.chunk_rows - 1) / h.chunk_rows;
    l.offsets = sizeof(Header);
    l.keys = l.offsets + 8 * (h.examples + 1);
    l.values = l.keys + 8 * h.nonzeros;
    l.labels = l.values + 8 * h.nonzeros;
    l.table = l.labels + padded(h.examples);
    l.end = l.table + padded(4 * l.chunks);
    return l;
}

/// CRC-32 of chunk c: its labels, its offsets (the end one included), keys and values.
std::uint32_t chunk_crc(const Header& h, const std::int8_t* labels, const std::uint64_t* offsets,
                        const std::uint64_t* keys, const double* values, std::uint64_t c) {
    const std::uint64_t r0 = c * h.chunk_rows, r1 = std::min(h.examples, r0 + h.chunk_rows);
    std::uint32_t crc = crc_of(0, labels + r0, r1 - r0);
    crc = crc_of(crc, offsets + r0, 8 * (r1 - r0 + 1));
    crc = crc_of(crc, keys + offsets[r0], 8 * (offsets[r1] - offsets[r0]));
    return crc_of(crc, values + offsets[r0], 8 * (offsets[r1] - offsets[r0]));
}

}  // namespace

bool has_examples_binary_magic(std::string_view prefix) noexcept {
    return prefix.size() >= sizeof kMagic && std::memcmp(prefix.data(), kMagic, sizeof kMagic) == 0;
}

void write_examples_binary(const std::string& path, const Examples& ex, bool hashed,
                           std::uint64_t keys) {
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kVersion;
    h.flags = hashed ? kHashed : 0;
    h.examples = ex.size();
    h.nonzeros = ex.nonzeros();
    h.keys = keys;
    h.chunk_rows = kExamplesChunkRows;
    const Layout l = layout_of(h);
    h.payload_bytes = l.end - sizeof(Header);
    std::vector<std::uint32_t> table(l.chunks);
    for (std::uint64_t c = 0; c < l.chunks; ++c)
        table[c] =
            chunk_crc(h, ex.labels.data(), ex.offsets.data(), ex.keys.data(), ex.values.data(), c);
    h.table_crc = crc_of(0, table.data(), 4 * table.size());
    h.header_crc = header_crc(h);
    static constexpr std::byte kZeros[8] = {};
    const auto pad = [](std::uint64_t n) {
        return std::span<const std::byte>(kZeros, static_cast<std::size_t>(padded(n) - n));
    };
    core::AtomicFile out(path);
    out.write_pod(h);
    out.write_pod(std::span(ex.offsets));
    out.write_pod(std::span(ex.keys));
    out.write_pod(std::span(ex.values));
    out.write_pod(std::span(ex.labels));
    out.write(pad(ex.size()));
    out.write_pod(std::span<const std::uint32_t>(table));
    out.write(pad(4 * table.size()));
    out.commit();
}

namespace {

Header checked_header(std::span<const std::byte> bytes, const std::string& name) {
    Header h{};
    if (bytes.size() < sizeof h || !has_examples_binary_magic(std::string_view(
                                       reinterpret_cast<const char*>(bytes.data()), 8)))
        throw InputError(name, "not a binary examples file (no ROTORLRX header)");
    std::memcpy(&h, bytes.data(), sizeof h);
    if (h.header_crc != header_crc(h)) throw InputError(name, "header checksum mismatch");
    if (h.version != kVersion)
        throw InputError(name, "binary examples version " + std::to_string(h.version) +
                                   " (this rotor reads " + std::to_string(kVersion) + ")");
    if ((h.flags & ~kHashed) != 0) throw InputError(name, "unknown flags in the header");
    constexpr std::uint64_t kMax = std::uint64_t{1} << 56;
    if (h.examples > kMax || h.nonzeros > kMax || h.chunk_rows == 0 || h.chunk_rows > kMax)
        throw InputError(name, "impossible sizes in the header");
    const Layout l = layout_of(h);
    if (h.payload_bytes != l.end - sizeof(Header) || bytes.size() != l.end)
        throw InputError(name, "the file size (" + std::to_string(bytes.size()) +
                                   " bytes) disagrees with its header (" + std::to_string(l.end) +
                                   "): truncated or not written by rotor");
    return h;
}

ExamplesBinaryInfo info_of(const Header& h) {
    return {h.examples, h.nonzeros, h.keys, (h.flags & kHashed) != 0};
}

/// The sections as typed pointers (the file is 8-byte aligned: mapped or checked).
struct Sections {
    const std::uint64_t* offsets;
    const std::uint64_t* keys;
    const double* values;
    const std::int8_t* labels;
    const std::uint32_t* table;
};

Sections sections_of(std::span<const std::byte> bytes, const Layout& l) {
    const std::byte* b = bytes.data();
    return {reinterpret_cast<const std::uint64_t*>(b + l.offsets),
            reinterpret_cast<const std::uint64_t*>(b + l.keys),
            reinterpret_cast<const double*>(b + l.values),
            reinterpret_cast<const std::int8_t*>(b + l.labels),
            reinterpret_cast<const std::uint32_t*>(b + l.table)};
}

/// Copies row r into `out` after checking it.
void take_row(const Header& h, const Sections& s, std::uint64_t r, const std::string& name,
              Examples& out) {
    const auto fail = [&](const std::string& what) {
        throw InputError(name, "example " + std::to_string(r + 1) + ": " + what);
    };
    const std::int8_t y = s.labels[r];
    if (y != 1 && y != -1) fail("label " + std::to_string(y) + " is not +1 or -1");
    const std::uint64_t a = s.offsets[r], e = s.offsets[r + 1];
    if (a > e || e > h.nonzeros) fail("offsets out of order");
    for (std::uint64_t k = a; k < e; ++k) {
        if (s.keys[k] == kInterceptKey) fail("feature key 2^64 - 1 is reserved");
        if (k > a && s.keys[k] <= s.keys[k - 1]) fail("feature keys do not increase");
        if (!std::isfinite(s.values[k]) || s.values[k] == 0) fail("a value is zero or not finite");
    }
    out.add(y, std::span(s.keys + a, e - a), std::span(s.values + a, e - a));
}

}  // namespace

ExamplesBinaryPart parse_examples_binary(std::span<const std::byte> bytes, const std::string& name,
                                         std::size_t part, std::size_t parts) {
    ROTOR_ASSERT(part < parts, "part < parts");
    ROTOR_ASSERT(reinterpret_cast<std::uintptr_t>(bytes.data()) % 8 == 0, "8-byte aligned");
    const Header h = checked_header(bytes, name);
    const Layout l = layout_of(h);
    const Sections s = sections_of(bytes, l);
    if (crc_of(0, s.table, 4 * l.chunks) != h.table_crc)
        throw InputError(name, "chunk table checksum mismatch");
    if (s.offsets[0] != 0 || s.offsets[h.examples] != h.nonzeros)
        throw InputError(name, "the offsets do not span the nonzeros");
    ExamplesBinaryPart out;
    out.info = info_of(h);
    const std::uint64_t n = h.examples;
    out.first_row = n * part / parts;
    const std::uint64_t last = n * (part + 1) / parts;
    if (out.first_row == last) return out;
    for (std::uint64_t c = out.first_row / h.chunk_rows; c * h.chunk_rows < last; ++c) {
        const std::uint64_t r0 = c * h.chunk_rows, r1 = std::min(n, r0 + h.chunk_rows);
        for (std::uint64_t r = r0; r < r1; ++r)  // a chunk's CRC reads its offsets' ranges
            if (s.offsets[r] > s.offsets[r + 1] || s.offsets[r + 1] > h.nonzeros)
                throw InputError(name,
                                 "example " + std::to_string(r + 1) + ": offsets out of order");
        if (chunk_crc(h, s.labels, s.offsets, s.keys, s.values, c) != s.table[c])
            throw InputError(name, "checksum mismatch in examples " + std::to_string(r0 + 1) +
                                       ".." + std::to_string(r1));
    }
    for (std::uint64_t r = out.first_row; r < last; ++r) take_row(h, s, r, name, out.examples);
    return out;
}

ExamplesBinaryInfo read_examples_binary_info(const std::string& path, std::size_t part,
                                             std::size_t parts) {
    ROTOR_ASSERT(part < parts, "part < parts");
    const core::MappedFile mapped(path);
    const Header h = checked_header(mapped.bytes(), path);
    ExamplesBinaryInfo info = info_of(h);
    const Sections s = sections_of(mapped.bytes(), layout_of(h));
    const std::uint64_t first = h.examples * part / parts, last = h.examples * (part + 1) / parts;
    info.part_examples = last - first;
    const std::uint64_t a = std::min(s.offsets[first], h.nonzeros);
    info.part_nonzeros = std::min(s.offsets[last], h.nonzeros) - std::min(a, s.offsets[last]);
    return info;
}

ExamplesBinaryPart read_examples_binary(const std::string& path, std::size_t part,
                                        std::size_t parts) {
    const core::MappedFile mapped(path);
    return parse_examples_binary(mapped.bytes(), path, part, parts);
}

}  // namespace rotor::logreg
