#include "core/lasso/data_binary.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/base/error.h"
#include "core/io/binary_sections.h"
#include "core/io/mapped_file.h"

namespace rotor::lasso {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the binary Lasso data format is little-endian; big-endian hosts need byte swapping");

constexpr char kMagic[8] = {'R', 'O', 'T', 'O', 'R', 'L', 'S', 'O'};
constexpr std::uint32_t kVersion = 1;
constexpr const char* kKind = "binary Lasso data";
constexpr std::uint32_t kDense = 1;  ///< flags bit 0: dense input (every entry stored, centred)

/// The 64-byte header at offset 0; the payload follows.
struct Header {
    char magic[8];                ///< "ROTORLSO"
    std::uint32_t version;        ///< kVersion
    std::uint32_t flags;          ///< kDense or 0; any other bit is an error in version 1
    std::uint64_t samples;        ///< N
    std::uint64_t features;       ///< p
    std::uint64_t nnz;            ///< stored entries
    std::uint64_t payload_bytes;  ///< file size - 64
    std::uint32_t crc32;          ///< CRC-32 (zlib's) of the payload
    std::uint32_t reserved0;      ///< 0
    std::uint64_t reserved1;      ///< 0
};
static_assert(sizeof(Header) == 64);

Header check_header(std::span<const std::byte> bytes, const std::string& name) {
    const auto h = core::read_header<Header>(bytes, name, kKind, kMagic, kVersion);
    if ((h.flags & ~kDense) != 0)
        throw InputError(name, fmt::format("unknown flags {:#x}", h.flags));
    if (h.reserved0 != 0 || h.reserved1 != 0) throw InputError(name, "nonzero reserved bytes");
    if (h.samples > 0xFFFFFFFFu || h.features > 0xFFFFFFFEu) {
        throw InputError(
            name, fmt::format("N = {} or p = {} does not fit in 32 bits", h.samples, h.features));
    }
    core::check_payload(h, bytes, name);
    return h;
}

/// Checks what the text readers guarantee of every row: offsets rising from 0 to nnz, columns
/// below p and strictly increasing, finite values and targets, a dense row p wide.
void check_rows(const RawData& d, std::uint64_t nnz, const std::string& name) {
    const auto bad = [&](std::size_t i, const std::string& what) {
        return InputError(name, fmt::format("sample {}: {}", i + 1, what));
    };
    if (d.row_offsets.front() != 0 || d.row_offsets.back() != nnz) {
        throw InputError(name, fmt::format("row offsets run from {} to {}, expected 0 to {}",
                                           d.row_offsets.front(), d.row_offsets.back(), nnz));
    }
    for (std::size_t i = 0; i < d.targets.size(); ++i) {
        const std::uint64_t lo = d.row_offsets[i], hi = d.row_offsets[i + 1];
        if (hi < lo || hi > nnz) throw bad(i, fmt::format("row offsets {} then {}", lo, hi));
        if (d.dense && hi - lo != d.features)
            throw bad(i,
                      fmt::format("{} entries in a dense row of {} features", hi - lo, d.features));
        if (!std::isfinite(d.targets[i])) throw bad(i, "the target is not finite");
        for (std::uint64_t e = lo; e < hi; ++e) {
            if (d.cols[e] >= d.features)
                throw bad(i, fmt::format("column {} of {} features", d.cols[e] + 1, d.features));
            if (e > lo && d.cols[e] <= d.cols[e - 1])
                throw bad(
                    i, fmt::format("column {} after column {}", d.cols[e] + 1, d.cols[e - 1] + 1));
            if (!std::isfinite(d.values[e]))
                throw bad(i, fmt::format("the value of column {} is not finite", d.cols[e] + 1));
        }
    }
}

}  // namespace

bool has_data_binary_magic(std::span<const std::byte> prefix) noexcept {
    return prefix.size() >= sizeof kMagic && std::memcmp(prefix.data(), kMagic, sizeof kMagic) == 0;
}

void write_data_binary(const std::string& path, const RawData& data) {
    ROTOR_ASSERT(data.row_offsets.size() == data.targets.size() + 1 &&
                     data.cols.size() == data.values.size() &&
                     data.row_offsets.back() == data.values.size(),
                 "write_data_binary: inconsistent RawData");
    ROTOR_ASSERT(data.feature_names.empty() || data.feature_names.size() == data.features,
                 "write_data_binary: one name per feature or none");
    const auto col_bytes = std::as_bytes(std::span(data.cols));
    const std::vector<std::byte> names = core::encode_strings(
        data.feature_names.size(), [&](std::size_t j) { return data.feature_names[j]; });
    const std::span<const std::byte> sections[] = {
        std::as_bytes(std::span(data.row_offsets)),
        col_bytes,
        core::padding(col_bytes.size()),
        std::as_bytes(std::span(data.values)),
        std::as_bytes(std::span(data.targets)),
        names,
    };
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kVersion;
    h.flags = data.dense ? kDense : 0;
    h.samples = data.samples();
    h.features = data.features;
    h.nnz = data.values.size();
    core::write_sections(path, h, sections);
}

RawData parse_data_binary(std::span<const std::byte> bytes, const std::string& name,
                          const core::ReadLimits& limits) {
    const Header h = check_header(bytes, name);
    // The header's counts are any 64-bit values until the arrays are checked against the file:
    // saturate the reading memory they claim.
    const std::uint64_t per = RawData::kBytesPerEntry, max = UINT64_MAX;
    const std::uint64_t rows = RawData::kBytesPerSample * h.samples;  // N < 2^32
    const std::uint64_t need = h.nnz > (max - rows) / per ? max : per * h.nnz + rows;
    if (need > limits.max_bytes) limits.refuse_bytes(need, name, 0, 0, "the samples");
    core::SectionCursor c(bytes.subspan(sizeof h), name, kKind);
    RawData d;
    d.features = static_cast<std::uint32_t>(h.features);
    d.dense = (h.flags & kDense) != 0;
    d.row_offsets = c.take<std::uint64_t>(h.samples + 1, "row offsets");
    d.cols = c.take<std::uint32_t>(h.nnz, "column indices");
    c.align("column indices");
    d.values = c.take<double>(h.nnz, "values");
    d.targets = c.take<double>(h.samples, "targets");
    const core::StringsSection names = core::decode_strings(c, h.features, "feature names", name);
    if (c.remaining() != 0)
        throw InputError(name, fmt::format("{} bytes after the feature names", c.remaining()));
    d.feature_names.reserve(names.size());
    for (std::size_t j = 0; j < names.size(); ++j) d.feature_names.emplace_back(names.at(j));
    check_rows(d, h.nnz, name);
    return d;
}

RawData read_data_binary(const std::string& path, const core::ReadLimits& limits) {
    const core::MappedFile mapped(path);
    return parse_data_binary(mapped.bytes(), path, limits);
}

}  // namespace rotor::lasso
