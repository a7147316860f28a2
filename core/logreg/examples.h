// Examples of sparse logistic regression with 64-bit feature keys, and their reader for the
// LIBSVM/svmlight format (docs/logreg.md, "Input"):
//     <label> [qid:<n>] <key>:<value> <key>:<value> ... [# comment]
// one example per line, plain or gzip (by magic bytes).
//
// The line rules are core::SvmlightReader's (core/io/svmlight.h); the label is +1, 1, -1 or 0
// (any spelling of those numbers, e.g. "1.0", "+1"), 0 meaning -1; without hashing, keys are
// unsigned integers in [0, 2^64 - 2] strictly increasing along the line (SvmlightKeys::kKey);
// with hashing (ReadExamplesOptions::hash_features), a feature is `name:value` or `name` (value
// 1), its key hash_feature(name), and keys that collide on a line are merged (values added).
// Zero values are accepted and not stored. Any violation throws InputError
// `<path>:<line>:<col>: <what>` (col: the 1-based byte column of the offending field).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/line_reader.h"

namespace rotor::logreg {

/// The key reserved for the unpenalised intercept (a feature of value 1 in every example when
/// the model has one). Readers never produce it.
inline constexpr std::uint64_t kInterceptKey = ~std::uint64_t{0};

/// Examples in compressed rows: example i has labels[i] in {-1, +1} and the features
/// keys[offsets[i] .. offsets[i+1]) (strictly increasing) with their values. A value type.
struct Examples {
    std::vector<std::int8_t> labels;
    std::vector<std::uint64_t> offsets{0};  ///< size() + 1 entries
    std::vector<std::uint64_t> keys;
    std::vector<double> values;

    std::size_t size() const noexcept { return labels.size(); }
    std::size_t nonzeros() const noexcept { return keys.size(); }
    /// Appends an example. `keys` strictly increasing, without kInterceptKey; label -1 or +1.
    void add(int label, std::span<const std::uint64_t> keys, std::span<const double> values);
    /// Example i's keys and values.
    std::span<const std::uint64_t> keys_of(std::size_t i) const {
        return std::span(keys).subspan(offsets[i], offsets[i + 1] - offsets[i]);
    }
    std::span<const double> values_of(std::size_t i) const {
        return std::span(values).subspan(offsets[i], offsets[i + 1] - offsets[i]);
    }
};

/// The 64-bit key of a string feature: FNV-1a, then a SplitMix64 finaliser; never
/// kInterceptKey. Stable across hosts and versions (it is part of the model file's meaning).
std::uint64_t hash_feature(std::string_view name) noexcept;

/// Options of read_examples(). A plain struct.
struct ReadExamplesOptions {
    /// Feature names are strings, hashed to keys (see the file comment).
    bool hash_features = false;
};

/// Reads `path` (plain or gzip).
Examples read_examples(const std::string& path, const ReadExamplesOptions& options = {});

/// The same from an open reader (tests, fuzzing).
Examples read_examples(core::LineReader& reader, const ReadExamplesOptions& options = {});

}  // namespace rotor::logreg
