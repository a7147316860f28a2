// The binary form of logistic-regression examples, for inputs too big to parse as text on every
// run (docs/formats.md, "Binary examples"): a 64-byte header (magic "ROTORLRX", version, flags,
// examples n, nonzeros, distinct keys, rows per chunk, payload size, CRC-32s of the chunk table
// and of the header), then the CSR arrays (n + 1 offsets, the keys, the values), the labels and
// one CRC-32 per chunk of rows; every section 8-byte aligned, native little-endian. A reader maps
// the file and checks and copies only its own rows: the chunks it overlaps are verified, not the
// whole file. Written by `rotor logreg build`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/logreg/examples.h"

namespace rotor::logreg {

/// Rows per CRC chunk of files written by write_examples_binary().
inline constexpr std::uint64_t kExamplesChunkRows = 65536;

/// Writes `examples` to `path` atomically. `hashed`: the keys are hash_feature() of names.
/// `keys`: the number of distinct keys (stored for memory plans). SystemError on I/O failure.
void write_examples_binary(const std::string& path, const Examples& examples, bool hashed,
                           std::uint64_t keys);

/// A binary file's header, checked (magic, version, flags, sizes, header CRC).
struct ExamplesBinaryInfo {
    std::uint64_t examples = 0;
    std::uint64_t nonzeros = 0;
    std::uint64_t keys = 0;  ///< distinct keys
    bool hashed = false;
    std::uint64_t part_examples = 0;  ///< of the part asked for (read_examples_binary_info)
    std::uint64_t part_nonzeros = 0;  ///< of the part, from its offsets (not yet checked)
};

/// Part `part` of `parts` of a binary file: rows [n·part/parts, n·(part+1)/parts).
struct ExamplesBinaryPart {
    ExamplesBinaryInfo info;
    std::uint64_t first_row = 0;
    Examples examples;
};

/// The header of `path` and the size of part `part` of `parts` (for memory plans: only the
/// header and two offsets are read). InputError naming the file when it is not a valid binary
/// examples file.
ExamplesBinaryInfo read_examples_binary_info(const std::string& path, std::size_t part = 0,
                                             std::size_t parts = 1);

/// Reads part `part` of `parts` (memory-mapped, then copied): checks the header, the chunk table
/// and the chunks the part overlaps (CRC-32), and every row of the part (labels ±1, offsets
/// increasing, keys strictly increasing and not kInterceptKey, values finite and nonzero).
/// InputError "<path>: example <row>: <what>" (rows 1-based) or naming the file otherwise.
ExamplesBinaryPart read_examples_binary(const std::string& path, std::size_t part = 0,
                                        std::size_t parts = 1);

/// The same over bytes in memory, named `name` in errors (tests). Must be 8-byte aligned.
ExamplesBinaryPart parse_examples_binary(std::span<const std::byte> bytes, const std::string& name,
                                         std::size_t part = 0, std::size_t parts = 1);

/// True if `prefix` starts with the magic "ROTORLRX".
bool has_examples_binary_magic(std::string_view prefix) noexcept;

}  // namespace rotor::logreg
