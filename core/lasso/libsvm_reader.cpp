#include "core/lasso/libsvm_reader.h"

#include <algorithm>
#include <vector>

#include "core/io/svmlight.h"

namespace rotor::lasso {

RawData read_libsvm(core::LineReader& r, const ReadLibsvmOptions& options) {
    RawData out;
    std::vector<std::uint32_t> cols;
    std::uint64_t max_index = options.min_features;
    core::SvmlightReader lines(r, core::SvmlightKeys::kIndex);
    while (lines.next("target")) {
        cols.clear();
        for (const std::uint64_t index : lines.keys()) {
            cols.push_back(static_cast<std::uint32_t>(index - 1));
        }
        max_index = std::max(max_index, lines.largest_key());
        if (out.targets.size() >= 0xFFFFFFFFu) r.fail(1, "more than 2^32 - 1 samples");
        out.add_sample(lines.target(), cols, lines.values());
        const std::uint64_t bytes = out.reading_bytes();
        if (bytes > options.limits.max_bytes)
            options.limits.refuse_bytes(bytes, r.name(), r.line_number(), 1, "the samples");
    }
    out.features = static_cast<std::uint32_t>(max_index);
    return out;
}

RawData read_libsvm(const std::string& path, const ReadLibsvmOptions& options) {
    core::LineReader reader(path);
    return read_libsvm(reader, options);
}

}  // namespace rotor::lasso
