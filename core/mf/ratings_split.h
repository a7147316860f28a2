// A seeded train/test split of a ratings matrix, for held-out RMSE.
#pragma once

#include <cstdint>

#include "core/mf/ratings.h"

namespace rotor::mf {

/// How split_ratings() draws the test ratings.
enum class SplitBy {
    kRating,  ///< each rating goes to test with probability f, independently
    kUser,    ///< each user with n ratings sends min(round(f n), n - 1) of them to test (chosen
              ///< uniformly): every user with a rating keeps one in train, a user with one
              ///< rating keeps it in train
};

/// The two parts of a split; both have the shape (N x M) of the matrix split, so indices and
/// id maps stay valid for both.
struct RatingsSplit {
    Ratings train;
    Ratings test;
};

/// Splits `ratings` into train and test: every rating lands in exactly one. Deterministic for a
/// seed: user u's draws come from Rng::from({seed, kSplitStream, u}), so they depend on neither
/// thread count nor the other users. Throws ConfigError("fraction") unless 0 <= fraction <= 1.
RatingsSplit split_ratings(const Ratings& ratings, double fraction, std::uint64_t seed, SplitBy by);

/// The seed stream of split_ratings() ("SPLT").
inline constexpr std::uint64_t kSplitStream = 0x53504c54;

}  // namespace rotor::mf
