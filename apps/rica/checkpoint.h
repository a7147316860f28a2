// Checkpoints of `rotor rica train` (docs/rica.md, "Command line"): the model file with the rows'
// AdaGrad factors (core/rica/model_file.h), `<out>.checkpoint`, and what --resume checks of it;
// shared by the command line and the Python package's rotor.RICA. A checkpoint keeps W, not the
// ADMM's warm start (z, u, ρ): a resumed run restarts it, so it is not the uninterrupted run bit
// for bit.
#pragma once

#include <cstdint>
#include <string>

#include "core/rica/model_file.h"

namespace rotor::rica {

/// Reads checkpoint `resume` for a run of `components` rows, `lambda` and `iterations` steps in
/// all: InputError when it is a model file without the AdaGrad factors (no checkpoint),
/// ConfigError(`flag`) when it was made with another --components or --lambda ("<resume> was
/// made with --components 8 --lambda 0.5"), and ConfigError(`iterations_flag`) when it has done
/// more than `iterations` steps (train::check_resume_target).
Model read_checkpoint(const std::string& resume, std::size_t components, double lambda,
                      std::uint64_t iterations, const std::string& flag = "--resume",
                      const std::string& iterations_flag = "--iterations");

/// ConfigError(`flag`) when checkpoint `m` (read from `resume`) is of another dimension than the
/// `p` columns of the data `name`.
void check_dimension(const Model& m, const std::string& resume, const std::string& name,
                     std::size_t p, const std::string& flag = "--resume");

}  // namespace rotor::rica
