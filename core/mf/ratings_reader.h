// Reading a ratings matrix from text: `user item rating` per line, blank- or comma-separated,
// plain or gzip (docs/formats.md, "Ratings").
//
// The rules, in order, for each line (lines end at '\n'; a '\r' before it is removed):
//   - a UTF-8 byte-order mark at the start of line 1 is skipped (columns still count it);
//   - a blank line (only spaces and tabs) or a comment line (first non-blank byte '#') is
//     skipped, anywhere in the file;
//   - the first other line fixes the separator for the whole file: a comma if that line holds
//     one (CSV), else runs of spaces and tabs;
//   - that line is a header, skipped, when ReadRatingsOptions::header says so (kAuto: when none
//     of its first three fields is a number, as in MovieLens' `userId,movieId,rating,timestamp`);
//   - every other line has at least three fields: user id, item id, rating. Fields after the
//     third (a timestamp) are ignored. CSV fields are trimmed of spaces and tabs; quoting is not
//     supported. Ids are any non-empty strings without separators; a rating is a decimal or
//     scientific number (strtod syntax without a leading '+', no hex) that is finite as a float.
// Any violation throws InputError `<path>:<line>:<col>: <what>` (exit code 2); col is the 1-based
// byte column of the offending field.
#pragma once

#include <string>

#include "core/io/line_reader.h"
#include "core/io/read_limits.h"
#include "core/mf/ratings.h"

namespace rotor::mf {

/// How read_ratings() treats the first line that is neither blank nor a comment.
enum class HeaderMode {
    kAuto,     ///< a header when none of its first three fields is a number
    kPresent,  ///< always a header: skipped without looking at it
    kAbsent,   ///< never a header: read as data
};

/// Options of read_ratings(). A plain struct.
struct ReadRatingsOptions {
    /// Maps to read against (a test file against its training file's maps): known ids keep their
    /// indices; an unknown id becomes a new index after the given ones, counted in
    /// RatingsFile::new_users() / new_items() and ratings_with_new_ids, never an error. Null:
    /// ids get indices 0, 1, ... in order of first appearance. Not owned; read only.
    const IdMap* users = nullptr;
    const IdMap* items = nullptr;
    HeaderMode header = HeaderMode::kAuto;
    /// limits.max_bytes bounds the ratings' memory while they are read and sorted
    /// (kBytesPerRating each: the 12-byte triple and its 8 bytes in the CSR), checked at each
    /// line: a file that would take more is refused at the line that takes it over
    /// (core::ReadLimits::refuse_bytes).
    core::ReadLimits limits;
    /// Non-null: a negative rating is refused (`<path>:<line>:<col>: rating -1 is negative
    /// (<this reason>)`); a binary file names the rating's user and item instead of a line.
    const char* nonnegative = nullptr;
    static constexpr std::uint64_t kBytesPerRating = 12 + 8;
};

/// Reads the ratings in `path` (plain or gzip by magic bytes). The matrix is users x items of
/// the resulting maps (given ids plus new ones). Throws InputError on any malformed line (see
/// above), a duplicate (user, item) pair (naming both lines) or more than 2^32 - 1 distinct
/// user or item ids.
RatingsFile read_ratings(const std::string& path, const ReadRatingsOptions& options = {});

/// The same from an open reader (tests, fuzzing).
RatingsFile read_ratings(core::LineReader& reader, const ReadRatingsOptions& options = {});

}  // namespace rotor::mf
