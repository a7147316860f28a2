// What a reader of a data file (a corpus, a ratings file, a design matrix) may ask for: bounds on
// its counts and on the memory it builds while reading, checked as it reads so that a few bytes
// of a corrupt header cannot ask for terabytes. Shared by every model's readers.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/types.h"

namespace rotor::core {

/// Limits on what a reader accepts, so a few bytes of corrupt header cannot ask for terabytes.
/// Exceeding one is an InputError at the line that pushed it over. Defaults: what the id types
/// can hold.
///
/// max_bytes bounds the corpus's memory while it is read (kBytesPerToken per token and
/// kBytesPerDoc per document): it is checked against the header's D before anything is
/// allocated and against the running token total before each count is expanded. When the bound
/// is a flag's (memory_key, e.g. "--max-memory"), exceeding it is a ConfigError with that key
/// (exit 3), its message naming the file position; else an InputError (exit 2).
struct ReadLimits {
    /// Bytes per token while a corpus is read: its word id and the array's growth room.
    static constexpr std::uint64_t kBytesPerToken = 2 * sizeof(WordId);
    /// Bytes per document: its offset and its label.
    static constexpr std::uint64_t kBytesPerDoc = sizeof(TokenIndex) + sizeof(std::uint64_t);

    std::uint64_t max_docs = 0xFFFFFFFFull;   ///< D, at most 2^32-1 (DocId)
    std::uint64_t max_words = 0xFFFFFFFFull;  ///< W, at most 2^32-1 (WordId)
    std::uint64_t max_tokens = UINT64_MAX;    ///< N after expanding counts
    std::uint64_t max_bytes = UINT64_MAX;     ///< the corpus's memory while reading
    std::string memory_key;   ///< the flag max_bytes comes from; empty: the machine's memory
    std::string memory_what;  ///< max_bytes in words for the refusal ("--max-memory 1G")

    /// Limits whose max_bytes is `bytes` (0: none), from flag `key` (may be empty), described as
    /// `what` in a refusal.
    static ReadLimits for_memory(std::uint64_t bytes, std::string key, std::string what);
    /// Refuses (throws) `bytes`, more than max_bytes, needed for `what` at `path`:`line`:`col`.
    [[noreturn]] void refuse_bytes(std::uint64_t bytes, const std::string& path, std::uint64_t line,
                                   std::uint64_t col, const std::string& what) const;
};

}  // namespace rotor::core
