// libFuzzer target: the LIBSVM/svmlight line reader (core/io/svmlight.h) on arbitrary bytes, with
// the key kind chosen by the first byte (the Lasso's 1-based indices, logreg's 64-bit keys or
// hashed names). Only InputError may escape the reader; anything else (another exception, a
// sanitizer report, an assert) is a bug, as is a line that breaks the reader's promises.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/base/error.h"
#include "core/io/line_reader.h"
#include "core/io/svmlight.h"

namespace {

/// A small hash with many collisions, so the reader's merging of colliding names is exercised.
std::uint64_t weak_hash(std::string_view name) {
    std::uint64_t h = 0;
    for (const char c : name) h = h * 31 + static_cast<unsigned char>(c);
    return h % 97;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rotor;
    using namespace rotor::core;
    if (size == 0) return 0;
    const SvmlightKeys kinds[] = {SvmlightKeys::kIndex, SvmlightKeys::kKey, SvmlightKeys::kHashed};
    const SvmlightKeys kind = kinds[data[0] % 3];
    const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        // A small buffer exercises refills and buffer growth.
        LineReader reader(memory_byte_source("fuzz.svm", bytes), 64);
        SvmlightReader svm(reader, kind, weak_hash);
        while (svm.next("target")) {
            if (!std::isfinite(svm.target())) __builtin_trap();
            const auto keys = svm.keys();
            const auto values = svm.values();
            if (keys.size() != values.size()) __builtin_trap();
            for (std::size_t i = 0; i < keys.size(); ++i) {
                if (!std::isfinite(values[i]) || values[i] == 0) __builtin_trap();
                if (i > 0 && keys[i] <= keys[i - 1]) __builtin_trap();
                if (kind == SvmlightKeys::kIndex && (keys[i] == 0 || keys[i] > 0xFFFFFFFEu)) {
                    __builtin_trap();
                }
                if (kind != SvmlightKeys::kHashed && keys[i] > svm.largest_key()) __builtin_trap();
            }
        }
    } catch (const rotor::InputError&) {
    }
    return 0;
}
