// Failures every rank agrees on. A step that may fail on some ranks only (bad input on one rank,
// a file one rank cannot write) runs inside run_agreed: afterwards either every rank goes on, or
// every rank throws the same AgreedError (the lowest failing rank's message and exit code), so
// main() prints it once (rank 0) and every rank exits normally with that code, without aborting
// the job (docs/comm.md, "Failure semantics").
#pragma once

#include <functional>
#include <string>

#include "comm/communicator.h"
#include "core/base/error.h"

namespace rotor::comm {

/// An error every rank agreed on (Communicator::agree_on_failure): all ranks throw it with the
/// same message and exit code.
class AgreedError : public Error {
  public:
    AgreedError(ExitCode code, int failed_rank, const std::string& what)
        : Error(what), code_(code), failed_rank_(failed_rank) {}
    ExitCode exit_code() const noexcept override { return code_; }
    /// The lowest rank that failed.
    int failed_rank() const noexcept { return failed_rank_; }

  private:
    ExitCode code_;
    int failed_rank_;
};

/// Collective: runs `step` on every rank; if it throws a rotor::Error on any rank (e.g. bad
/// input on one rank), every rank throws AgreedError with the lowest failing rank's message and
/// exit code. Other exceptions propagate on their rank only (the caller then aborts the job).
void run_agreed(Communicator& comm, const std::function<void()>& step);

}  // namespace rotor::comm
