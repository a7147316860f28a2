// The single-node LDA trainer (shared/ARCHITECTURE.md, "LDA: single node"): the doc x word token
// matrix cut into an L x L BlockGrid, blocks handed by the dynamic BlockScheduler (sched/) to
// pinned workers that run the SparseLDA kernel (core/lda/) on them. Sweeps run back to back
// (BlockScheduler::reset_sweeps) between the iterations that need a consistent state
// (evaluation, checkpoints, α updates); each worker samples a block against its own copy of the
// topic totals, folded exactly into the shared totals when the block ends.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/timer.h"
#include "core/base/types.h"
#include "core/corpus/corpus.h"
#include "core/lda/doc_topic_table.h"
#include "core/lda/lda_params.h"
#include "core/lda/likelihood.h"
#include "core/lda/model.h"
#include "core/lda/sampler.h"
#include "core/lda/token_block.h"
#include "core/lda/word_topic_table.h"
#include "train/loop.h"
#include "train/record.h"
#include "train/reporter.h"
#include "train/trace.h"

namespace rotor::sched {
class Runtime;
struct IterationTimes;
}  // namespace rotor::sched

namespace rotor::lda {

/// What a training run does. Plain struct; validate() throws ConfigError naming the flag.
struct TrainOptions {
    LdaParams params;                ///< K, α, β
    std::uint32_t iterations = 100;  ///< Gibbs sweeps (--iterations), >= 0
    std::uint64_t seed = 1;          ///< every random choice derives from it (--seed)
    int blocks = 0;  ///< grid side L (--blocks); 0: ⌈√2·P⌉, or 16 if deterministic
    bool deterministic = false;     ///< diagonal sweeps: same model at any thread count
    std::uint32_t eval_every = 10;  ///< evaluate log-likelihood every N iterations (0: only last)

    bool record_schedule = false;  ///< keep every block's run for a timeline (--trace)

    /// Deterministic mode's default L: fixed, so that it does not depend on --threads.
    static constexpr int kDeterministicBlocks = 16;
    void validate() const;
};

/// The metrics keys of an LDA run (work: tokens sampled; headline: log-likelihood per token).
train::RecordSchema record_schema();
/// Adds loglik_word, loglik and both per token (N = `num_tokens`) to `r`.
void add_loglik(train::Record& r, const LogLikelihood& ll, std::uint64_t num_tokens);

/// Owns the blocks, tables and samplers of one training run. Not thread-safe: one thread
/// drives it; it uses the Runtime's workers inside iterate().
class Trainer {
  public:
    /// Partitions `corpus`, initialises topics at random and builds the tables. The corpus is
    /// only read here (its doc labels are copied); it may be released afterwards.
    /// Throws ConfigError for invalid options.
    Trainer(const core::Corpus& corpus, const TrainOptions& options, sched::Runtime& runtime);
    ~Trainer();
    Trainer(const Trainer&) = delete;
    Trainer& operator=(const Trainer&) = delete;

    /// Runs sweeps until iterations_done() reaches `last_iteration` (default: the sweeps done
    /// so far plus options.iterations), reporting each; evaluates every eval_every sweeps and at
    /// the last one.
    void train(train::Reporter& reporter, const train::Hooks& hooks = {},
               std::uint32_t last_iteration = 0);
    /// One sweep over every token. Returns its metrics (without log-likelihood).
    train::Record iterate();
    /// `sweeps` >= 1 sweeps back to back (no barrier between them in the default mode; one
    /// after the other in deterministic mode). Returns the last sweep's metrics; those of the
    /// others go to on_sweep as each completes, in order, one call at a time, possibly from a
    /// worker thread while the next sweep runs.
    train::Record iterate_span(std::uint32_t sweeps,
                               const std::function<void(train::Record&)>& on_sweep);
    /// log p(w|z) and log p(w,z), computed in parallel over words and documents.
    LogLikelihood evaluate() const;
    /// evaluate() written into `r` (add_loglik).
    void evaluate_record(train::Record& r) const { add_loglik(r, evaluate(), num_tokens_); }

    /// Bytes the run will hold at its peak (blocks, tables, per-worker copies), estimated from
    /// the corpus' shape before anything big is allocated. The corpus itself is not counted.
    static std::uint64_t estimate_memory(const core::Corpus& corpus, const TrainOptions& options,
                                         int threads);
    /// The doc-topic rows' share of estimate_memory: every doc's row of capacity min(K, length)
    /// (8 bytes a slot, 64-byte lines, plus 8 bytes of metadata). The distributed estimate
    /// takes a rank's share of it.
    static std::uint64_t estimate_doc_rows(const core::Corpus& corpus, std::uint32_t num_topics);

    /// Replaces every token's topic (e.g. from a checkpoint) and rebuilds the tables.
    /// Throws InputError (naming `source`) when the shape does not match this run's blocks.
    void restore(const std::vector<std::vector<TopicId>>& block_topics,
                 std::uint32_t iterations_done, const std::string& source);
    /// α_k in force.
    const std::vector<double>& alpha() const { return alpha_; }
    /// Sets an asymmetric α (size K, each > 0), e.g. after Minka's update.
    void set_alpha(std::vector<double> alpha);

    /// The model as plain data; vocab may be empty.
    LdaModel to_model(std::vector<std::string> vocab, std::string corpus_path) const;

    // Read access for tests and the distributed trainer.
    const std::vector<TokenBlock>& blocks() const { return blocks_; }
    const DocTopicTable& doc_topic() const { return doc_topic_; }
    const WordTopicTable& word_topic() const { return word_topic_; }
    const std::vector<TotalCount>& topic_totals() const { return totals_; }
    int grid_side() const { return side_; }
    std::uint32_t iterations_done() const { return iterations_done_; }
    std::uint64_t num_tokens() const { return num_tokens_; }
    /// Block runs recorded so far (options.record_schedule; dynamic and deterministic modes).
    const std::vector<train::BlockRun>& schedule() const { return schedule_; }

  private:
    train::Record sweep_dynamic(std::uint32_t sweeps,
                                const std::function<void(train::Record&)>& on_sweep);
    void sweep_deterministic(train::Record& m);
    /// Folds the per-block copies into totals_; returns Σ_p ‖ñ^p − n‖₁.
    double reconcile_totals();
    void rebuild_tables();
    void make_samplers();
    void canonicalize_rows();

    TrainOptions options_;
    sched::Runtime& runtime_;
    int side_ = 0;
    std::uint32_t num_words_ = 0;
    std::uint64_t num_tokens_ = 0;
    std::vector<std::uint64_t> doc_labels_;
    std::vector<TokenBlock> blocks_;
    DocTopicTable doc_topic_;
    WordTopicTable word_topic_;
    std::vector<TotalCount> totals_;
    std::vector<std::unique_ptr<Sampler>> samplers_;     // one per worker
    std::vector<std::vector<TotalCount>> local_totals_;  // per worker, or per block (determ.)
    std::vector<std::vector<TotalCount>> base_totals_;   // per worker: totals_ at block start
    std::vector<double> alpha_;
    Likelihood likelihood_;
    std::uint32_t iterations_done_ = 0;
    Stopwatch since_start_;
    std::vector<train::BlockRun> schedule_;
};

}  // namespace rotor::lda
