// `rotor ratings build | split | info`: preparing ratings files for `rotor mf train`
// (docs/user-guide.md, "Ratings"; docs/formats.md, "Ratings").
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "core/mf/ratings_split.h"

namespace rotor::apps {

/// Registers `ratings build`, `ratings split` and `ratings info` under `app`. The callbacks throw
/// rotor errors.
void add_ratings_commands(CLI::App& app);

/// Reads `input` (text or binary) and writes its binary form to `out` atomically.
void run_ratings_build(const std::string& input, const std::string& out);

/// What `rotor ratings split` does.
struct RatingsSplitFlags {
    std::string input;           ///< text or binary ratings (--input)
    double test_fraction = 0.2;  ///< in [0, 1] (--test-fraction)
    std::string by = "rating";   ///< "rating" or "user" (--by; mf::SplitBy)
    std::uint64_t seed = 1;      ///< (--seed)
    std::string train_out;       ///< `user,item,rating` CSV, written atomically (--train-out)
    std::string test_out;        ///< the same for the test part (--test-out)
};

/// How many ratings went to each part.
struct RatingsSplitSummary {
    std::uint64_t train = 0;
    std::uint64_t test = 0;
};

/// Splits with mf::split_ratings and writes both parts with the original ids and values as %.9g
/// (so they read back as the same floats). Throws ConfigError on a bad flag, InputError on bad
/// input or an id that cannot be written as a CSV field.
RatingsSplitSummary run_ratings_split(const RatingsSplitFlags& flags);

/// Writes the sizes, rating range and degree statistics of a ratings file to `out`.
void run_ratings_info(const std::string& input, std::FILE* out);

}  // namespace rotor::apps
