// Reading the (user, item) pairs `rotor mf predict` scores (docs/formats.md, "Prediction pairs"):
// `user item` per line, blank- or comma-separated, plain or gzip, with the rules of the ratings
// reader (core/mf/ratings_reader.h): blank and '#' lines skipped, the first data line fixes the
// separator, fields after the second (a rating, a timestamp) ignored, CSV fields trimmed and
// unquoted. Any violation throws InputError `<path>:<line>:<col>: <what>`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/io/line_reader.h"
#include "core/mf/ratings.h"

namespace rotor::apps {

/// Whether the first data line of a pairs file is a header.
enum class PairsHeader {
    kAuto,     ///< a header when none of its fields is a number and neither id is known
    kPresent,  ///< always skipped
    kAbsent,   ///< always data
};

/// One pair as read: the ids (valid until the next call of next()) and their indices in the
/// model's maps, or the map's size() when the id is unknown to it.
struct Pair {
    std::string_view user;
    std::string_view item;
    std::uint32_t user_index = 0;
    std::uint32_t item_index = 0;
};

/// Streams the pairs of one file, mapping ids through a model's maps. Not thread-safe; the maps
/// are not owned and must outlive the reader.
class PairsReader {
  public:
    PairsReader(const std::string& path, const mf::IdMap& users, const mf::IdMap& items,
                PairsHeader header = PairsHeader::kAuto);

    /// The next pair, or false at the end. Throws InputError on a malformed line.
    bool next(Pair& pair);
    /// The line of the pair last returned (1-based).
    std::uint64_t line_number() const noexcept { return reader_.line_number(); }

  private:
    core::LineReader reader_;
    const mf::IdMap& users_;
    const mf::IdMap& items_;
    PairsHeader header_;
    bool first_data_line_ = true;
    bool csv_ = false;
};

}  // namespace rotor::apps
