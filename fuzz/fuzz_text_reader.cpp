// libFuzzer target: the text tokenizer and vocabulary builder on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/base/error.h"
#include "core/corpus/text_corpus.h"
#include "core/io/line_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rotor;
    using namespace rotor::core;
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    TextOptions opt;
    opt.min_df = 1 + (size % 3);
    opt.min_len = 1 + (size % 4);
    try {
        // A small buffer exercises refills and buffer growth.
        LineReader reader(memory_byte_source("fuzz.txt", bytes), 64);
        Vocabulary vocab;
        const Corpus c = read_text(reader, opt, &vocab);
        if (c.num_words() != vocab.size()) __builtin_trap();
        for (DocId d = 0; d < c.num_docs(); ++d) {
            if (c.doc(d).empty()) __builtin_trap();  // empty docs are dropped
        }
    } catch (const rotor::InputError&) {
    }
    return 0;
}
