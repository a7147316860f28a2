// libFuzzer target: the UCI docword reader on arbitrary bytes (plain or gzip, by magic).
// Only InputError may escape the reader; anything else (another exception, a sanitizer report,
// an assert) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/base/error.h"
#include "core/corpus/corpus.h"
#include "core/io/line_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rotor;
    using namespace rotor::core;
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    // Small limits so a few header bytes cannot ask for gigabytes.
    ReadLimits limits;
    limits.max_docs = 1u << 16;
    limits.max_words = 1u << 20;
    limits.max_tokens = 1u << 22;
    try {
        // A small buffer exercises refills and buffer growth.
        LineReader reader(memory_byte_source("fuzz.txt", bytes), 64);
        const Corpus c = read_uci_docword(reader, limits);
        // The reader's promises: one label per doc, labels 1..D, word ids < W.
        if (c.doc_offsets().size() != std::size_t{c.num_docs()} + 1) __builtin_trap();
        for (DocId d = 0; d < c.num_docs(); ++d) {
            if (c.doc_labels()[d] != d + std::uint64_t{1}) __builtin_trap();
        }
        for (WordId w : c.word_ids()) {
            if (w >= c.num_words()) __builtin_trap();
        }
    } catch (const rotor::InputError&) {
    }
    return 0;
}
