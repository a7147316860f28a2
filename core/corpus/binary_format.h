// Layout of the binary corpus file (docs/formats.md, "Binary corpus"). Internal to core/corpus
// and the fuzz targets.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace rotor::core::detail {

static_assert(std::endian::native == std::endian::little,
              "the binary corpus format is little-endian; big-endian hosts need byte swapping");

inline constexpr char kCorpusMagic[8] = {'R', 'O', 'T', 'O', 'R', 'C', 'R', 'P'};
inline constexpr std::uint32_t kCorpusVersion = 1;

/// The 64-byte header at offset 0. Then: doc offsets (u64, D+1), word ids (u32, N), zero
/// padding to a multiple of 8 bytes, doc labels (u64, D). The file ends there.
struct CorpusHeader {
    char magic[8];              ///< "ROTORCRP"
    std::uint32_t version;      ///< kCorpusVersion
    std::uint32_t flags;        ///< 0; any other bit is an error in version 1
    std::uint64_t num_docs;     ///< D
    std::uint64_t num_words;    ///< W
    std::uint64_t num_tokens;   ///< N
    std::uint64_t checksum;     ///< corpus_checksum() of every byte after the header
    std::uint64_t reserved[2];  ///< 0
};
static_assert(sizeof(CorpusHeader) == 64);

/// Incremental 64-bit checksum of a byte stream taken 8 bytes at a time (little-endian words;
/// the stream length is a multiple of 8 in the format). Each step h = (h ^ w) * odd, h ^= h>>32
/// is a bijection of h, so any single changed word changes the result. Not cryptographic.
class Checksum {
  public:
    void add(std::span<const std::byte> bytes) noexcept;
    /// Includes a final partial word zero-padded, and the total length.
    std::uint64_t value() const noexcept;

  private:
    std::uint64_t h_ = 0x243F6A8885A308D3ull;
    std::uint64_t length_ = 0;
    std::byte tail_[8] = {};
    std::size_t tail_size_ = 0;
};

}  // namespace rotor::core::detail
