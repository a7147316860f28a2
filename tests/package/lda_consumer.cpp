// A program built outside rotor's tree against an installed rotor, as a user's would be: LDA on a
// synthetic corpus drawn from planted topics, with rotor::core's SparseLDA sampler run over the
// blocks of a grid by 2 workers of rotor::sched (Runtime, BlockScheduler), and the model's
// log-likelihood summed over 2 in-process ranks of rotor::comm (allreduce). Exit 0 when every
// check holds; 1, naming each failed check on stderr, otherwise; 2 on a rotor error.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/base/types.h"
#include "core/lda/doc_topic_table.h"
#include "core/lda/lda_params.h"
#include "core/lda/likelihood.h"
#include "core/lda/sparse_lda_sampler.h"
#include "core/lda/synthetic_corpus.h"
#include "core/lda/token_block.h"
#include "core/lda/word_topic_table.h"
#include "sched/block_grid.h"
#include "sched/block_scheduler.h"
#include "sched/runtime.h"

namespace {

using namespace rotor;
using namespace rotor::lda;

constexpr int kThreads = 2;
constexpr int kRanks = 2;
constexpr int kIterations = 40;
constexpr std::uint64_t kSeed = 7;

/// Counts failed checks and names each on stderr.
class Checks {
  public:
    void expect(bool ok, const std::string& what) {
        if (ok) return;
        std::fprintf(stderr, "lda_consumer: FAILED: %s\n", what.c_str());
        ++failed_;
    }
    int failed() const { return failed_; }

