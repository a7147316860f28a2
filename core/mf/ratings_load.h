// Loading a ratings file in either form: text (core/mf/ratings_reader.h) or the binary form
// `rotor ratings build` writes (core/mf/ratings_binary.h), told apart by the binary magic.
#pragma once

#include <string>

#include "core/mf/ratings.h"
#include "core/mf/ratings_reader.h"

namespace rotor::mf {

/// Reads `path` as binary ratings when it starts with the binary magic, else as text. With maps
/// in `options` (a test file against the training maps) a binary file's ids are mapped through
/// them exactly as the text reader does (known ids keep their indices, new ids follow), so both
/// forms give the same RatingsFile. InputError naming the file on any failure.
RatingsFile load_ratings(const std::string& path, const ReadRatingsOptions& options = {});

}  // namespace rotor::mf
