// A trained matrix-factorization model and its directory on disk (docs/formats.md, "MF
// models"): what `rotor mf train` writes and `rotor mf predict|recommend|eval|export` read.
//
// The directory holds params.json (strict JSON: format, version, solver, K, λ, λ_b, λ form,
// bias, μ, shapes, iterations, seed, the training file, and the CRC-32 of each binary file),
// w.bin and h.bin (rows x K little-endian float32, row-major), bias.bin (b then c, float32; absent
// without bias), and users.txt / items.txt (one original id per line, index order), seen.bin (the
// items each user rated in training, for recommendations). It is written under a temporary name and
// renamed into place: a complete model or none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/mf/factors.h"
#include "core/mf/objective.h"
#include "core/mf/ratings.h"

namespace rotor::mf {

/// A trained model: the factors, biases, global mean and the id maps that name its rows. A value
/// type; shapes: w.rows() == users.size() == N, h.rows() == items.size() == M, w.k() == h.k(),
/// row_bias N and col_bias M floats when params.bias, else both empty.
struct Model {
    ObjectiveParams params;
    std::string solver;            ///< "ccd", "sgd" or "als" (implicit feedback: no bias)
    double alpha = 0;              ///< als: the confidence c = 1 + α r it was trained with
    std::uint32_t iterations = 0;  ///< iterations trained
    std::uint64_t seed = 0;
    std::string train_path;  ///< the training file, for the record
    double mu = 0;           ///< global mean of the training ratings (0 without bias)
    Factors w;               ///< users x K
    Factors h;               ///< items x K
    std::vector<float> row_bias;
    std::vector<float> col_bias;
    IdMap users;
    IdMap items;
    /// The items each user rated in training (CSR: seen_offsets N + 1 entries, seen_items
    /// increasing per user), so that `rotor mf recommend` leaves them out. Both empty: unknown
    /// (written as seen.bin when present).
    std::vector<std::uint64_t> seen_offsets;
    std::vector<std::uint32_t> seen_items;

    /// A view for predict/evaluate; valid while the model lives and is not changed.
    ModelView view() const { return ModelView{mu, &w, &h, row_bias, col_bias}; }
    /// Throws InputError(name) unless the shapes above hold and every value is finite.
    void check(const std::string& name) const;
};

/// Writes the model directory `dir` atomically (SystemError on an I/O failure).
void write_model(const std::string& dir, const Model& model);

/// Reads and verifies a model directory: strict JSON, format and version, shapes, checksums,
/// finite values, id files with exactly N and M distinct non-empty ids. Any failure throws
/// InputError naming the file.
Model read_model(const std::string& dir);

}  // namespace rotor::mf