  private:
    int failed_ = 0;
};

/// The model being trained: the corpus cut into an L x L grid of word-major blocks, and the
/// count tables built from the blocks' topics.
struct Model {
    std::uint32_t grid_side = 0;
    std::vector<TokenBlock> blocks;
    DocTopicTable doc_topic;
    WordTopicTable word_topic;
    std::vector<TotalCount> topic_totals;
};

/// Rows (docs) and columns (words) of the grid balanced by token count with rotor::sched's
/// partitions, random initial topics.
Model build_model(const SyntheticCorpus& corpus, std::uint32_t vocab_size, std::uint32_t topics) {
    const std::uint32_t docs = corpus.num_docs();
    std::vector<std::uint64_t> doc_tokens(docs), word_tokens(vocab_size, 0);
    for (DocId d = 0; d < docs; ++d)
        doc_tokens[d] = corpus.doc_offsets[d + 1] - corpus.doc_offsets[d];
    for (WordId w : corpus.word_ids) ++word_tokens[w];

    Model m;
    m.grid_side = static_cast<std::uint32_t>(sched::default_grid_side(kThreads));
    const int L = static_cast<int>(m.grid_side);
    const sched::Partition rows = sched::partition_rows(doc_tokens, L, kSeed);
    const sched::Partition cols = sched::partition_cols_greedy(word_tokens, L);
    m.blocks = build_blocks(corpus.doc_offsets, corpus.word_ids, rows.group_of, cols.group_of,
                            m.grid_side);
    init_topics(m.blocks, topics, kSeed);
    m.doc_topic = DocTopicTable::from_blocks(topics, docs, m.blocks);
    m.word_topic = WordTopicTable::from_blocks(topics, vocab_size, m.blocks);
    m.topic_totals = count_topic_totals(m.blocks, topics);
    return m;
}

/// One Gibbs sweep: the workers take free blocks from the scheduler until every block is done,
/// each with its own sampler and its own copy of n_k; the copies are reconciled at the end.
/// Returns the number of tokens sampled.
std::uint64_t sweep(Model& m, sched::Runtime& runtime, sched::BlockScheduler& scheduler,
                    const LdaParams& params, std::uint32_t vocab_size, int iteration) {
    const auto iter = static_cast<std::uint64_t>(iteration);
    std::vector<std::vector<TotalCount>> local(kThreads, m.topic_totals);
    std::vector<std::uint64_t> sampled(kThreads, 0);
    scheduler.reset();
    runtime.run_workers([&](int worker) {
        SparseLdaSampler sampler(params, vocab_size);
        Rng pick = Rng::from({kSeed, iter, 1U << 20, static_cast<std::uint64_t>(worker)});
        while (const auto block = scheduler.acquire(pick, worker)) {
            const auto id = static_cast<std::uint64_t>(block->row) * m.grid_side +
                            static_cast<std::uint64_t>(block->col);
            Rng rng = Rng::from({kSeed, iter, id});
            sampled[worker] += sampler.sample_block(m.blocks[id], m.doc_topic, m.word_topic,
                                                    local[worker], rng, nullptr);
            scheduler.release(*block, true);
        }
    });
    const std::vector<TotalCount> before = m.topic_totals;
    for (const auto& copy : local) {
        for (std::size_t k = 0; k < copy.size(); ++k) m.topic_totals[k] += copy[k] - before[k];
    }
    std::uint64_t total = 0;
    for (std::uint64_t s : sampled) total += s;
    return total;
}

/// The tables must hold exactly the counts of the blocks' topics.
void check_tables(const Model& m, std::uint32_t docs, std::uint32_t vocab_size,
                  std::uint32_t topics, Checks& checks) {
    checks.expect(m.topic_totals == count_topic_totals(m.blocks, topics),
                  "reconciled topic totals equal the recount");
    const DocTopicTable dt = DocTopicTable::from_blocks(topics, docs, m.blocks);
    const WordTopicTable wt = WordTopicTable::from_blocks(topics, vocab_size, m.blocks);
    bool same = true;
    for (TopicId k = 0; k < topics; ++k) {
        for (DocId d = 0; d < docs; ++d) same = same && dt.get(d, k) == m.doc_topic.get(d, k);
        for (WordId w = 0; w < vocab_size; ++w) {
            same = same && wt.get(w, k) == m.word_topic.get(w, k);
        }
    }
    checks.expect(same, "doc-topic and word-topic tables equal the recount");
}

/// The doc part of the log-likelihood summed over in-process ranks (each takes a contiguous range
/// of docs) must equal the single-process sum, on every rank; so must the token count.
void check_ranks(const Model& m, const Likelihood& likelihood, const SyntheticCorpus& corpus,
                 Checks& checks) {
    const std::uint32_t docs = corpus.num_docs();
    std::vector<double> doc_part(kRanks, 0);
    std::vector<std::int64_t> tokens(kRanks, 0);
    comm::run_ranks(kRanks, [&](comm::Communicator& comm) {
        const int r = comm.rank();
        const auto lo = static_cast<DocId>(std::uint64_t{docs} * r / comm.size());
        const auto hi = static_cast<DocId>(std::uint64_t{docs} * (r + 1) / comm.size());
        std::vector<double> part{likelihood.doc_part(m.doc_topic, lo, hi)};
        std::vector<std::int64_t> count{
            static_cast<std::int64_t>(corpus.doc_offsets[hi] - corpus.doc_offsets[lo])};
        comm.allreduce_sum(part);
        comm.allreduce_sum(count);
        doc_part[r] = part[0];
        tokens[r] = count[0];
    });
    const double expected = likelihood.doc_part(m.doc_topic, 0, docs);
    for (int r = 0; r < kRanks; ++r) {
        const std::string rank = "rank " + std::to_string(r) + ": ";
        checks.expect(std::abs(doc_part[r] - expected) <= 1e-9 * std::abs(expected),
                      rank + "allreduced doc log-likelihood equals the single-process sum");
        checks.expect(tokens[r] == static_cast<std::int64_t>(corpus.num_tokens()),
                      rank + "allreduced token count equals the corpus' tokens");
    }
}

int run() {
    Checks checks;
    SyntheticSpec spec;
    spec.num_docs = 300;
    spec.vocab_size = 400;
    spec.num_topics = 8;
    spec.mean_doc_length = 50;
    spec.seed = kSeed;
    const SyntheticCorpus corpus = make_synthetic_corpus(spec);
    const std::uint32_t V = spec.vocab_size;
    LdaParams params;
    params.num_topics = spec.num_topics;
    params.alpha = 0.1;
    params.beta = 0.01;

    Model m = build_model(corpus, V, params.num_topics);
    const Likelihood likelihood(params, V);
    const double start = likelihood.evaluate(m.word_topic, m.doc_topic, m.topic_totals).loglik;

    sched::Runtime runtime(kThreads, sched::PinMode::kNone);
    sched::BlockScheduler scheduler(static_cast<int>(m.grid_side));
    checks.expect(runtime.threads() == kThreads, "the runtime has 2 workers");
    bool every_token = true;
    for (int it = 0; it < kIterations; ++it) {
        every_token =
            every_token && sweep(m, runtime, scheduler, params, V, it) == corpus.num_tokens();
    }
    checks.expect(every_token, "every sweep samples every token once");
    check_tables(m, corpus.num_docs(), V, params.num_topics, checks);

    const double end = likelihood.evaluate(m.word_topic, m.doc_topic, m.topic_totals).loglik;
    checks.expect(end > start, "training raises the log-likelihood");
    std::vector<std::vector<double>> phi(params.num_topics, std::vector<double>(V, params.beta));
    for (WordId w = 0; w < V; ++w) {
        m.word_topic.for_each_nonzero(w, [&](TopicId k, Count n) { phi[k][w] += n; });
    }
    const double recovered = mean_best_cosine(corpus.topic_word, phi);
    checks.expect(recovered >= 0.7, "planted topics recovered (mean best cosine " +
                                        std::to_string(recovered) + " >= 0.7)");
    check_ranks(m, likelihood, corpus, checks);

    std::printf(
        "lda_consumer: %llu tokens, %d sweeps on %d workers, loglik %.1f -> %.1f, "
        "recovery %.3f, %d failed checks\n",
        static_cast<unsigned long long>(corpus.num_tokens()), kIterations, kThreads, start, end,
        recovered, checks.failed());
    return checks.failed() == 0 ? 0 : 1;
}

}  // namespace

int main() {
    try {
        return run();
    } catch (const rotor::Error& e) {
        std::fprintf(stderr, "lda_consumer: rotor error: %s\n", e.what());
        return 2;
    }
}
