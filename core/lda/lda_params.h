// Hyperparameters of an LDA model (collapsed Gibbs sampling). Plain struct; the CLI fills it
// from flags and calls validate() before anything is allocated.
#pragma once

#include <cstdint>
#include <vector>

namespace rotor::lda {

/// The model's hyperparameters. validate() throws rotor::ConfigError naming the flag.
struct LdaParams {
    /// K, the number of topics; >= 1 (flag --topics).
    std::uint32_t num_topics = 100;
    /// Symmetric Dirichlet prior on doc-topic proportions, > 0; any value <= 0 means the
    /// default 50/K (flag --alpha).
    double alpha = -1;
    /// Symmetric Dirichlet prior on topic-word distributions, > 0 (flag --beta).
    double beta = 0.01;
    /// Optional asymmetric prior: alpha_k for every topic (size K, each > 0). Empty means the
    /// symmetric `alpha` above (flag --alpha takes a comma-separated list).
    std::vector<double> alpha_per_topic;

    /// Throws ConfigError("--topics" | "--alpha" | "--beta", ...) on an invalid value.
    void validate() const;
    /// The symmetric alpha actually used: `alpha` or 50/K when alpha <= 0.
    double resolved_alpha() const;
    /// alpha_k for k in [0, K): alpha_per_topic, or K copies of resolved_alpha().
    std::vector<double> topic_alphas() const;
    /// True when alpha_per_topic is empty (every alpha_k equal).
    bool symmetric_alpha() const { return alpha_per_topic.empty(); }
    /// These parameters with alpha_k = alphas[k] (size K): stored as the symmetric `alpha` when
    /// every value is equal (the samplers' fast path), else as alpha_per_topic.
    LdaParams with_alphas(const std::vector<double>& alphas) const;
};

/// Largest K accepted; keeps K * 4 bytes dense rows and int32 arithmetic far from overflow.
inline constexpr std::uint32_t kMaxTopics = 1U << 24;
/// Largest α (each) and β accepted: a prior above a million pseudo-counts swamps any corpus,
/// and far larger ones overflow the likelihood's log-Gamma sums (α = 1e308: loglik inf).
inline constexpr double kMaxPrior = 1e6;

}  // namespace rotor::lda
