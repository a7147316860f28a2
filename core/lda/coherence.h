// Topic coherence: the UMass measure of Mimno et al. (EMNLP 2011, eq. 1), from document
// co-occurrence counts in the training corpus. Higher (closer to 0) is more coherent.
#pragma once

#include <cstddef>
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
/// O(N + Σ_t M² · D(v)) time, O(Σ_t M) documents lists. Single-threaded; pure.
Coherence umass_coherence(const core::Corpus& corpus, const std::vector<std::vector<WordId>>& top);

}  // namespace rotor::lda
