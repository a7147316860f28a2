#include "apps/seal_cli.h"

#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "apps/lasso/checkpoint.h"
#include "apps/lda/checkpoint.h"
#include "apps/logreg/checkpoint.h"
#include "apps/mf/checkpoint.h"
#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/checksum.h"
#include "core/io/manifest.h"
#include "core/io/whole_file.h"
#include "core/lasso/model_file.h"
#include "core/lda/model.h"
#include "core/logreg/model_file.h"
#include "core/mf/model_file.h"
#include "train/json_fields.h"

namespace rotor::apps {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kLassoMagic = "rotor-lasso-model\n";
constexpr std::string_view kLogregMagic = "rotor-logreg-model 2\n";
constexpr std::string_view kLogregMagicV1 = "rotor-logreg-model 1\n";

bool is_directory_kind(SavedKind k) {
    return k != SavedKind::kLassoModel && k != SavedKind::kLogregModel;
}

/// The "format" of a directory's main JSON file.
std::string format_of(const std::string& json_path) {
    return train::json_string(train::read_json_file(json_path), "format", json_path);
}

/// Reads `path` with its model's reader (which checks the MANIFEST it finds).
void read_as(SavedKind kind, const std::string& path) {
    switch (kind) {
        case SavedKind::kLdaModel:
            lda::load_model(path);
            return;
        case SavedKind::kMfModel:
            mf::read_model(path);
            return;
        case SavedKind::kLassoModel:
            lasso::read_model(path);
            return;
        case SavedKind::kLogregModel:
            logreg::read_model(path);
            return;
        case SavedKind::kLdaCheckpoint:
            lda::read_checkpoint(path, 0, 1);
            return;
        case SavedKind::kMfCheckpoint:
            mf::read_checkpoint(path);
            return;
        case SavedKind::kLassoCheckpoint:
            lasso::read_checkpoint(path);
            return;
        case SavedKind::kLogregCheckpoint:
            logreg::read_checkpoint(path);
            return;
    }
}

/// The separator of a single-file model's crc32 line.
char crc_separator(SavedKind kind) { return kind == SavedKind::kLassoModel ? '\t' : ' '; }

/// `text` without its last line when that is a crc32 line.
std::string_view without_crc_line(std::string_view text, char sep) {
    if (text.empty() || text.back() != '\n') return text;
    const std::size_t prev = text.rfind('\n', text.size() - 2);
    const std::size_t start = prev == std::string_view::npos ? 0 : prev + 1;
    return text.substr(start).starts_with(fmt::format("crc32{}", sep)) ? text.substr(0, start)
                                                                       : text;
}

}  // namespace

const char* saved_kind_name(SavedKind kind) {
    switch (kind) {
        case SavedKind::kLdaModel:
            return "LDA model";
        case SavedKind::kMfModel:
            return "MF model";
        case SavedKind::kLassoModel:
            return "Lasso model";
        case SavedKind::kLogregModel:
            return "logistic-regression model";
        case SavedKind::kLdaCheckpoint:
            return "LDA checkpoint";
        case SavedKind::kMfCheckpoint:
            return "MF checkpoint";
        case SavedKind::kLassoCheckpoint:
            return "Lasso checkpoint";
        case SavedKind::kLogregCheckpoint:
            return "logistic-regression checkpoint";
    }
    return "?";
}

SavedKind saved_kind(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        const std::string params = (fs::path(path) / "params.json").string();
        const std::string state = (fs::path(path) / "state.json").string();
        if (fs::exists(params, ec)) {
            const std::string f = format_of(params);
            if (f == "rotor-lda-model") return SavedKind::kLdaModel;
            if (f == "rotor-mf-model") return SavedKind::kMfModel;
            throw InputError(params, fmt::format("unknown format \"{}\"", f));
        }
        if (fs::exists(state, ec)) {
            const std::string f = format_of(state);
            if (f == "rotor-lda-checkpoint" || f == "rotor-lda-distributed-checkpoint")
                return SavedKind::kLdaCheckpoint;
            if (f == "rotor-mf-checkpoint") return SavedKind::kMfCheckpoint;
            if (f == "rotor-lasso-checkpoint") return SavedKind::kLassoCheckpoint;
            if (f == "rotor-logreg-checkpoint") return SavedKind::kLogregCheckpoint;
            throw InputError(state, fmt::format("unknown format \"{}\"", f));
        }
        throw InputError(path,
                         "not a model or checkpoint of rotor (no params.json, no state.json)");
    }
    const std::string text = core::read_whole_file(path);
    if (text.starts_with(kLassoMagic)) return SavedKind::kLassoModel;
    if (text.starts_with(kLogregMagic) || text.starts_with(kLogregMagicV1))
        return SavedKind::kLogregModel;
    throw InputError(path, 1, 1, "not a model or checkpoint of rotor");
}

