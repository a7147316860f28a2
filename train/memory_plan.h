// The memory plan of a training run (--max-memory): a model estimates the bytes it will hold at
// its peak from the input's shape, before allocating anything big, and the run is refused when
// the estimate exceeds the limit, rather than failing or swapping half-way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/corpus/corpus.h"

namespace rotor::comm {
class Communicator;
}  // namespace rotor::comm

namespace rotor::train {

/// Largest size parse_bytes accepts: 2^60 bytes (1 EiB), far above any machine, far below
/// overflow of every sum the plans compute.
inline constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 60;

/// Parses a size: a positive number of bytes with an optional K, M, G or T suffix (powers of
/// 1024), e.g. 512M, 16G, 1.5T. Throws ConfigError naming `key` for anything else, and for
/// sizes above kMaxBytes.
std::uint64_t parse_bytes(const std::string& text, std::string_view key);
/// "1.5 GiB", "12.0 MiB", "3.0 KiB".
std::string human_bytes(std::uint64_t bytes);
/// Physical memory of this machine in bytes (0 if unknown).
std::uint64_t physical_memory();
/// Collective: how many ranks of `world` run on this host (by host name), this one included.
int ranks_on_this_host(comm::Communicator& world);

/// The limit in force: `flag` (--max-memory, parsed) when given, else 90% of this machine's
/// memory shared evenly among the `host_ranks` processes on it (0 when unknown: no limit).
std::uint64_t memory_limit(const std::string& flag, int host_ranks = 1);

/// Limits for reading a corpus under the limit in force (memory_limit(flag, host_ranks)), known
/// before the corpus is loaded: a UCI file that would need more is refused at the line that
/// takes it over, exit 3 naming --max-memory when `flag` is given, exit 2 against this machine's
/// memory otherwise.
core::ReadLimits corpus_limits(const std::string& flag, int host_ranks = 1);

/// Throws ConfigError("--max-memory") when `need` exceeds `limit` (> 0): "this run needs about
/// X but the limit is Y; <advice>" (per rank: "each rank needs about ...").
void check_memory(std::uint64_t need, std::uint64_t limit, std::string_view advice,
                  bool per_rank = false);

}  // namespace rotor::train
