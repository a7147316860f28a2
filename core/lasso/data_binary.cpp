#include "core/lasso/data_binary.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
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

Header check_header(std::span<const std::byte> bytes, const std::string& name,
                    const std::function<void(std::span<const std::byte>)>& done = {}) {
    const auto h = core::read_header<Header>(bytes, name, kKind, kMagic, kVersion);
    if ((h.flags & ~kDense) != 0)
        throw InputError(name, fmt::format("unknown flags {:#x}", h.flags));
    if (h.reserved0 != 0 || h.reserved1 != 0) throw InputError(name, "nonzero reserved bytes");
    if (h.samples > 0xFFFFFFFFu || h.features > 0xFFFFFFFEu) {
        throw InputError(
            name, fmt::format("N = {} or p = {} does not fit in 32 bits", h.samples, h.features));
    }
    core::check_payload(h, bytes, name, done);
    return h;
}

InputError bad_sample(const std::string& name, std::size_t i, const std::string& what) {
    return InputError(name, fmt::format("sample {}: {}", i + 1, what));
}

}  // namespace

MappedData::MappedData(const std::string& path) : file_(std::in_place, path), name_(path) {
    map(file_->bytes());
}

MappedData::MappedData(std::span<const std::byte> bytes, std::string name)
    : name_(std::move(name)) {
    map(bytes);
}

void MappedData::release(std::span<const std::byte> range) const noexcept {
    if (file_) file_->release(range);
}

void MappedData::release_all() const noexcept {
    if (file_) file_->release(file_->bytes());
}

void MappedData::map(std::span<const std::byte> bytes) {
    // The CRC reads the whole file; what it has read leaves the resident set as it goes.
    const Header h =
        check_header(bytes, name_, [this](std::span<const std::byte> r) { release(r); });
    core::SectionCursor c(bytes.subspan(sizeof h), name_, kKind);
    features_ = static_cast<std::uint32_t>(h.features);
    dense_ = (h.flags & kDense) != 0;
    offsets_ = c.view<std::uint64_t>(h.samples + 1, "row offsets");
    cols_ = c.view<std::uint32_t>(h.nnz, "column indices");
    c.align("column indices");
    values_ = c.view<double>(h.nnz, "values");
    targets_ = c.view<double>(h.samples, "targets");
    names_ = core::decode_strings(c, h.features, "feature names", name_);
    if (c.remaining() != 0)
        throw InputError(name_, fmt::format("{} bytes after the feature names", c.remaining()));
    // The offsets of every row (a rank splits the samples by them); the rows' contents are
    // checked by rows(), each by the rank that keeps it.
    const std::uint64_t nnz = h.nnz;
    if (offsets_.front() != 0 || offsets_.back() != nnz) {
        throw InputError(name_, fmt::format("row offsets run from {} to {}, expected 0 to {}",
                                            offsets_.front(), offsets_.back(), nnz));
    }
    for (std::size_t i = 0; i < targets_.size(); ++i) {
        const std::uint64_t lo = offsets_[i], hi = offsets_[i + 1];
        if (hi < lo || hi > nnz)
            throw bad_sample(name_, i, fmt::format("row offsets {} then {}", lo, hi));
        if (dense_ && hi - lo != features_) {
            throw bad_sample(
                name_, i,
                fmt::format("{} entries in a dense row of {} features", hi - lo, features_));
        }
    }
}

RawData MappedData::rows(std::uint32_t begin, std::uint32_t end,
                         const core::ReadLimits& limits) const {
    ROTOR_ASSERT(begin <= end && end <= samples(), "MappedData::rows: rows out of range");
    const std::uint64_t e0 = offsets_[begin], e1 = offsets_[end];
    const std::uint64_t need =
        RawData::kBytesPerEntry * (e1 - e0) + RawData::kBytesPerSample * (end - begin);
    if (need > limits.max_bytes) limits.refuse_bytes(need, name_, 0, 0, "the samples");
    for (std::size_t i = begin; i < end; ++i) {
        if (!std::isfinite(targets_[i])) throw bad_sample(name_, i, "the target is not finite");
        const std::uint64_t lo = offsets_[i], hi = offsets_[i + 1];
        for (std::uint64_t e = lo; e < hi; ++e) {
            if (cols_[e] >= features_) {
                throw bad_sample(name_, i,
                                 fmt::format("column {} of {} features", cols_[e] + 1, features_));
            }
            if (e > lo && cols_[e] <= cols_[e - 1]) {
                throw bad_sample(
                    name_, i,
                    fmt::format("column {} after column {}", cols_[e] + 1, cols_[e - 1] + 1));
            }
            if (!std::isfinite(values_[e])) {
                throw bad_sample(name_, i,
                                 fmt::format("the value of column {} is not finite", cols_[e] + 1));
            }
        }
    }
    RawData d;
    d.features = features_;
    d.dense = dense_;
    d.row_offsets.resize(end - begin + 1);
    for (std::uint32_t i = begin; i <= end; ++i) d.row_offsets[i - begin] = offsets_[i] - e0;
    // Each array copied, its source leaves the resident set: the peak is the copy, not the copy
    // and the file.
    const auto copy = [this](auto& out, auto in) {
        out.assign(in.begin(), in.end());
        release(std::as_bytes(in));
    };
    copy(d.cols, cols_.subspan(e0, e1 - e0));
    copy(d.values, values_.subspan(e0, e1 - e0));
    copy(d.targets, targets_.subspan(begin, end - begin));
    d.feature_names.reserve(names_.size());
    for (std::size_t j = 0; j < names_.size(); ++j) d.feature_names.emplace_back(names_.at(j));
    return d;
}

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
    const MappedData data(bytes, name);
    return data.rows(0, data.samples(), limits);
}

RawData read_data_binary(const std::string& path, const core::ReadLimits& limits) {
    const MappedData data(path);
    return data.rows(0, data.samples(), limits);
}

}  // namespace rotor::lasso
