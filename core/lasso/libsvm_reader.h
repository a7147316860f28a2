// Reading a regression data set in the LIBSVM/svmlight sparse format (docs/lasso.md, "Input"):
//     <target> [qid:<n>] <index>:<value> <index>:<value> ... [# comment]
// one sample per line, plain or gzip (by magic bytes). The line rules are core::SvmlightReader's
// (core/io/svmlight.h) with 1-based indices below 2^32 - 1 (SvmlightKeys::kIndex); the target is
// any finite number. Any violation throws InputError `<path>:<line>:<col>: <what>` (exit code 2).
// The data has p = the largest index seen (at least ReadLibsvmOptions::min_features) features;
// samples with no feature are valid.
#pragma once

#include <cstdint>
#include <string>

#include "core/io/line_reader.h"
#include "core/io/read_limits.h"
#include "core/lasso/design.h"

namespace rotor::lasso {

/// Options of read_libsvm(). A plain struct.
struct ReadLibsvmOptions {
    /// p is at least this (a model's feature count, when reading data to predict on).
    std::uint32_t min_features = 0;
    /// limits.max_bytes bounds the samples' memory while they are read (RawData::reading_bytes),
    /// checked after each line: a file that would take more is refused at the line that takes
    /// it over (core::ReadLimits::refuse_bytes), before the rest is read.
    core::ReadLimits limits;
};

/// Reads `path` (plain or gzip). Returns sparse RawData (dense == false).
RawData read_libsvm(const std::string& path, const ReadLibsvmOptions& options = {});

/// The same from an open reader (tests, fuzzing).
RawData read_libsvm(core::LineReader& reader, const ReadLibsvmOptions& options = {});

}  // namespace rotor::lasso
