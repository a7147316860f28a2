// Writing a corpus in the UCI bag-of-words format (for the data scripts and other tools).
#pragma once

#include <string>

#include "core/corpus/corpus.h"
#include "core/corpus/vocabulary.h"

namespace rotor::core {

/// Writes `corpus` as a UCI docword file (gzip-compressed if `docword_path` ends in ".gz"): doc
/// d becomes UCI doc d+1 (labels are not kept), entries sorted by doc then word, counts
/// aggregated. If `vocab` is not null, writes it to `vocab_path`. Both files are atomic and
/// committed only after both were written. Throws SystemError.
void save_uci(const Corpus& corpus, const Vocabulary* vocab, const std::string& docword_path,
              const std::string& vocab_path);

}  // namespace rotor::core
