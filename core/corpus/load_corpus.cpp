#include <filesystem>

#include "core/base/error.h"
#include "core/corpus/corpus.h"
#include "core/corpus/doc_names.h"
#include "core/io/line_reader.h"

namespace rotor::core {
namespace {

/// The vocabulary beside a UCI docword file: its name with "docword" replaced by "vocab" and
/// any ".gz" dropped (docword.nytimes.txt.gz -> vocab.nytimes.txt), if that file exists.
std::string uci_vocab_sibling(const std::string& docword_path) {
    namespace fs = std::filesystem;
    const fs::path p(docword_path);
    std::string name = p.filename().string();
    const auto at = name.find("docword");
    if (at == std::string::npos) return "";
    name.replace(at, 7, "vocab");
    if (name.ends_with(".gz")) name.resize(name.size() - 3);
    const fs::path sibling = p.parent_path() / name;
    std::error_code ec;
    return fs::is_regular_file(sibling, ec) ? sibling.string() : "";
}

void check_vocab_size(const Vocabulary& vocab, const Corpus& corpus, const std::string& vocab_path,
                      const std::string& corpus_path) {
    if (vocab.size() == corpus.num_words()) return;
    throw InputError(vocab_path, std::uint64_t{std::min(vocab.size(), corpus.num_words())} + 1, 0,
                     "vocabulary has " + std::to_string(vocab.size()) + " words but " +
                         corpus_path + " has W = " + std::to_string(corpus.num_words()));
}

}  // namespace

LoadedCorpus load_corpus(const std::string& path, const std::string& vocab_path,
                         const ReadLimits& limits) {
    LoadedCorpus out;
    std::error_code ec;
    if (is_binary_corpus(path)) {
        out.format = "binary";
        out.corpus = load_binary_corpus(path);
        std::string vp = vocab_path;
        if (vp.empty() && std::filesystem::is_regular_file(binary_vocab_path(path), ec)) {
            vp = binary_vocab_path(path);
        }
        if (!vp.empty()) {
            out.vocab = Vocabulary::load(vp);
            check_vocab_size(*out.vocab, out.corpus, vp, path);
        }
        if (std::filesystem::is_regular_file(doc_names_path(path), ec))
            out.doc_names = load_doc_names(doc_names_path(path), out.corpus.num_docs());
        return out;
    }
    out.format = "uci";
    const std::string vp = vocab_path.empty() ? uci_vocab_sibling(path) : vocab_path;
    Vocabulary vocab;
    out.corpus = read_uci(path, vp, &vocab, limits);
    if (!vp.empty()) out.vocab = std::move(vocab);
    return out;
}

}  // namespace rotor::core
