// libFuzzer target: the binary corpus loader on arbitrary bytes. Each input is tried twice: as
// is, and with its checksum recomputed, so the structural checks behind the checksum are
// reached too. Only InputError may escape.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "core/base/error.h"
#include "core/corpus/binary_format.h"
#include "core/corpus/corpus.h"

namespace {

void check(std::span<const std::byte> bytes) {
    using namespace rotor;
    using namespace rotor::core;
    try {
        const Corpus c = parse_binary_corpus(bytes, "fuzz.bin");
        const auto off = c.doc_offsets();
        if (off.front() != 0 || off.back() != c.num_tokens()) __builtin_trap();
        for (DocId d = 0; d < c.num_docs(); ++d) {
            if (off[d] > off[d + 1]) __builtin_trap();
        }
        for (WordId w : c.word_ids()) {
            if (w >= c.num_words()) __builtin_trap();
        }
    } catch (const rotor::InputError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rotor;
    using namespace rotor::core;
    const auto bytes = std::as_bytes(std::span<const std::uint8_t>(data, size));
    check(bytes);
    if (size >= sizeof(rotor::core::detail::CorpusHeader)) {
        std::vector<std::byte> fixed(bytes.begin(), bytes.end());
        rotor::core::detail::Checksum sum;
        sum.add(
            std::span<const std::byte>(fixed).subspan(sizeof(rotor::core::detail::CorpusHeader)));
        const std::uint64_t v = sum.value();
        std::memcpy(fixed.data() + offsetof(rotor::core::detail::CorpusHeader, checksum), &v,
                    sizeof v);
        check(fixed);
    }
    return 0;
}
