// `rotor verify PATH` and `rotor seal PATH`: every model and checkpoint rotor writes, of any
// model, checked whole, or sealed anew after an edit made on purpose (docs/formats.md,
// "Manifests"). A directory (LDA and MF models, every checkpoint) is checked against its
// MANIFEST (core/io/manifest.h) and read by its model's reader; a single-file model (Lasso,
// logistic regression) against its crc32 line. Sealing writes the MANIFEST (or the crc32 line)
// anew and keeps it only if the result then reads as a model of its kind.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace rotor::apps {

/// What a path holds, as far as verify and seal are concerned.
enum class SavedKind {
    kLdaModel,
    kMfModel,
    kLassoModel,
    kLogregModel,
    kLdaCheckpoint,
    kMfCheckpoint,
    kLassoCheckpoint,
    kLogregCheckpoint,
};

/// "LDA model", "MF checkpoint", ...
const char* saved_kind_name(SavedKind kind);

/// Recognises `path` by its main file's format (params.json, state.json) or its first line.
/// Throws InputError naming it when it is none of rotor's.
SavedKind saved_kind(const std::string& path);

/// What verify_saved() found.
struct VerifyReport {
    SavedKind kind{};
    bool sealed = false;  ///< a MANIFEST or a crc32 line checked every byte
    int files = 0;        ///< files the manifest listed (1 for a single-file model)
};

/// Checks `path` whole: every file against the MANIFEST (every byte, parts included), or a
/// single file against its crc32 line, then reads it with its model's reader. Throws InputError
/// naming the file at fault. Local (no MPI).
VerifyReport verify_saved(const std::string& path);

/// Seals `path` anew: writes its MANIFEST listing the files as they are now (or a single-file
/// model's crc32 line), then verify_saved(); on failure the previous MANIFEST (or file) is put
/// back and the InputError rethrown, so nothing unreadable is ever sealed.
VerifyReport seal_saved(const std::string& path);

/// Adds `rotor verify` and `rotor seal`.
void add_seal_commands(CLI::App& app);

}  // namespace rotor::apps
