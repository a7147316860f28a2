// Reading the Lasso's input for the `rotor lasso` commands: LIBSVM/svmlight, CSV/TSV or the
// binary form by --format (or by the file's first bytes and extension), and the flags that
// choose them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "core/corpus/corpus.h"
#include "core/lasso/data_binary.h"
#include "core/lasso/design.h"

namespace rotor::apps::lasso_cli {

/// --data, --format, --target of a command.
struct DataFlags {
    std::string path;
    std::string format = "auto";  ///< auto (magic bytes, extension), libsvm, csv, binary
    std::string target;           ///< csv: the target column (name or 1-based number; last)

    /// Registers the three flags on `c` (--data required).
    void add(CLI::App& c, const std::string& what);
    /// "libsvm", "csv" or "binary" for this path.
    std::string resolved_format() const;
    /// The samples. `min_features`: libsvm's p is at least this (a model's feature count).
    /// Throws InputError (path:line:col) and ConfigError (--format, --target).
    lasso::RawData read(std::uint32_t min_features = 0, const core::ReadLimits& limits = {}) const;
    /// The binary form mapped, not copied (lasso::MappedData: a rank then copies its own
    /// samples); nothing for text input. Throws as read() does.
    std::optional<lasso::MappedData> map_binary() const;
};

}  // namespace rotor::apps::lasso_cli
