// Test helpers of the MF commands: run the real `rotor` binary in a temporary directory and
// capture its exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "tests/core/io/temp_dir.h"

namespace rotor::apps::testing {

struct CommandResult {
    int code = -1;
    std::string out;
    std::string err;
};

/// Runs `rotor <args>` (args are passed to the shell as written) with its output captured in
/// files of `dir`.
inline CommandResult run_rotor(const rotor::testing::TempDir& dir, const std::string& args) {
    static int n = 0;
    const std::string out = dir.file("stdout." + std::to_string(n));
    const std::string err = dir.file("stderr." + std::to_string(n++));
    const std::string cmd =
        std::string(ROTOR_BINARY_DIR "/apps/rotor ") + args + " >" + out + " 2>" + err;
    const int status = std::system(cmd.c_str());
    CommandResult r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = rotor::testing::read_all(out);
    r.err = rotor::testing::read_all(err);
    return r;
}

}  // namespace rotor::apps::testing
