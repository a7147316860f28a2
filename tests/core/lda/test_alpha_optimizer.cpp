// Minka's fixed point for an asymmetric α: recovery of a known Dirichlet from
// Dirichlet-multinomial draws, histograms from both count sources, and degenerate inputs.
#include "core/lda/alpha_optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::lda {
namespace {

/// n_dk for `docs` documents: θ_d ~ Dir(alpha), n_d uniform in [min_len, max_len], tokens
/// drawn from θ_d.
std::vector<std::vector<Count>> dirichlet_multinomial(const std::vector<double>& alpha,
                                                      std::uint32_t docs, std::uint32_t min_len,
                                                      std::uint32_t max_len, std::uint64_t seed) {
    Rng rng(seed);
    std::vector<std::gamma_distribution<double>> gammas;
    for (const double a : alpha) gammas.emplace_back(a, 1.0);
    std::vector<std::vector<Count>> out;
    std::vector<double> theta(alpha.size());
    for (std::uint32_t d = 0; d < docs; ++d) {
        double sum = 0;
        for (std::size_t k = 0; k < alpha.size(); ++k) sum += theta[k] = gammas[k](rng);
        std::vector<Count> counts(alpha.size(), 0);
        const auto len = min_len + rng.below(max_len - min_len + 1);
        for (std::uint64_t i = 0; i < len; ++i) {
            double u = rng.uniform() * sum;
            std::size_t k = 0;
            while (k + 1 < alpha.size() && (u -= theta[k]) >= 0) ++k;
            ++counts[k];
        }
        out.push_back(std::move(counts));
    }
    return out;
}

DocTopicHistograms histograms(const std::vector<std::vector<Count>>& rows, std::uint32_t k) {
    DocTopicHistograms h(k);
    for (const auto& r : rows) h.add_doc(r);
    return h;
}

TEST(AlphaOptimizer, MaximumLikelihoodRecoversAnAsymmetricDirichlet) {
    const std::vector<double> truth = {0.05, 0.2, 0.5, 1.0, 2.0};
    const auto rows = dirichlet_multinomial(truth, 3000, 40, 120, 1);
    const DocTopicHistograms h = histograms(rows, 5);
    AlphaOptimizerOptions o;
    o.iterations = 2000;
    o.tolerance = 1e-9;
    o.shape = 0;
    o.scale = std::numeric_limits<double>::infinity();
    const AlphaOptimizerResult r = optimize_alpha(h, std::vector<double>(5, 1.0), o);
    ASSERT_TRUE(r.updated);
    EXPECT_LT(r.iterations, 2000u);  // converged
    for (std::size_t k = 0; k < truth.size(); ++k)
        EXPECT_NEAR(r.alpha[k], truth[k], 0.1 * truth[k]) << "topic " << k;
}

TEST(AlphaOptimizer, MalletDefaultsConvergeNearTheTruthOneStepAtATime) {
    const std::vector<double> truth = {0.1, 0.1, 0.4, 1.5};
    const auto rows = dirichlet_multinomial(truth, 2000, 50, 100, 2);
    const DocTopicHistograms h = histograms(rows, 4);
    std::vector<double> alpha(4, 50.0 / 4);
    double first_error = -1;
    for (int step = 0; step < 300; ++step) {  // Mallet: one iteration per optimisation interval
        alpha = optimize_alpha(h, alpha).alpha;
        double error = 0;
        for (std::size_t k = 0; k < 4; ++k) error += std::abs(alpha[k] - truth[k]);
        if (first_error < 0) first_error = error;
    }
    EXPECT_GT(first_error, 1.0);
    for (std::size_t k = 0; k < truth.size(); ++k)
        EXPECT_NEAR(alpha[k], truth[k], 0.15 * truth[k]) << "topic " << k;
}

TEST(AlphaOptimizer, HistogramsOfTableAndSparseCountsAgree) {
    const auto rows = dirichlet_multinomial({0.3, 0.3, 0.3}, 50, 1, 30, 3);
    SparseCounts sparse;
    std::vector<std::uint64_t> lengths;
    for (const auto& r : rows) {
        std::vector<std::pair<TopicId, Count>> row;
        for (TopicId k = 0; k < 3; ++k) row.emplace_back(k, r[k]);
        sparse.add_row(row);
        lengths.push_back(r[0] + r[1] + r[2]);
    }
    DocTopicTable table(3, lengths);
    for (DocId d = 0; d < rows.size(); ++d)
        for (TopicId k = 0; k < 3; ++k)
            for (Count c = 0; c < rows[d][k]; ++c) table.increment(d, k);
    const DocTopicHistograms expected = histograms(rows, 3);
    const DocTopicHistograms from_table = doc_topic_histograms(table);
    const DocTopicHistograms from_sparse = doc_topic_histograms(sparse, 3);
    for (const DocTopicHistograms* h : {&from_table, &from_sparse}) {
        ASSERT_EQ(h->num_topics(), 3u);
        // Compare without trailing zero bins.
        auto trim = [](std::vector<std::uint64_t> v) {
            while (v.size() > 1 && v.back() == 0) v.pop_back();
            return v;
        };
        EXPECT_EQ(trim(h->doc_lengths), trim(expected.doc_lengths));
        for (TopicId k = 0; k < 3; ++k)
            EXPECT_EQ(trim(h->topic_counts[k]), trim(expected.topic_counts[k]));
    }
    std::uint64_t docs = 0;
    for (const auto n : expected.doc_lengths) docs += n;
    EXPECT_EQ(docs, 50u);
    EXPECT_EQ(expected.doc_lengths[0], 0u);  // index 0 is never counted
}

TEST(AlphaOptimizer, NoDataLeavesAlphaUnchanged) {
    const DocTopicHistograms h(3);
    const std::vector<double> alpha = {0.1, 0.2, 0.3};
    const AlphaOptimizerResult r = optimize_alpha(h, alpha);
    EXPECT_FALSE(r.updated);
    EXPECT_EQ(r.iterations, 0u);
    EXPECT_EQ(r.alpha, alpha);
}

TEST(AlphaOptimizer, UnusedTopicKeepsAPositivePrior) {
    const auto rows = dirichlet_multinomial({1.0, 1.0, 1e-9}, 500, 20, 40, 4);
    const DocTopicHistograms h = histograms(rows, 3);
    AlphaOptimizerOptions o;
    o.iterations = 500;
    o.shape = 0;
    o.scale = std::numeric_limits<double>::infinity();
    const AlphaOptimizerResult r = optimize_alpha(h, std::vector<double>(3, 1.0), o);
    EXPECT_GT(r.alpha[2], 0.0);
    EXPECT_LT(r.alpha[2], 0.01);
    EXPECT_GE(r.alpha[2], o.min_alpha);
}

TEST(AlphaOptimizer, BadOptionsAndAlphaAreConfigErrors) {
    const DocTopicHistograms h(2);
    AlphaOptimizerOptions o;
    o.iterations = 0;
    EXPECT_THROW(optimize_alpha(h, std::vector<double>{1, 1}, o), ConfigError);
    o = {};
    o.scale = 0;
    EXPECT_THROW(optimize_alpha(h, std::vector<double>{1, 1}, o), ConfigError);
    EXPECT_THROW(optimize_alpha(h, std::vector<double>{1, 1, 1}), ConfigError);
    EXPECT_THROW(optimize_alpha(h, std::vector<double>{1, 0}), ConfigError);
}

}  // namespace
}  // namespace rotor::lda
