#include "train/resume.h"

#include <fmt/format.h>

#include "core/base/error.h"

namespace rotor::train {

void refuse_resume_conflicts(std::span<const ResumeSetting> settings,
                             const std::function<bool(const std::string&)>& given,
                             const std::string& resume) {
    for (const ResumeSetting& s : settings)
        if (s.ours != s.theirs && given(s.flag))
            throw ConfigError(s.flag, fmt::format("is {} but {} was trained with {}; resume "
                                                  "without it or start a new run",
                                                  s.ours, resume, s.theirs));
}

void check_resume_target(std::uint32_t done, std::uint32_t target, const std::string& resume) {
    if (done > target)
        throw ConfigError("--iterations",
                          fmt::format("{} is at iteration {}, beyond {}: give a larger total",
                                      resume, done, target));
}

}  // namespace rotor::train
