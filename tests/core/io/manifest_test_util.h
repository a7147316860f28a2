// Test helper for the readers' own checks behind a directory's MANIFEST (core/io/manifest.h): a
// test that damages a file of a sealed directory first sees the manifest refuse it, naming the
// file; the directory is then sealed anew (as after an edit on purpose, `rotor seal`), so that
// what the test expects next is the file's own check.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/base/error.h"
#include "core/io/manifest.h"

namespace rotor::testing {

/// When `dir` has a MANIFEST: `read()` must throw an InputError naming `path`; then `dir` is
/// sealed anew. Without one, nothing.
template <class Read>
void expect_manifest_refuses_then_reseal(const std::string& dir, const std::string& path,
                                         Read&& read) {
    if (!std::filesystem::exists(dir + "/" + std::string(core::kManifestName))) return;
    try {
        read();
        ADD_FAILURE() << "the manifest accepted a damaged " << path;
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    core::write_manifest(dir);
}

}  // namespace rotor::testing
