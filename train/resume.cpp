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

void check_resume_target(std::uint64_t done, std::uint64_t target, const std::string& resume,
                         const std::string& flag) {
    if (done > target)
        throw ConfigError(flag, fmt::format("is {} but {} already has {} iterations: give a "
                                            "total of at least {} (or take the model it ended "
                                            "with)",
                                            target, resume, done, done));
}

}  // namespace rotor::train
