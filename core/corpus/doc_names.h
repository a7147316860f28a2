// Document names: the sibling file `<corpus>.docs` of a binary corpus built from a folder of
// text files, one name per line, line d+1 naming document d (docs/formats.md, "Document names").
// Infer, export and the doc × topic tables print a document's name when its corpus has one, else
// its 1-based input id (label).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rotor::core {

/// `<corpus_path>.docs`.
std::string doc_names_path(const std::string& corpus_path);

/// `name` with each tab, line feed and carriage return replaced by '_' (names are TSV fields);
/// an empty name becomes "_".
std::string clean_doc_name(std::string name);

/// Writes one name per line, atomically. Every name must be clean (clean_doc_name). Throws
/// SystemError.
void save_doc_names(const std::vector<std::string>& names, const std::string& path);

/// Reads a names file written by save_doc_names. Throws InputError `<path>:<line>: ...` when it
/// cannot be read, has an empty line, or does not have exactly `num_docs` lines.
std::vector<std::string> load_doc_names(const std::string& path, std::uint64_t num_docs);

/// Document d's name: names[d] when there are names, else its label as a number.
std::string doc_name(std::span<const std::string> names, std::span<const std::uint64_t> labels,
                     std::size_t d);

}  // namespace rotor::core
