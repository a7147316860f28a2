#include "core/corpus/vocabulary.h"

#include <limits>

#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/line_reader.h"

namespace rotor::core {
namespace {

bool is_blank_word(std::string_view w) {
    return w.find_first_not_of(" \t") == std::string_view::npos;
}

/// The rule for one vocabulary entry, wherever it comes from: not blank, no line break, and no
/// tab (rotor's TSV outputs, `lda export`, separate fields with tabs, and must read back).
void check_word(const std::string& name, std::size_t line, std::string_view w) {
    if (is_blank_word(w)) throw InputError(name, line, 1, "empty vocabulary entry");
    if (w.find_first_of("\r\n") != std::string_view::npos)
        throw InputError(name, line, 1, "vocabulary entry contains a line break");
    if (const auto tab = w.find('\t'); tab != std::string_view::npos)
        throw InputError(name, line, tab + 1,
                         "vocabulary entry contains a tab (rotor's TSV files separate fields "
                         "with tabs)");
}

}  // namespace

Vocabulary Vocabulary::from_words(std::vector<std::string> words, const std::string& name) {
    Vocabulary v;
    v.words_.reserve(words.size());
    v.index_.reserve(words.size());
    for (std::size_t i = 0; i < words.size(); ++i) {
        std::string& w = words[i];
        check_word(name, i + 1, w);
        if (v.words_.size() >= std::numeric_limits<WordId>::max()) {
            throw InputError(name, i + 1, 1, "more than 2^32-1 vocabulary entries");
        }
        const auto [it, inserted] = v.index_.try_emplace(w, static_cast<WordId>(i));
        if (!inserted) {
            throw InputError(name, i + 1, 1,
                             "duplicate vocabulary entry '" + w + "' (first on line " +
                                 std::to_string(it->second + 1) + ")");
        }
        v.words_.push_back(std::move(w));
    }
    return v;
}

Vocabulary Vocabulary::load(const std::string& path) {
    LineReader reader(path);
    std::vector<std::string> words;
    std::string_view line;
    while (reader.next(line)) words.emplace_back(line);
    if (words.empty()) throw InputError(path, "empty vocabulary file");
    return from_words(std::move(words), path);
}

void Vocabulary::save(const std::string& path) const {
    AtomicFile f(path);
    for (const std::string& w : words_) {
        f.write(w);
        f.write("\n");
    }
    f.commit();
}

std::optional<WordId> Vocabulary::find(std::string_view word) const {
    const auto it = index_.find(word);
    if (it == index_.end()) return std::nullopt;
    return it->second;
}

WordId Vocabulary::add(std::string word) {
    const std::size_t line = words_.size() + 1;
    check_word("<vocabulary>", line, word);
    if (words_.size() >= std::numeric_limits<WordId>::max()) {
        throw InputError("<vocabulary>", line, 1, "more than 2^32-1 vocabulary entries");
    }
    const auto id = static_cast<WordId>(words_.size());
    const auto [it, inserted] = index_.try_emplace(word, id);
    if (!inserted) {
        throw InputError("<vocabulary>", line, 1,
                         "duplicate vocabulary entry '" + word + "' (first on line " +
                             std::to_string(it->second + 1) + ")");
    }
    words_.push_back(std::move(word));
    return id;
}

}  // namespace rotor::core
