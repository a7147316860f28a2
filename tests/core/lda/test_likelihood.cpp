#include "core/lda/likelihood.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/base/rng.h"
#include "tests/core/lda/lda_test_util.h"

namespace rotor::lda {
namespace {

using testing::Tok;

// The metric's definition, term by term over ALL cells, with std::lgamma only.
LogLikelihood brute_force(const std::vector<TokenBlock>& blocks, std::uint32_t D, std::uint32_t V,
                          const LdaParams& p) {
    const std::uint32_t K = p.num_topics;
    const auto nd = testing::recount(blocks, D, K, true);
    const auto nw = testing::recount(blocks, V, K, false);
    const std::vector<double> alpha = p.topic_alphas();
    double alpha_sum = 0, lg_alpha_sum = 0;
    for (double a : alpha) {
        alpha_sum += a;
        lg_alpha_sum += std::lgamma(a);
    }
    const double b = p.beta;
    double word = K * (std::lgamma(V * b) - V * std::lgamma(b));
    for (std::uint32_t k = 0; k < K; ++k) {
        double nk = 0;
        for (std::uint32_t w = 0; w < V; ++w) {
            word += std::lgamma(nw[w][k] + b);
            nk += nw[w][k];
        }
        word -= std::lgamma(nk + V * b);
    }
    double doc = D * (std::lgamma(alpha_sum) - lg_alpha_sum);
    for (std::uint32_t d = 0; d < D; ++d) {
        double n = 0;
        for (std::uint32_t k = 0; k < K; ++k) {
            doc += std::lgamma(nd[d][k] + alpha[k]);
            n += nd[d][k];
        }
        doc -= std::lgamma(n + alpha_sum);
    }
    return {word, word + doc};
}

std::vector<TokenBlock> random_blocks(std::uint32_t D, std::uint32_t V, std::uint32_t K, int tokens,
                                      std::uint64_t seed) {
    Rng rng(seed);
    std::vector<Tok> a, b;
    for (int i = 0; i < tokens; ++i) {
        // Skewed words and topics so some cells get large counts.
        const auto w = static_cast<WordId>(rng.below(rng.below(2) ? V : 3));
        const auto d = static_cast<DocId>(rng.below(D - 1));  // doc D-1 stays empty
        const auto k = static_cast<TopicId>(rng.below(rng.below(2) ? K : 2));
        (i % 2 ? a : b).push_back({w, d, k});
    }
    return {testing::make_block(a), testing::make_block(b)};
}

void expect_close(double got, double want) { EXPECT_NEAR(got, want, 1e-9 * std::abs(want) + 1e-9); }

TEST(Likelihood, MatchesBruteForceSymmetric) {
    LdaParams p;
    p.num_topics = 6;
    p.beta = 0.05;
    constexpr std::uint32_t D = 9, V = 13;
    const auto blocks = random_blocks(D, V, p.num_topics, 500, 1);
    const auto wt = WordTopicTable::from_blocks(p.num_topics, V, blocks);
    const auto dt = DocTopicTable::from_blocks(p.num_topics, D, blocks);
    const auto totals = count_topic_totals(blocks, p.num_topics);
    const Likelihood lik(p, V);
    const LogLikelihood got = lik.evaluate(wt, dt, totals);
    const LogLikelihood want = brute_force(blocks, D, V, p);
    expect_close(got.loglik_word, want.loglik_word);
    expect_close(got.loglik, want.loglik);
    // Range parts add up to the whole.
    const double words = lik.word_part(wt, 0, 5) + lik.word_part(wt, 5, V);
    const double docs = lik.doc_part(dt, 0, 1) + lik.doc_part(dt, 1, 4) + lik.doc_part(dt, 4, D);
    const LogLikelihood combined = lik.combine(words, docs, totals);
    expect_close(combined.loglik, want.loglik);
    expect_close(combined.loglik_word, want.loglik_word);
}

TEST(Likelihood, MatchesBruteForceAsymmetricAlpha) {
    LdaParams p;
    p.num_topics = 4;
    p.beta = 0.3;
    p.alpha_per_topic = {0.1, 2.0, 0.5, 7.0};
    constexpr std::uint32_t D = 5, V = 7;
    const auto blocks = random_blocks(D, V, p.num_topics, 300, 2);
    const auto wt = WordTopicTable::from_blocks(p.num_topics, V, blocks);
    const auto dt = DocTopicTable::from_blocks(p.num_topics, D, blocks);
    const auto totals = count_topic_totals(blocks, p.num_topics);
    const LogLikelihood got = Likelihood(p, V).evaluate(wt, dt, totals);
    const LogLikelihood want = brute_force(blocks, D, V, p);
    expect_close(got.loglik_word, want.loglik_word);
    expect_close(got.loglik, want.loglik);
}

TEST(Likelihood, CountsBeyondTheLookupTable) {
    // 70,000 tokens of one (word, doc, topic): past the 65,536-entry lgamma table.
    LdaParams p;
    p.num_topics = 3;
    constexpr std::uint32_t D = 2, V = 4;
    std::vector<Tok> toks(70000, Tok{1, 0, 2});
    toks.push_back({3, 1, 0});
    const std::vector<TokenBlock> blocks = {testing::make_block(toks)};
    const auto wt = WordTopicTable::from_blocks(p.num_topics, V, blocks);
    const auto dt = DocTopicTable::from_blocks(p.num_topics, D, blocks);
    const auto totals = count_topic_totals(blocks, p.num_topics);
    const LogLikelihood got = Likelihood(p, V).evaluate(wt, dt, totals);
    const LogLikelihood want = brute_force(blocks, D, V, p);
    expect_close(got.loglik_word, want.loglik_word);
    expect_close(got.loglik, want.loglik);
}

TEST(LgammaTable, AgreesWithStdLgamma) {
    const LgammaTable t(0.01, 100);
    for (std::uint64_t n : {0ULL, 1ULL, 7ULL, 99ULL, 100ULL, 12345ULL}) {
        const double want = std::lgamma(n + 0.01) - std::lgamma(0.01);
        EXPECT_NEAR(t(n), want, 1e-12 * std::abs(want) + 1e-12) << n;
    }
}

}  // namespace
}  // namespace rotor::lda
