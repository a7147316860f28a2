#include "comm/agreed.h"

#include <cstdlib>

#include <fmt/format.h>

namespace rotor::comm {

void run_agreed(Communicator& comm, const std::function<void()>& step) {
    bool failed = false;
    std::string message;
    try {
        step();
    } catch (const Error& e) {
        failed = true;
        // The exit code travels in front of the message: "<code>|<what>".
        message = fmt::format("{}|{}", static_cast<int>(e.exit_code()), e.what());
    }
    const auto failure = comm.agree_on_failure_detail(failed, message);
    if (!failure) return;
    const std::size_t bar = failure->message.find('|');
    int code = static_cast<int>(ExitCode::kInternal);
    std::string what = failure->message;
    if (bar != std::string::npos) {
        code = std::atoi(failure->message.substr(0, bar).c_str());
        what = failure->message.substr(bar + 1);
    }
    throw AgreedError(static_cast<ExitCode>(code), failure->rank, what);
}

}  // namespace rotor::comm
