// Chained results inside comm (xgboost's collective/result.h is the model): internal steps
// return a Result that keeps the failing step and the steps that called it; only the public
// API turns a failed Result into the one exception type, rotor::CommError.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/base/error.h"

namespace rotor::comm::detail {

/// Success, or a failure with a chain of step descriptions (outermost first once formatted).
/// A value type; not thread-safe.
class [[nodiscard]] Result {
  public:
    static Result success() { return Result{}; }
    /// A failure of `step` because of `cause` (e.g. "MPI_Isend" / MPI_Error_string's text).
    static Result failure(std::string step, std::string cause) {
        Result r;
        r.failed_ = true;
        r.chain_.push_back(std::move(step) + ": " + std::move(cause));
        return r;
    }

    bool ok() const noexcept { return !failed_; }

    /// Adds the calling step's description to a failure; a success is returned unchanged.
    Result context(std::string step) && {
        if (failed_) chain_.push_back(std::move(step));
        return std::move(*this);
    }

    /// "outer: inner: innermost: cause".
    std::string message() const {
        std::string out;
        for (auto it = chain_.rbegin(); it != chain_.rend(); ++it) {
            if (!out.empty()) out += ": ";
            out += *it;
        }
        return out;
    }

    /// The public-API boundary: throws CommError(rank, message()) on failure.
    void throw_if_failed(int rank) const {
        if (failed_) throw CommError(rank, message());
    }

  private:
    bool failed_ = false;
    std::vector<std::string> chain_;  ///< innermost first
};

}  // namespace rotor::comm::detail

/// Returns from the enclosing function if `expr` (a Result) failed, adding `step` as context.
#define ROTOR_COMM_TRY(expr, step)                                              \
    do {                                                                        \
        ::rotor::comm::detail::Result rotor_comm_r_ = (expr);                   \
        if (!rotor_comm_r_.ok()) return std::move(rotor_comm_r_).context(step); \
    } while (0)
