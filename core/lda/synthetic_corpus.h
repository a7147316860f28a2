// Synthetic corpora drawn from LDA's generative process with planted topics: test fixtures and
// benchmark inputs of realistic shape (Zipfian word frequencies, short sparse documents).
#pragma once

#include <cstdint>
#include <vector>

#include "core/base/types.h"

namespace rotor::lda {

/// Shape of a synthetic corpus. Each planted topic puts Zipfian weights (rank^-zipf_exponent,
/// in one global word order) on its own support; with `disjoint_supports` the supports are
/// disjoint slices of the vocabulary, otherwise every word belongs to a topic with probability
/// `support_fraction`. Docs draw their topic proportions from Dirichlet(doc_alpha).
struct SyntheticSpec {
    std::uint32_t num_docs = 1000;        ///< D
    std::uint32_t vocab_size = 1000;      ///< V
    std::uint32_t num_topics = 10;        ///< planted topics
    std::uint32_t mean_doc_length = 100;  ///< tokens; lengths uniform in [mean/2, 3 mean/2]
    double zipf_exponent = 1.0;           ///< word-frequency decay, >= 0
    double doc_alpha = 0.1;               ///< Dirichlet prior of doc proportions, > 0
    bool disjoint_supports = true;        ///< topics own disjoint vocabulary slices
    double support_fraction = 0.1;        ///< when not disjoint, in (0, 1]
    std::uint64_t seed = 1;               ///< everything is a function of the spec
};

/// A doc-major corpus (CSR) and the planted distributions it was drawn from.
struct SyntheticCorpus {
    std::vector<std::uint64_t> doc_offsets;  ///< size D+1
    std::vector<WordId> word_ids;            ///< size N
    std::vector<std::vector<double>>
        topic_word;  ///< planted φ: num_topics rows of V, each sums to 1

    std::uint32_t num_docs() const { return static_cast<std::uint32_t>(doc_offsets.size() - 1); }
    TokenIndex num_tokens() const { return word_ids.size(); }
};

/// Draws a corpus from `spec`. Deterministic in spec (including the seed). O(N log V).
SyntheticCorpus make_synthetic_corpus(const SyntheticSpec& spec);

/// How well `learned` topic-word rows (any scale; each of length V) recover `planted` ones: for
/// every planted row the best cosine similarity over the learned rows, averaged. In [0, 1].
double mean_best_cosine(const std::vector<std::vector<double>>& planted,
                        const std::vector<std::vector<double>>& learned);

}  // namespace rotor::lda
