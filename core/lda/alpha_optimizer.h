// Learning an asymmetric Dirichlet prior α on θ from the doc-topic counts: Minka's fixed-point
// iteration (Minka 2000, "Estimating a Dirichlet distribution", eq. 55, with the digamma
// differences written as sums over histograms, Wallach 2008 ch. 2 "digamma recurrence"), as
// Mallet does it (Dirichlet.learnParameters, called by ParallelTopicModel.optimizeAlpha with a
// Gamma(shape 1.001, scale 1) hyperprior and one iteration per call).
//
// Pure functions: no state, no threads; O(iterations · (K · max n_dk + max n_d)).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/lda/doc_topic_table.h"
#include "core/lda/model.h"

namespace rotor::lda {

/// The sufficient statistics of the update: how many documents have each count.
struct DocTopicHistograms {
    DocTopicHistograms() = default;
    /// Empty histograms for K topics.
    explicit DocTopicHistograms(std::uint32_t num_topics)
        : topic_counts(num_topics, std::vector<std::uint64_t>(1, 0)), doc_lengths(1, 0) {}

    /// topic_counts[k][n] = number of documents with n_dk = n (index 0 unused); size K.
    std::vector<std::vector<std::uint64_t>> topic_counts;
    /// doc_lengths[n] = number of documents with n_d = n (index 0 unused).
    std::vector<std::uint64_t> doc_lengths;

    std::uint32_t num_topics() const { return static_cast<std::uint32_t>(topic_counts.size()); }
    /// Adds one document's row of counts (size K, dense).
    void add_doc(std::span<const Count> counts);
};

/// Histograms of a live trainer table (every row; K = table.num_topics()). O(D + nnz).
DocTopicHistograms doc_topic_histograms(const DocTopicTable& table);
/// Histograms of a saved model's doc-topic counts (K columns).
DocTopicHistograms doc_topic_histograms(const SparseCounts& doc_topic, std::uint32_t num_topics);

/// Settings of the update. validate() throws ConfigError naming the key.
struct AlphaOptimizerOptions {
    /// Fixed-point iterations; Mallet does 1 per optimisation interval (warm start from the
    /// current α). >= 1.
    std::uint32_t iterations = 1;
    /// Stop early when every α_k changed by less than this fraction (0: never). >= 0.
    double tolerance = 0;
    /// Gamma hyperprior on each α_k: shape ≥ 0 and scale > 0 (+inf: no prior). shape 0 with
    /// scale +inf is the maximum-likelihood fixed point; Mallet uses 1.001 and 1.
    double shape = 1.001;
    double scale = 1.0;
    /// Floor applied to each α_k after an update, > 0, so a topic no document uses keeps a
    /// positive prior.
    double min_alpha = 1e-8;

    void validate() const;
};

/// What optimize_alpha() did.
struct AlphaOptimizerResult {
    std::vector<double> alpha;     ///< the new α, size K
    std::uint32_t iterations = 0;  ///< fixed-point iterations run
    /// False when the data cannot support an update (no document with ≥ 1 token, or the
    /// hyperprior outweighs it: Σ_n count_n Σ_{i<n} 1/(Σα+i) ≤ 1/scale); α is then unchanged.
    bool updated = false;
};

/// Minka's fixed point, from `alpha` (size K = hist.num_topics(), each > 0):
///   α_k ← α_k · (Σ_n h_k[n] Σ_{i<n} 1/(α_k+i) + shape) / (Σ_n L[n] Σ_{i<n} 1/(Σα+i) − 1/scale)
/// where h_k is topic k's histogram and L the doc-length histogram; Σ_{i<n} 1/(x+i) is
/// ψ(x+n) − ψ(x). The hyperprior terms are Mallet's exactly, so its defaults mean the same.
/// Throws ConfigError on bad options or an α of the wrong size or with a non-positive entry.
AlphaOptimizerResult optimize_alpha(const DocTopicHistograms& hist, std::span<const double> alpha,
                                    const AlphaOptimizerOptions& options = {});

}  // namespace rotor::lda
