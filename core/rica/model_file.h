// RICA's model file and its observations (docs/formats.md, "RICA model"): a text file,
//
//     rotor-rica-model 1
//     components <ℓ>            rows of W
//     dimension <p>             columns of W (the observations' dimension)
//     lambda <λ>
//     iterations <t>            proximal gradient steps made
//     objective <F(W)>          on the training data, eq. 15
//     time_s <s>                training seconds so far
//     metric <h_1> ... <h_ℓ>    the rows' AdaGrad factors (a checkpoint's; "metric" alone in a
//     model) <ℓ lines of p tab-separated numbers: the rows of W> crc32 <8 hex digits>      the
//     CRC-32 of every byte above
//
// written atomically (a temporary renamed into place). The same file is the checkpoint
// `<out>.checkpoint` (with the metric). Any malformed or corrupt byte is refused with
// InputError `path:line:col`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/rica/objective.h"

namespace rotor::rica {

/// A trained (or checkpointed) W. A value type.
struct Model {
    std::size_t components = 0;  ///< ℓ
    std::size_t dimension = 0;   ///< p
    double lambda = 0;
    std::uint64_t iterations = 0;
    double objective = 0;
    double time_s = 0;
    std::vector<double> metric;  ///< ℓ AdaGrad factors, or empty (a model that is no checkpoint)
    std::vector<double> w;       ///< ℓ×p, row-major
};

/// The first line of a model file (what `--out` checks an earlier output by).
inline constexpr const char* kModelMagic = "rotor-rica-model 1";

void write_model(const std::string& path, const Model& m);
Model read_model(const std::string& path);
/// The same from the file's text (tests).
Model parse_model(const std::string& text, const std::string& path);

/// Observations from a dense CSV/TSV file (core/io/dense_table.h: one observation per row, every
/// column a number, an optional header), plain or gzip. Throws InputError naming file and line;
/// a file without observations is refused too.
Dense read_observations(const std::string& path);

}  // namespace rotor::rica
