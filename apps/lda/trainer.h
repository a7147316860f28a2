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

/// One iteration's record: the keys of ARCHITECTURE.md's metrics table.
struct IterationMetrics {
    std::uint32_t iter = 0;
    double time_s = 0;       ///< wall seconds since training began (excluding load)
    double iteration_s = 0;  ///< this iteration's wall seconds
    double tokens_per_s = 0;
    std::uint64_t tokens_sampled = 0;
    std::optional<LogLikelihood> loglik;  ///< set on evaluation iterations
    double loglik_word_per_token = 0;
    double loglik_per_token = 0;
    double effective_ratio = 0;
    double load_cv = 0;
    double overhead_ratio = 0;
    double processed_ratio = 1;
    double s_error = 0;
    /// Further metrics added by hooks (held-out perplexity, coherence, ...), in record order.
    std::vector<std::pair<std::string, double>> extra;
    /// Per-rank arrays of the distributed trainer (index = rank), e.g. rank_processed_ratio.
    std::vector<std::pair<std::string, std::vector<double>>> extra_arrays;
};

/// Optional steps the caller adds to training.
struct TrainHooks {
    /// On evaluation iterations, after the log-likelihood: may add `extra` metrics. Runs on the
    /// training thread with every sweep finished.
    std::function<void(IterationMetrics&)> on_evaluate;
    /// After every iteration has been reported (checkpoints, α optimisation, ...). On the
    /// iterations for which needs_state returns true (all of them when needs_state is empty) it
    /// runs on the training thread with that sweep finished and the next not begun, so it may
    /// read and change the trainer; on the others it may run on a worker thread while the next
    /// sweep runs (one call at a time, in order) and must not touch the trainer.
    std::function<void(const IterationMetrics&)> after_iteration;
    /// Whether after_iteration at this iteration reads or changes the trainer's state.
    std::function<bool(std::uint32_t)> needs_state;
};

/// One block's run, for the scheduler timeline (--trace).
struct BlockRun {
    std::uint32_t iter = 0;
    int worker = 0;
    int row = 0;
    int col = 0;
    double start_s = 0;  ///< seconds since the trainer was constructed
    double end_s = 0;
};

/// Receives progress: one call at a time, in iteration order; during back-to-back sweeps from
/// the worker thread that completed the sweep, otherwise from the training thread.
class Reporter {
  public:
    virtual ~Reporter() = default;
    virtual void on_start(std::string_view /*summary*/) {}
    virtual void on_iteration(const IterationMetrics& m, std::uint32_t last_iteration) = 0;
};

namespace detail {

/// A trainer that can run several sweeps back to back.
template <class T>
concept SpanIterable = requires(T& t, const std::function<void(IterationMetrics&)>& f) {
    t.iterate_span(std::uint32_t{1}, f);
};

/// The first iteration after `done` that needs every sweep finished: the last one, an evaluation
/// iteration, or one whose after_iteration hook needs the state.
inline std::uint32_t next_sync_point(std::uint32_t done, std::uint32_t last,
                                     std::uint32_t eval_every, const TrainHooks& hooks) {
    for (std::uint32_t i = done + 1; i < last; ++i) {
        if (eval_every > 0 && i % eval_every == 0) return i;
        if (hooks.after_iteration && (!hooks.needs_state || hooks.needs_state(i))) return i;
    }
    return last;
}

/// The sweep loop shared by the single-node and the distributed trainer: sweeps until
/// `trainer.iterations_done()` reaches `last`, evaluates every `eval_every` sweeps and at the
/// last one (then runs hooks.on_evaluate), reports each sweep when `report` is true, then runs
/// hooks.after_iteration. time_s leaves evaluation and the hooks out: it measures training, not
/// monitoring. T needs iterate(), evaluate() and iterations_done(); when it also has
/// iterate_span(n, on_sweep), the sweeps between two sync points run back to back.
template <class T>
void run_sweeps(T& trainer, std::uint32_t eval_every, std::uint64_t num_tokens, Reporter& reporter,
                bool report, const TrainHooks& hooks, std::uint32_t last) {
    Stopwatch clock;
    double monitoring_s = 0;
    while (trainer.iterations_done() < last) {
        IterationMetrics m;
        if constexpr (SpanIterable<T>) {
            const std::uint32_t done = trainer.iterations_done();
            const std::uint32_t sync = next_sync_point(done, last, eval_every, hooks);
            // Sweeps before the sync point are reported as they complete, from a worker.
            m = trainer.iterate_span(sync - done, [&](IterationMetrics& early) {
                early.time_s = clock.seconds() - monitoring_s;
                if (report) reporter.on_iteration(early, last);
                if (hooks.after_iteration) hooks.after_iteration(early);
            });
        } else {
            m = trainer.iterate();
        }
        m.time_s = clock.seconds() - monitoring_s;
        const bool eval = m.iter == last || (eval_every > 0 && m.iter % eval_every == 0);
        Stopwatch monitoring;
        if (eval) {
            m.loglik = trainer.evaluate();
            m.loglik_word_per_token = m.loglik->loglik_word / num_tokens;
            m.loglik_per_token = m.loglik->loglik / num_tokens;
            if (hooks.on_evaluate) hooks.on_evaluate(m);
        }
        if (report) reporter.on_iteration(m, last);
        if (hooks.after_iteration) hooks.after_iteration(m);
        monitoring_s += monitoring.seconds();
    }
}

}  // namespace detail

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
    void train(Reporter& reporter, const TrainHooks& hooks = {}, std::uint32_t last_iteration = 0);
    /// One sweep over every token. Returns its metrics (without log-likelihood).
    IterationMetrics iterate();
    /// `sweeps` >= 1 sweeps back to back (no barrier between them in the default mode; one
    /// after the other in deterministic mode). Returns the last sweep's metrics; those of the
    /// others go to on_sweep as each completes, in order, one call at a time, possibly from a
    /// worker thread while the next sweep runs.
    IterationMetrics iterate_span(std::uint32_t sweeps,
                                  const std::function<void(IterationMetrics&)>& on_sweep);
    /// log p(w|z) and log p(w,z), computed in parallel over words and documents.
    LogLikelihood evaluate() const;

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
    const std::vector<BlockRun>& schedule() const { return schedule_; }

  private:
    IterationMetrics sweep_dynamic(std::uint32_t sweeps,
                                   const std::function<void(IterationMetrics&)>& on_sweep);
    void sweep_deterministic(IterationMetrics& m);
    /// Folds the per-block copies into totals_; returns Σ_p ‖ñ^p − n‖₁.
    double reconcile_totals();
    static void record_times(IterationMetrics& m, const sched::IterationTimes& times);
    void finish_metrics(IterationMetrics& m) const;
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
    std::vector<BlockRun> schedule_;
};

}  // namespace rotor::lda
