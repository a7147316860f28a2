// End to end on the kernel: a corpus drawn from planted topics, sampled single-threaded over all
// blocks, must give the planted topics back and a rising likelihood.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/base/rng.h"
#include "core/lda/likelihood.h"
#include "core/lda/sparse_lda_sampler.h"
#include "core/lda/synthetic_corpus.h"

namespace rotor::lda {
namespace {

TEST(TopicRecovery, PlantedTopicsComeBack) {
    SyntheticSpec spec;
    spec.num_docs = 400;
    spec.vocab_size = 500;
    spec.num_topics = 10;
    spec.mean_doc_length = 60;
    spec.doc_alpha = 0.1;
    spec.seed = 2024;
    const SyntheticCorpus c = make_synthetic_corpus(spec);
    const std::uint32_t V = spec.vocab_size;

    LdaParams p;
    p.num_topics = spec.num_topics;
    p.alpha = 0.1;
    p.beta = 0.01;
    constexpr std::uint32_t L = 2;
    std::vector<std::uint32_t> rows(c.num_docs()), cols(V);
    for (std::uint32_t d = 0; d < c.num_docs(); ++d) rows[d] = d % L;
    for (std::uint32_t w = 0; w < V; ++w) cols[w] = w % L;
    auto blocks = build_blocks(c.doc_offsets, c.word_ids, rows, cols, L);
    init_topics(blocks, p.num_topics, 1);
    DocTopicTable dt = DocTopicTable::from_blocks(p.num_topics, c.num_docs(), blocks);
    WordTopicTable wt = WordTopicTable::from_blocks(p.num_topics, V, blocks);
    std::vector<TotalCount> totals = count_topic_totals(blocks, p.num_topics);

    const Likelihood lik(p, V);
    const double start = lik.evaluate(wt, dt, totals).loglik;
    SparseLdaSampler sampler(p, V);
    double mid = 0;
    constexpr int kSweeps = 80;
    for (int sweep = 0; sweep < kSweeps; ++sweep) {
        for (std::size_t b = 0; b < blocks.size(); ++b) {
            Rng rng = Rng::from({3, static_cast<std::uint64_t>(sweep), b});
            sampler.sample_block(blocks[b], dt, wt, totals, rng, nullptr);
        }
        if (sweep == 4) mid = lik.evaluate(wt, dt, totals).loglik;
    }
    const double end = lik.evaluate(wt, dt, totals).loglik;
    EXPECT_GT(mid, start);
    EXPECT_GT(end, mid);

    // Inferred phi_k from n_wk + beta; best cosine match for every planted topic.
    std::vector<std::vector<double>> phi(p.num_topics, std::vector<double>(V, p.beta));
    for (WordId w = 0; w < V; ++w) {
        wt.for_each_nonzero(w, [&](TopicId k, Count n) { phi[k][w] += n; });
    }
    const double mean_best = mean_best_cosine(c.topic_word, phi);
    EXPECT_GE(mean_best, 0.9);
    RecordProperty("mean_best_cosine", std::to_string(mean_best));
}

}  // namespace
}  // namespace rotor::lda
