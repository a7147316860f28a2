#include "core/logreg/examples.h"

#include "core/base/error.h"
#include "core/io/svmlight.h"

namespace rotor::logreg {

void Examples::add(int label, std::span<const std::uint64_t> k, std::span<const double> v) {
    ROTOR_ASSERT(label == 1 || label == -1, "labels are -1 or +1");
    ROTOR_ASSERT(k.size() == v.size(), "one value per key");
    labels.push_back(static_cast<std::int8_t>(label));
    keys.insert(keys.end(), k.begin(), k.end());
    values.insert(values.end(), v.begin(), v.end());
    offsets.push_back(keys.size());
}

std::uint64_t hash_feature(std::string_view name) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const char c : name) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
    h ^= h >> 31;
    return h == kInterceptKey ? h - 1 : h;
}

Examples read_examples(core::LineReader& r, const ReadExamplesOptions& options) {
    Examples out;
    core::SvmlightReader lines(
        r, options.hash_features ? core::SvmlightKeys::kHashed : core::SvmlightKeys::kKey,
        &hash_feature);
    while (lines.next("label")) {
        const double y = lines.target();
        if (y != 1 && y != -1 && y != 0) {
            r.fail(lines.target_column(),
                   "label \"" + std::string(lines.target_text()) + "\" is not +1, -1 or 0");
        }
        out.add(y == 1 ? 1 : -1, lines.keys(), lines.values());
    }
    return out;
}

Examples read_examples(const std::string& path, const ReadExamplesOptions& options) {
    core::LineReader reader(path);
    return read_examples(reader, options);
}

}  // namespace rotor::logreg