VerifyReport verify_saved(const std::string& path) {
    VerifyReport r;
    r.kind = saved_kind(path);
    if (is_directory_kind(r.kind)) {
        // Every byte of every file, the parts included (a reader checks those against
        // state.json as it reads them, and a reader of fewer ranks reads only some).
        r.sealed = core::verify_manifest(path);
        if (r.sealed) {
            const std::string text =
                core::read_whole_file((fs::path(path) / core::kManifestName).string());
            r.files = static_cast<int>(core::parse_manifest(text, path).size());
        }
    } else {
        const std::string text = core::read_whole_file(path);
        r.sealed = !text.starts_with(kLogregMagicV1);  // Lasso models always had the line
        r.files = 1;
    }
    read_as(r.kind, path);
    return r;
}

VerifyReport seal_saved(const std::string& path) {
    const SavedKind kind = saved_kind(path);
    if (is_directory_kind(kind)) {
        const std::string manifest = (fs::path(path) / core::kManifestName).string();
        std::error_code ec;
        std::optional<std::string> before;
        if (fs::exists(manifest, ec)) before = core::read_whole_file(manifest);
        core::write_manifest(path);
        try {
            return verify_saved(path);
        } catch (const InputError& e) {
            if (before) {
                core::write_file_atomically(manifest, *before);
            } else {
                fs::remove(manifest, ec);
            }
            throw InputError(e.path(), e.line(), e.col(),
                             e.detail() + " (not sealed: the directory is left as it was)");
        }
    }
    const std::string before = core::read_whole_file(path);
    std::string body(without_crc_line(before, crc_separator(kind)));
    if (body.starts_with(kLogregMagicV1))  // sealing a version 1 model makes it version 2
        body.replace(0, kLogregMagicV1.size(), kLogregMagic);
    const std::string sealed = body + core::crc32_line(body, crc_separator(kind));
    try {
        if (kind == SavedKind::kLassoModel) {
            lasso::parse_model(sealed, path);
        } else {
            logreg::parse_model(sealed, path);
        }
    } catch (const InputError& e) {
        throw InputError(e.path(), e.line(), e.col(),
                         e.detail() + " (not sealed: the file is left as it was)");
    }
    core::write_file_atomically(path, sealed);
    return verify_saved(path);
}

void add_seal_commands(CLI::App& app) {
    const auto path = std::make_shared<std::string>();
    auto* verify = app.add_subcommand(
        "verify", "Check a model or checkpoint whole: every file against its manifest");
    verify->add_option("path", *path, "Model directory, checkpoint directory or model file")
        ->required();
    verify->callback([path] {
        const VerifyReport r = verify_saved(*path);
        if (r.sealed) {
            fmt::print("{}: {}, {} file{} verified\n", *path, saved_kind_name(r.kind), r.files,
                       r.files == 1 ? "" : "s");
        } else {
            fmt::print(
                "{}: {} of an older rotor, without a manifest: it reads, but its files are "
                "not verified as a whole (`rotor seal {}` writes one)\n",
                *path, saved_kind_name(r.kind), *path);
        }
    });
    const auto seal_path = std::make_shared<std::string>();
    auto* seal = app.add_subcommand(
        "seal", "After editing a model or checkpoint on purpose: write its manifest anew");
    seal->add_option("path", *seal_path, "Model directory, checkpoint directory or model file")
        ->required();
    seal->callback([seal_path] {
        const VerifyReport r = seal_saved(*seal_path);
        fmt::print("{}: {} sealed, {} file{}\n", *seal_path, saved_kind_name(r.kind), r.files,
                   r.files == 1 ? "" : "s");
    });
}

}  // namespace rotor::apps
