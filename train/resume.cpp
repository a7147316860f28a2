#include "train/resume.h"

#include <fmt/format.h>

#include "core/base/error.h"

namespace rotor::train {

void refuse_resume_conflicts(std::span<const ResumeSetting> settings,
                             const std::function<bool(const std::string&)>& given,
                             const std::string& resume, const std::string& advice) {
    for (const ResumeSetting& s : settings)
        if (s.ours != s.theirs && given(s.flag))
            throw ConfigError(s.flag, fmt::format("is {} but {} was trained with {}; {}", s.ours,
                                                  resume, s.theirs, advice));
}

void check_resume_target(std::uint64_t done, std::uint64_t target, const std::string& resume,
                         const std::string& flag) {
    if (done > target)
        throw ConfigError(flag, fmt::format("is {} but {} already has {} iterations: give a "
                                            "total of at least {} (or take the model it ended "
                                            "with)",
                                            target, resume, done, done));
}

void refuse_other_input(const std::string& resume, const std::string& other,
                        const std::string& name, const std::string& ours, const std::string& theirs,
                        const std::string& same_sizes, const std::string& flag) {
    throw ConfigError(
        flag, fmt::format("{} was made on {} than {} ({})", resume, other, name,
                          ours == theirs
                              ? "the same sizes, " + same_sizes
                              : fmt::format("{} has {}, the checkpoint's {}", name, ours, theirs)));
}

}  // namespace rotor::train
