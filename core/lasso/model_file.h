// A trained Lasso model and its file (docs/formats.md, "Lasso models"): what `rotor lasso
// train|path` write and `rotor lasso predict|eval` read.
//
// One text file, tab-separated, every number printed with 17 significant digits (so it reads back
// bit for bit): a magic line, `key<TAB>value` header lines in a fixed order (version, features,
// samples, lambda, schedule, iterations, objective, relative_gap, intercept, standardize,
// y_mean, y_scale, beta0), one `feature` line per feature (index, mean m_j, scale s_j, β_j on
// raw features, the CSV header name or empty), and a last line `crc32<TAB><8 hex digits>` over
// every byte before it. Written atomically (a complete model or none); read strictly.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/lasso/design.h"

namespace rotor::lasso {

/// A model on raw features: ŷ = β₀ + Σ_j β_j x_j. A value type.
struct Model {
    std::uint32_t features = 0;
    std::uint64_t samples = 0;  ///< N it was trained on
    double lambda = 0;          ///< λ (y's units, glmnet/scikit-learn normalisation)
    std::string schedule;       ///< for the record: cyclic, shotgun or strads
    std::uint32_t iterations = 0;
    double objective = 0;     ///< F at the end of training
    double relative_gap = 0;  ///< gap / σ_y² at the end of training
    bool standardize = true;
    /// m_j, s_j, ȳ, σ_y (intercept: whether β₀ was fitted).
    Standardization standardization;
    std::vector<double> beta;                ///< β_j on raw features, `features` of them
    double intercept = 0;                    ///< β₀ on raw features
    std::vector<std::string> feature_names;  ///< empty, or one per feature

    /// The model of standardised coefficients b (p) under `st`.
    static Model from_standardized(std::span<const double> b, const Standardization& st);
    /// ŷ for one sample given as (feature, value) entries; features >= `features` are ignored
    /// (they were never seen in training).
    double predict(std::span<const std::uint32_t> cols, std::span<const double> values) const;
    std::uint32_t nonzeros() const;
    /// Throws InputError(name) unless the shapes hold and every value is finite.
    void check(const std::string& name) const;
};

/// Writes the model to `path` atomically (SystemError on an I/O failure).
void write_model(const std::string& path, const Model& model);
/// The file's bytes (write_model writes exactly these).
std::string model_text(const Model& model);
/// Reads and verifies a model: magic, version, keys in order, numbers, feature lines in order,
/// CRC-32. Any failure throws InputError `path:line:col: what`.
Model read_model(const std::string& path);
/// The same from the file's bytes; `name` for the errors.
Model parse_model(const std::string& text, const std::string& name);

}  // namespace rotor::lasso
