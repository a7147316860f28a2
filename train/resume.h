// What --resume may and may not change, one rule for every model: a run resumed from a
// checkpoint continues with the checkpoint's settings; a model-defining flag the user gave with
// another value is refused by name (keeping the checkpoint's silently would hide the user's
// intent), and the total to reach may grow but not fall below what is done.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace rotor::train {

/// One setting as the run's flags have it and as the checkpoint has it, printed.
struct ResumeSetting {
    std::string flag;    ///< e.g. "--topics"
    std::string ours;    ///< the value the flags give
    std::string theirs;  ///< the checkpoint's
};

/// Throws ConfigError(flag) for the first setting the user gave (`given(flag)`) whose value is
/// not the checkpoint's: "<flag>: is X but <resume> was trained with Y; ...".
void refuse_resume_conflicts(std::span<const ResumeSetting> settings,
                             const std::function<bool(const std::string&)>& given,
                             const std::string& resume);

/// Throws ConfigError(`flag`) when the checkpoint at `resume` has done more than `target`
/// iterations: its model could not honour the total asked for (a 90-iteration model is not a
/// 50-iteration one), so the message says how many it has.
void check_resume_target(std::uint64_t done, std::uint64_t target, const std::string& resume,
                         const std::string& flag = "--iterations");

}  // namespace rotor::train
