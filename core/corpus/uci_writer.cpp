#include <algorithm>
#include <optional>
#include <vector>

#include "core/corpus/corpus.h"
#include "core/corpus/uci_writer.h"
#include "core/io/atomic_file.h"
#include "core/io/gzip_writer.h"

namespace rotor::core {
namespace {

/// Appends the UCI body and header to `sink` (a GzipWriter or an AtomicFile).
template <class Sink>
void write_docword(const Corpus& corpus, Sink& sink) {
    // NNZ first: one pass counting distinct words per doc.
    std::vector<WordId> words;
    auto for_each_entry = [&](auto&& fn) {
        for (DocId d = 0; d < corpus.num_docs(); ++d) {
            const auto doc = corpus.doc(d);
            words.assign(doc.begin(), doc.end());
            std::sort(words.begin(), words.end());
            for (std::size_t i = 0; i < words.size();) {
                std::size_t j = i;
                while (j < words.size() && words[j] == words[i]) ++j;
                fn(d, words[i], j - i);
                i = j;
            }
        }
    };
    std::uint64_t nnz = 0;
    for_each_entry([&](DocId, WordId, std::size_t) { ++nnz; });
    std::string buf = std::to_string(corpus.num_docs()) + "\n" +
                      std::to_string(corpus.num_words()) + "\n" + std::to_string(nnz) + "\n";
    for_each_entry([&](DocId d, WordId w, std::size_t c) {
        buf += std::to_string(d + std::uint64_t{1});
        buf += ' ';
        buf += std::to_string(w + std::uint64_t{1});
        buf += ' ';
        buf += std::to_string(c);
        buf += '\n';
        if (buf.size() >= (1u << 20)) {
            sink.write(buf);
            buf.clear();
        }
    });
    sink.write(buf);
}

}  // namespace

void save_uci(const Corpus& corpus, const Vocabulary* vocab, const std::string& docword_path,
              const std::string& vocab_path) {
    AtomicFile docword(docword_path);
    if (docword_path.ends_with(".gz")) {
        GzipWriter gz(docword);
        write_docword(corpus, gz);
        gz.finish();
    } else {
        write_docword(corpus, docword);
    }
    std::optional<AtomicFile> vocab_file;
    if (vocab != nullptr && !vocab_path.empty()) {
        vocab_file.emplace(vocab_path);
        for (const std::string& w : vocab->words()) {
            vocab_file->write(w);
            vocab_file->write("\n");
        }
    }
    docword.commit();
    if (vocab_file) vocab_file->commit();
}

}  // namespace rotor::core
