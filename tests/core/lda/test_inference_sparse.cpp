// The sparse fold-in sampler (core/lda/fold_in_sampler.h): for a fixed document state, its
// empirical distribution matches the exact conditional (n_dk+α_k)·φ_kw / Σ by a χ² test at
// K = 4, 64, 1024, in states where each bucket dominates and through both the dense-row and the
// sparse-row path; θ over many documents is the same on 1 and 2 real threads; tables are built
// only for the words asked for.
#include "core/lda/fold_in_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "core/lda/heldout.h"
#include "tests/core/lda/lda_test_util.h"

namespace rotor::lda {
namespace {

/// Word w's row has nnz_of(w) nonzero topics (0, 1, 2, ~K/32, ~K/8, ~K/2, K, ... cycling) with
/// random weights; every topic gets some weight from the last word, so β = 0 is allowed.
struct TestPhi {
    TopicWordDistribution phi;
    std::vector<std::uint32_t> nnz;
};

TestPhi make_phi(std::uint32_t k_count, WordId vocab, double beta, std::uint64_t seed) {
    Rng rng(seed);
    const std::vector<std::uint32_t> pattern = {0,           1,           2,      k_count / 32,
                                                k_count / 8, k_count / 2, k_count};
    std::vector<std::vector<std::pair<TopicId, double>>> rows(vocab);
    std::vector<double> totals(k_count, 0.0);
    std::vector<TopicId> order(k_count);
    TestPhi out;
    for (WordId w = 0; w < vocab; ++w) {
        std::uint32_t n = w + 1 == vocab ? k_count : pattern[w % pattern.size()];
        n = std::min(n, k_count);
        std::iota(order.begin(), order.end(), TopicId{0});
        std::shuffle(order.begin(), order.end(), rng);
        for (std::uint32_t i = 0; i < n; ++i) {
            // Heavy-tailed weights, as in trained counts.
            const double c = std::floor(std::exp(rng.uniform() * 6.0));
            rows[w].emplace_back(order[i], c);
            totals[order[i]] += c;
        }
        out.nnz.push_back(n);
    }
    out.phi = TopicWordDistribution(vocab, totals, beta);
    for (WordId w = 0; w < vocab; ++w) out.phi.append_row(w, rows[w]);
    return out;
}

/// Upper tail of χ² with `df` degrees of freedom, as a standard normal deviate
/// (Wilson–Hilferty); z > 5 has probability about 3e-7.
double chi2_z(double chi2, double df) {
    const double m = 1.0 - 2.0 / (9.0 * df);
    const double s = std::sqrt(2.0 / (9.0 * df));
    return (std::cbrt(chi2 / df) - m) / s;
}

/// Draws `n` topics for word w in state `counts` and returns the χ² deviate against the exact
/// conditional (bins with expected count < 5 are pooled).
double chi2_of_draws(FoldInSampler& sampler, const FoldInTables& tables, WordId w,
                     const std::vector<Count>& counts, std::uint64_t n, std::uint64_t seed) {
    const std::uint32_t k_count = tables.num_topics();
    sampler.set_counts(counts);
    std::vector<double> p(k_count);
    double total = 0;
    for (TopicId k = 0; k < k_count; ++k) {
        p[k] = (counts[k] + tables.alpha()[k]) * tables.phi().phi(w, k);
        total += p[k];
    }
    std::vector<std::uint64_t> hist(k_count, 0);
    Rng rng = Rng::from({seed, w});
    for (std::uint64_t i = 0; i < n; ++i) ++hist[sampler.draw_word(w, rng)];
    double chi2 = 0;
    double pooled_expected = 0;
    double pooled_observed = 0;
    int bins = 0;
    for (TopicId k = 0; k < k_count; ++k) {
        const double expected = static_cast<double>(n) * p[k] / total;
        if (expected == 0) {
            EXPECT_EQ(hist[k], 0u) << "topic " << k << " has probability 0";
            continue;
        }
        if (expected < 5) {
            pooled_expected += expected;
            pooled_observed += static_cast<double>(hist[k]);
            continue;
        }
        const double d = static_cast<double>(hist[k]) - expected;
        chi2 += d * d / expected;
        ++bins;
    }
    if (pooled_expected > 0) {
        const double d = pooled_observed - pooled_expected;
        chi2 += d * d / std::max(pooled_expected, 1e-300);
        ++bins;
    }
    if (bins < 2) return 0;  // (almost) all mass on one topic: nothing to test
    return chi2_z(chi2, bins - 1);
}

/// A document state: `topics` topics with counts drawn in [1, max_count], the rest 0.
std::vector<Count> doc_state(std::uint32_t k_count, std::uint32_t topics, Count max_count,
                             std::uint64_t seed) {
    Rng rng(seed);
    std::vector<Count> counts(k_count, 0);
    std::vector<TopicId> order(k_count);
    std::iota(order.begin(), order.end(), TopicId{0});
    std::shuffle(order.begin(), order.end(), rng);
    for (std::uint32_t i = 0; i < std::min(topics, k_count); ++i)
        counts[order[i]] = 1 + static_cast<Count>(rng.below(max_count));
    return counts;
}

struct Chi2Case {
    std::uint32_t k;
    const char* state;  // which bucket dominates
};

class SparseFoldInChi2 : public ::testing::TestWithParam<Chi2Case> {};

TEST_P(SparseFoldInChi2, DrawsMatchTheExactConditional) {
    const auto [k_count, state] = GetParam();
    const std::string which = state;
    // β large makes the document's n_dk·s_k part weigh; β = 0 removes every smoothing term
    // from φ (the smoothing bucket then is α_k r_kw alone).
    const double beta = which == "doc_smoothing" ? 50.0 : which == "beta0" ? 0.0 : 0.01;
    const TestPhi tp = make_phi(k_count, 21, beta, 100 + k_count);
    std::vector<double> alpha(k_count);
    Rng arng(7);
    // Smoothing-dominated: a strong prior over an empty or near-empty document. Otherwise a weak
    // asymmetric prior beside large counts.
    const bool strong = which == "smoothing";
    for (double& a : alpha) a = (strong ? 5.0 : 0.01) * (0.5 + arng.uniform());
    std::vector<std::vector<Count>> states;
    if (which == "smoothing") {
        states.push_back(std::vector<Count>(k_count, 0));
        states.push_back(doc_state(k_count, 3, 2, 1));
    } else {
        // Document-dominated: a few topics, then many topics, with large counts.
        states.push_back(doc_state(k_count, 5, 400, 2));
        states.push_back(doc_state(k_count, std::max(4u, k_count / 4), 200, 3));
    }
    const std::uint64_t draws = k_count >= 1024 ? 200000 : 100000;
    for (const auto layout : {FoldInTables::Layout::kAuto, FoldInTables::Layout::kAllDense,
                              FoldInTables::Layout::kAllSparse}) {
        const FoldInTables tables(tp.phi, alpha, layout);
        FoldInSampler sampler(tables);
        for (std::size_t s = 0; s < states.size(); ++s) {
            for (WordId w = 0; w < tp.phi.num_words(); ++w) {
                if (beta == 0 && tp.nnz[w] == 0) continue;  // probability 0 everywhere
                const double z = chi2_of_draws(sampler, tables, w, states[s], draws, 1000 + s);
                EXPECT_LT(z, 5.0) << "K " << k_count << " state " << which << "/" << s << " word "
                                  << w << " (nnz " << tp.nnz[w] << ") layout "
                                  << static_cast<int>(layout);
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(States, SparseFoldInChi2,
                         ::testing::Values(Chi2Case{4, "smoothing"}, Chi2Case{4, "document"},
                                           Chi2Case{4, "doc_smoothing"}, Chi2Case{4, "beta0"},
                                           Chi2Case{64, "smoothing"}, Chi2Case{64, "document"},
                                           Chi2Case{64, "doc_smoothing"}, Chi2Case{64, "beta0"},
                                           Chi2Case{1024, "smoothing"}, Chi2Case{1024, "document"},
                                           Chi2Case{1024, "doc_smoothing"},
                                           Chi2Case{1024, "beta0"}),
                         [](const ::testing::TestParamInfo<Chi2Case>& param_info) {
                             return std::string(param_info.param.state) + "_K" +
                                    std::to_string(param_info.param.k);
                         });

TEST(SparseFoldInChi2Power, AWrongConditionalIsRejected) {
    // The test has power: drawing from the conditional with α doubled fails it.
    const TestPhi tp = make_phi(64, 21, 0.01, 164);
    const std::vector<double> alpha(64, 0.5), doubled(64, 1.0);
    const FoldInTables right(tp.phi, alpha);
    const FoldInTables wrong(tp.phi, doubled);
    FoldInSampler sampler(wrong);
    const std::vector<Count> counts = doc_state(64, 5, 10, 4);
    // Draw from `wrong`, compare against `right`'s α.
    sampler.set_counts(counts);
    std::vector<std::uint64_t> hist(64, 0);
    Rng rng(3);
    const WordId w = 6;  // K/2 nonzeros: a dense word
    for (int i = 0; i < 200000; ++i) ++hist[sampler.draw_word(w, rng)];
    double total = 0, chi2 = 0;
    std::vector<double> p(64);
    for (TopicId k = 0; k < 64; ++k) total += p[k] = (counts[k] + alpha[k]) * tp.phi.phi(w, k);
    int bins = 0;
    for (TopicId k = 0; k < 64; ++k) {
        const double e = 200000 * p[k] / total;
        if (e < 5) continue;
        chi2 += (hist[k] - e) * (hist[k] - e) / e;
        ++bins;
    }
    EXPECT_GT(chi2_z(chi2, bins - 1), 10.0);
}

TEST(FoldInTables, OnlyTheWordsAskedForAndDenseRowsByTheRule) {
    const TestPhi tp = make_phi(1024, 21, 0.01, 9);
    const std::vector<double> alpha(1024, 0.1);
    const std::vector<WordId> words = {3, 5, 5, 6, 0, 20};
    const FoldInTables t(tp.phi, alpha, words);
    EXPECT_EQ(t.num_words(), 5u);
    for (WordId w = 0; w < 21; ++w)
        EXPECT_EQ(t.has_word(w), std::find(words.begin(), words.end(), w) != words.end()) << w;
    // nnz: word 3 → K/32 = 32 (16·32 ≤ 1024: sparse), 5 → K/2, 6 → K, 20 → K (dense), 0 → 0.
    EXPECT_EQ(t.num_dense_words(), 3u);
    EXPECT_LT(t.memory_bytes(), 3 * 1024 * 4 + 3000 * 32 + 21 * 4 + 1024 * 32);
}

using testing::thread_loop;

TEST(SparseFoldIn, ThetaIsTheSameOnOneAndTwoThreads) {
    const std::uint32_t k_count = 200;
    const TestPhi tp = make_phi(k_count, 50, 0.01, 77);
    std::vector<double> alpha(k_count);
    for (std::uint32_t k = 0; k < k_count; ++k) alpha[k] = 0.05 + 0.001 * k;
    Rng drng(5);
    std::vector<std::vector<WordId>> docs(300);
    for (auto& d : docs) {
        d.resize(drng.below(80));
        for (WordId& w : d) w = static_cast<WordId>(drng.below(50));
    }
    const FoldInOptions options{30, 10, 4};
    const auto run = [&](int threads) {
        const RangeLoop loop = thread_loop(threads);
        std::vector<WordId> words(50);
        std::iota(words.begin(), words.end(), WordId{0});
        const FoldInTables tables(tp.phi, alpha, words, loop);
        std::vector<double> theta(docs.size() * k_count);
        loop(0, static_cast<std::int64_t>(docs.size()), [&](std::int64_t lo, std::int64_t hi) {
            FoldInSampler sampler(tables);
            for (auto d = lo; d < hi; ++d) {
                Rng rng = Rng::from({options.seed, static_cast<std::uint64_t>(d + 1)});
                sampler.infer(docs[d], options, rng,
                              std::span<double>(theta).subspan(d * k_count, k_count));
            }
        });
        return theta;
    };
    const std::vector<double> one = run(1);
    const std::vector<double> two = run(2);
    EXPECT_EQ(one, two);
    for (std::size_t d = 0; d < docs.size(); ++d) {
        const double sum =
            std::accumulate(one.begin() + static_cast<std::ptrdiff_t>(d * k_count),
                            one.begin() + static_cast<std::ptrdiff_t>((d + 1) * k_count), 0.0);
        EXPECT_NEAR(sum, 1.0, 1e-9) << d;
    }
}

TEST(SparseFoldIn, ThetaMatchesTheDensePathOnAverage) {
    // The two layouts draw from the same conditional (χ² above) but consume the generator
    // differently; averaged over documents their θ agree closely.
    const std::uint32_t k_count = 64;
    const TestPhi tp = make_phi(k_count, 30, 0.01, 12);
    const std::vector<double> alpha(k_count, 0.1);
    const FoldInTables dense(tp.phi, alpha, FoldInTables::Layout::kAllDense);
    const FoldInTables sparse(tp.phi, alpha, FoldInTables::Layout::kAllSparse);
    FoldInSampler a(dense), b(sparse);
    std::vector<double> mean_a(k_count, 0.0), mean_b(k_count, 0.0), ta(k_count), tb(k_count);
    const std::vector<WordId> doc = {6, 6, 5, 12, 13, 29, 29, 29, 19, 20, 26, 27};
    for (std::uint64_t r = 0; r < 400; ++r) {
        Rng ra = Rng::from({1, r});
        Rng rb = Rng::from({2, r});
        a.infer(doc, FoldInOptions{20, 5, 1}, ra, ta);
        b.infer(doc, FoldInOptions{20, 5, 1}, rb, tb);
        for (std::uint32_t k = 0; k < k_count; ++k) {
            mean_a[k] += ta[k] / 400;
            mean_b[k] += tb[k] / 400;
        }
    }
    for (std::uint32_t k = 0; k < k_count; ++k) EXPECT_NEAR(mean_a[k], mean_b[k], 0.01) << k;
}

}  // namespace
}  // namespace rotor::lda
