// libFuzzer target: the Lasso's binary data reader on arbitrary bytes. Each input is tried twice:
// as is, and with its CRC-32 recomputed, so the structural checks behind the CRC are reached
// too. Only InputError may escape, and what is returned holds what the trainer relies on; a
// rank's read of half the samples (MappedData::rows) agrees with the whole read.
#include <zlib.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "core/base/error.h"
#include "core/lasso/data_binary.h"

namespace {

constexpr std::size_t kHeader = 64;
constexpr std::size_t kCrcAt = 48;

void check(std::span<const std::byte> bytes) {
    try {
        const rotor::lasso::RawData d = rotor::lasso::parse_data_binary(bytes, "fuzz.bin");
        if (d.row_offsets.size() != d.targets.size() + 1 || d.cols.size() != d.values.size() ||
            d.row_offsets.back() != d.values.size())
            __builtin_trap();
        for (std::size_t i = 0; i + 1 < d.row_offsets.size(); ++i) {
            for (std::uint64_t e = d.row_offsets[i]; e < d.row_offsets[i + 1]; ++e) {
                if (d.cols[e] >= d.features || !std::isfinite(d.values[e])) __builtin_trap();
                if (e > d.row_offsets[i] && d.cols[e] <= d.cols[e - 1]) __builtin_trap();
            }
        }
    } catch (const rotor::InputError&) {
    }
    // A rank's read: the file mapped, the samples split in two and each half copied apart. Where
    // both halves copy, they are the whole read's samples, cut.
    try {
        const rotor::lasso::MappedData m(bytes, "fuzz.bin");
        const std::uint32_t mid = m.samples() / 2;
        const rotor::lasso::RawData lo = m.rows(0, mid), hi = m.rows(mid, m.samples());
        if (lo.samples() + hi.samples() != m.samples() ||
            lo.values.size() + hi.values.size() != m.entries() || lo.row_offsets.front() != 0 ||
            hi.row_offsets.front() != 0 || hi.row_offsets.back() != hi.values.size())
            __builtin_trap();
        const rotor::lasso::RawData all = m.rows(0, m.samples());
        for (std::size_t e = 0; e < hi.values.size(); ++e) {
            if (hi.cols[e] != all.cols[lo.values.size() + e] ||
                std::memcmp(&hi.values[e], &all.values[lo.values.size() + e], sizeof(double)) != 0)
                __builtin_trap();
        }
    } catch (const rotor::InputError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // parse_data_binary needs 8-byte alignment, as a mapping has.
    std::vector<std::uint64_t> aligned((size + 7) / 8);
    if (size > 0) std::memcpy(aligned.data(), data, size);
    const auto bytes = std::as_bytes(std::span(aligned)).first(size);
    check(bytes);
    if (size >= kHeader) {
        const auto crc =
            static_cast<std::uint32_t>(crc32(0, data + kHeader, static_cast<uInt>(size - kHeader)));
        std::memcpy(reinterpret_cast<std::byte*>(aligned.data()) + kCrcAt, &crc, sizeof crc);
        check(bytes);
    }
    return 0;
}
