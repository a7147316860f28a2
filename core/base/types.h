// Fixed-width id and count types shared by every layer.
#pragma once

#include <cstdint>

namespace rotor {

using DocId = std::uint32_t;       ///< 0-based document index inside a corpus
using WordId = std::uint32_t;      ///< 0-based vocabulary index
using TopicId = std::uint32_t;     ///< 0-based topic index, < K
using Count = std::uint32_t;       ///< a count in one table cell (n_dk, n_wk); fits 2^32-1 tokens
using TokenIndex = std::uint64_t;  ///< a position in the token array; 64-bit for > 2^32 tokens
using TotalCount = std::int64_t;   ///< a topic total n_k or a token total; may exceed 2^31

}  // namespace rotor
