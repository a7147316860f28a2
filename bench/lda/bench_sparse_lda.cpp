// sample_block throughput on a synthetic Zipfian corpus of realistic shape: ~1M tokens, docs of
// ~100 tokens, V = 30k, drawn from 100 planted topics; measured after burn-in sweeps so that the
// count tables are as sparse as in a real run. One iteration = one full sweep over all blocks,
// single-threaded. items/s = tokens/s.
//
//   bench_sparse_lda --benchmark_filter='Sweep/100/'   (args: K, L, burn-in sweeps)
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "core/base/rng.h"
#include "core/lda/likelihood.h"
#include "core/lda/sparse_lda_sampler.h"
#include "core/lda/synthetic_corpus.h"

namespace rotor::lda {
namespace {

const SyntheticCorpus& corpus() {
    static const SyntheticCorpus c = [] {
        SyntheticSpec spec;
        spec.num_docs = 10000;
        spec.vocab_size = 30000;
        spec.num_topics = 100;
        spec.mean_doc_length = 100;
        spec.zipf_exponent = 1.0;
        spec.doc_alpha = 0.1;
        spec.disjoint_supports = false;
        spec.support_fraction = 0.1;
        spec.seed = 17;
        return make_synthetic_corpus(spec);
    }();
    return c;
}

constexpr std::uint32_t kVocab = 30000;

void Sweep(benchmark::State& state) {
    const auto K = static_cast<std::uint32_t>(state.range(0));
    const auto L = static_cast<std::uint32_t>(state.range(1));
    const auto burn_in = static_cast<int>(state.range(2));
    const SyntheticCorpus& c = corpus();
    std::vector<std::uint32_t> rows(c.num_docs()), cols(kVocab);
    Rng part(3);
    for (auto& r : rows) r = static_cast<std::uint32_t>(part.below(L));
    for (auto& col : cols) col = static_cast<std::uint32_t>(part.below(L));
    auto blocks = build_blocks(c.doc_offsets, c.word_ids, rows, cols, L);
    init_topics(blocks, K, 1);
    DocTopicTable dt = DocTopicTable::from_blocks(K, c.num_docs(), blocks);
    WordTopicTable wt = WordTopicTable::from_blocks(K, kVocab, blocks);
    std::vector<TotalCount> totals = count_topic_totals(blocks, K);
    LdaParams p;
    p.num_topics = K;
    SparseLdaSampler sampler(p, kVocab);
    std::uint64_t sweep = 0;
    auto run_sweep = [&] {
        std::uint64_t n = 0;
        for (std::size_t b = 0; b < blocks.size(); ++b) {
            Rng rng = Rng::from({7, sweep, b});
            n += sampler.sample_block(blocks[b], dt, wt, totals, rng, nullptr);
        }
        ++sweep;
        return n;
    };
    for (int i = 0; i < burn_in; ++i) run_sweep();
    const auto before = sampler.stats();
    std::uint64_t tokens = 0;
    for (auto _ : state) tokens += run_sweep();
    state.SetItemsProcessed(static_cast<std::int64_t>(tokens));

    const auto& after = sampler.stats();
    const double draws = static_cast<double>(tokens);
    state.counters["doc_frac"] = static_cast<double>(after.doc - before.doc) / draws;
    state.counters["word_frac"] = static_cast<double>(after.word - before.word) / draws;
    state.counters["smooth_frac"] = static_cast<double>(after.smoothing - before.smoothing) / draws;
    state.counters["reuse_frac"] = static_cast<double>(after.reused - before.reused) / draws;
    std::size_t block_bytes = 0;
    for (const auto& b : blocks) block_bytes += b.memory_bytes();
    const double n = static_cast<double>(c.num_tokens());
    state.counters["B/tok_blocks"] = static_cast<double>(block_bytes) / n;
    state.counters["B/tok_doc"] = static_cast<double>(dt.memory_bytes()) / n;
    state.counters["B/tok_word"] = static_cast<double>(wt.memory_bytes()) / n;
    state.counters["loglik/tok"] = Likelihood(p, kVocab).evaluate(wt, dt, totals).loglik / n;
}

BENCHMARK(Sweep)
    ->ArgNames({"K", "L", "burn"})
    ->Args({100, 1, 10})
    ->Args({100, 3, 10})
    ->Args({1000, 1, 10})
    ->Args({1000, 3, 10})
    ->Args({10000, 1, 5})
    ->Args({10000, 3, 5})
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rotor::lda
