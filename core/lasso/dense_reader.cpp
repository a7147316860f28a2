#include "core/lasso/dense_reader.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/base/error.h"

namespace rotor::lasso {
namespace {

/// The 0-based target column among `fields` columns.
std::size_t target_column(const ReadDenseOptions& o, const std::vector<std::string>& names,
                          std::size_t fields) {
    if (o.target.empty()) return fields - 1;
    if (std::all_of(o.target.begin(), o.target.end(),
                    [](char c) { return c >= '0' && c <= '9'; })) {
        const std::size_t k = std::stoul(o.target.substr(0, 9));
        if (o.target.size() > 9 || k < 1 || k > fields) {
            throw ConfigError("target",
                              "column " + o.target + " is not in 1.." + std::to_string(fields));
        }
        return k - 1;
    }
    if (names.empty()) throw ConfigError("target", "\"" + o.target + "\" needs a header line");
    const auto it = std::find(names.begin(), names.end(), o.target);
    if (it == names.end()) throw ConfigError("target", "no column named \"" + o.target + "\"");
    return static_cast<std::size_t>(it - names.begin());
}

}  // namespace

RawData read_dense(core::LineReader& r, const ReadDenseOptions& options) {
    RawData out;
    out.dense = true;
    std::vector<double> row;
    std::vector<std::uint32_t> cols;
    std::size_t target = 0;
    core::DenseTableOptions table;
    table.header = options.header;
    table.min_columns = 2;
    table.too_few =
        "one column: a target and at least one feature are needed (separators are ',' or a tab)";
    core::read_dense_table(
        r, table,
        [&](const std::vector<std::string>& names, std::size_t width) {
            target = target_column(options, names, width);
            out.features = static_cast<std::uint32_t>(width - 1);
            cols.resize(width - 1);
            std::iota(cols.begin(), cols.end(), 0u);
            for (std::size_t k = 0; k < names.size(); ++k) {
                if (k != target) out.feature_names.push_back(names[k]);
            }
        },
        [&](std::span<const double> values) {
            row.assign(values.begin(), values.end());
            const double y = row[target];
            row.erase(row.begin() + static_cast<std::ptrdiff_t>(target));
            if (out.targets.size() >= 0xFFFFFFFFu) r.fail(1, "more than 2^32 - 1 samples");
            out.add_sample(y, cols, row);
            const std::uint64_t bytes = out.reading_bytes();
            if (bytes > options.limits.max_bytes)
                options.limits.refuse_bytes(bytes, r.name(), r.line_number(), 1, "the samples");
        });
    return out;
}

RawData read_dense(const std::string& path, const ReadDenseOptions& options) {
    core::LineReader reader(path);
    return read_dense(reader, options);
}

}  // namespace rotor::lasso
