#include "apps/rica/checkpoint.h"

#include <fmt/format.h>

#include "core/base/error.h"
#include "train/resume.h"

namespace rotor::rica {

Model read_checkpoint(const std::string& resume, std::size_t components, double lambda,
                      std::uint64_t iterations, const std::string& flag,
                      const std::string& iterations_flag) {
    Model m = read_model(resume);
    if (m.metric.empty())
        throw InputError(resume, "is a model, not a checkpoint (it has no metric)");
    if (m.components != components || m.lambda != lambda)
        throw ConfigError(flag, fmt::format("{} was made with --components {} --lambda {}", resume,
                                            m.components, m.lambda));
    train::check_resume_target(m.iterations, iterations, resume, iterations_flag);
    return m;
}

void check_dimension(const Model& m, const std::string& resume, const std::string& name,
                     std::size_t p, const std::string& flag) {
    if (m.dimension != p)
        throw ConfigError(
            flag, fmt::format("{} has dimension {}, {} has {}", resume, m.dimension, name, p));
}

}  // namespace rotor::rica
