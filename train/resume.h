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
/// not the checkpoint's: "<flag>: is X but <resume> was trained with Y; <advice>".
void refuse_resume_conflicts(std::span<const ResumeSetting> settings,
                             const std::function<bool(const std::string&)>& given,
                             const std::string& resume,
                             const std::string& advice = "resume without it or start a new run");

/// Throws ConfigError(`flag`) when the checkpoint at `resume` has done more than `target`
/// iterations: its model could not honour the total asked for (a 90-iteration model is not a
/// 50-iteration one), so the message says how many it has.
void check_resume_target(std::uint64_t done, std::uint64_t target, const std::string& resume,
                         const std::string& flag = "--iterations");

/// Throws ConfigError(`flag`) for a checkpoint `resume` made on other input than `name` (the
/// fingerprints differ): "<resume> was made on <other> than <name> (<name> has <ours>, the
/// checkpoint's <theirs>)" where the sizes differ, "(the same sizes, <same_sizes>)" where they
/// agree. `ours`, `theirs`: the sizes as text ("80 documents, 10052 words and 5412 tokens").
[[noreturn]] void refuse_other_input(const std::string& resume, const std::string& other,
                                     const std::string& name, const std::string& ours,
                                     const std::string& theirs, const std::string& same_sizes,
                                     const std::string& flag = "--resume");

/// Whether iteration `iter` of a run to `last` is followed by a checkpoint: every `every`
/// (0: never), and the last one, so that a finished run can be continued to a larger total.
inline bool checkpoint_due(std::uint32_t iter, std::uint32_t every, std::uint32_t last) {
    return every > 0 && (iter % every == 0 || iter == last);
}

}  // namespace rotor::train
