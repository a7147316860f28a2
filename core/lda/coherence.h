// Topic coherence: the UMass measure of Mimno et al. (EMNLP 2011, eq. 1), from document
// co-occurrence counts in the training corpus. Higher (closer to 0) is more coherent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/base/types.h"
#include "core/corpus/corpus.h"

namespace rotor::lda {

/// UMass coherence of every topic and their mean.
struct Coherence {
    std::vector<double> per_topic;  ///< C(t) for each list in `top`, same order
    double mean = 0;                ///< average of per_topic (0 when there are no topics)
};

/// For each topic's top words v_1..v_M (most probable first):
///   C(t) = Σ_{m=2..M} Σ_{l<m} ln((D(v_m, v_l) + 1) / D(v_l)),
/// D(v) = number of documents of `corpus` containing v, D(v, v') = containing both. The
/// denominator is the higher-ranked word of each pair, as in Mimno et al. and gensim's
/// "u_mass". A list of M words has M(M−1)/2 terms; lists may have different lengths.
/// Throws InputError("<corpus>", ...) when a word id is ≥ W or occurs in no document (the
/// corpus is not the one the topics were trained on), or when a list repeats a word.
/// Each distinct pair of words is counted once, whichever lists hold it: the documents of the
/// word in fewer documents are looked up in a bitmap of the other's. O(N + P log P + Σ_pairs
/// min(D(v), D(v'))) time for P distinct pairs, so big K (many lists sharing frequent words)
/// stays cheap; memory as umass_coherence_bytes. The numbers are those of the definition above
/// summed in list order (identical to intersecting every pair's document lists anew).
/// Single-threaded; pure.
Coherence umass_coherence(const core::Corpus& corpus, const std::vector<std::vector<WordId>>& top);

/// An upper bound of the bytes umass_coherence allocates for `num_topics` lists of `top` words
/// on a corpus of N = `num_tokens`, W = `num_words`, D = `num_docs` (the lists not counted).
std::uint64_t umass_coherence_bytes(std::uint64_t num_tokens, WordId num_words, DocId num_docs,
                                    std::uint64_t num_topics, std::uint64_t top);

}  // namespace rotor::lda
