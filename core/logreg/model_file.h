// The model file of `rotor logreg train` (docs/logreg.md, "Model file"): text, one field a line,
// then the nonzero weights, so other tools can read it:
//     rotor-logreg-model 2
//     lambda <λ>
//     hashed <0|1>            (1: keys are hash_feature() of string features)
//     iterations <n>
//     objective <F(w)>
//     intercept <b>          (0 without one)
//     weights <count>
//     <key>\t<w_k>            (count lines, keys strictly increasing, w_k != 0)
//     crc32 <8 hex digits>    (CRC-32 of every byte above: core::crc32_line)
// Version 1 (rotor before the crc32 line) is read too, unchecked. Numbers are written with 17
// significant digits, so a model reads back bitwise.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rotor::logreg {

/// A trained model. A value type.
struct Model {
    double lambda = 0;
    bool hashed = false;
    std::uint64_t iterations = 0;
    double objective = 0;
    double intercept = 0;
    std::vector<std::uint64_t> keys;  ///< strictly increasing, without kInterceptKey
    std::vector<double> weights;      ///< nonzero, aligned with keys

    /// x_iᵀw + intercept for an example given as increasing keys and values.
    double margin(std::span<const std::uint64_t> keys, std::span<const double> values) const;
};

/// Writes `m` to `path` atomically. Throws SystemError.
void write_model(const std::string& path, const Model& m);

/// Reads a model file. Throws InputError `path:line:col: what` on anything malformed.
Model read_model(const std::string& path);
/// Reads a model from the text of a model file named `path` (for the errors).
Model parse_model(const std::string& text, const std::string& path);

}  // namespace rotor::logreg
