#include "core/corpus/doc_names.h"

#include <string_view>

#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/line_reader.h"

namespace rotor::core {

std::string doc_names_path(const std::string& corpus_path) { return corpus_path + ".docs"; }

std::string clean_doc_name(std::string name) {
    for (char& c : name)
        if (c == '\t' || c == '\n' || c == '\r') c = '_';
    if (name.empty()) name = "_";
    return name;
}

void save_doc_names(const std::vector<std::string>& names, const std::string& path) {
    std::string text;
    for (const std::string& n : names) {
        text += n;
        text += '\n';
    }
    write_file_atomically(path, text);
}

std::vector<std::string> load_doc_names(const std::string& path, std::uint64_t num_docs) {
    LineReader reader(path);
    std::vector<std::string> names;
    std::string_view line;
    while (reader.next(line)) {
        if (line.empty()) reader.fail(0, "empty document name");
        if (names.size() == num_docs)
            reader.fail(0,
                        "more names than the corpus's " + std::to_string(num_docs) + " documents");
        names.emplace_back(line);
    }
    if (names.size() != num_docs)
        throw InputError(path, std::to_string(names.size()) + " names for " +
                                   std::to_string(num_docs) + " documents");
    return names;
}

std::string doc_name(std::span<const std::string> names, std::span<const std::uint64_t> labels,
                     std::size_t d) {
    return d < names.size() ? names[d] : std::to_string(labels[d]);
}

}  // namespace rotor::core
