// The LDA trainer, for one process and for P MPI ranks alike (docs/architecture.md, "LDA as the
// worked example"; HarpLDA+, Peng et al., VLDB 2017): the doc x word token matrix cut into a grid
// of blocks that pinned workers sample with the SparseLDA kernel (core/lda/) under the dynamic
// block scheduler (sched/), the word-topic model cut into slices, and with P > 1 ranks the slices
// rotating around the ring (comm/ring_pipeline.h) while a timer stops every rank's round together.
// One process is the P = 1 case: a communicator of one rank, one slice holding every word.
//
// Layout on rank p of P:
// - Docs: the corpus' docs in a seeded permutation, cut into P groups of about equal token
//   count (sched::partition_rows); rank p keeps group p, renumbered 0..D_p-1 in increasing global
//   order (local_docs() maps back). Its doc-topic rows are local; they travel only when
//   documents move: with --rebalance (default), once a rank's measured share of the work is off
//   by more than the tolerance, whole documents (tokens and topics) move from ranks that are
//   slower than their share to faster ones at the start of an iteration, and each rank rebuilds
//   its blocks (plan_rebalance, migrate). The word rows and topic totals do not change.
// - Words: P = 1: one slice of every word, cut into L column groups greedily by frequency
//   (L = --blocks, or ceil(sqrt(2)·threads) and at least 4 with 2 or more threads, or 16 with
//   --deterministic). P > 1: 2P slices that balance every rank's share of the tokens
//   (sched::partition_cols_balanced), each cut into c column groups, so the rank's grid has side
//   G = 2P·c, column s·c + j being group j of slice s.
//   Rows: the rank's docs in G groups of equal token count.
// - P = 1: an iteration is one sweep over the grid; sweeps between sync points run back to back
//   (BlockScheduler::reset_sweeps), or as diagonal rounds with --deterministic (the same model at
//   any thread count). Each block samples against a copy of the topic totals taken at its start,
//   folded exactly into the totals at its end (trainer_local.cpp).
// - P > 1: slices 2p and 2p+1 are "home" on rank p: held there between iterations. In an
//   iteration rank p samples each of the 2P slices once (reset_columns to the held slice's c
//   columns) while the other held slice travels (comm::RingPipeline); every worker samples with a
//   private copy of the topic totals, whose deltas are summed exactly with allreduce at the end
//   of the iteration (trainer_ring.cpp; s_error is STRADS' Δ_t over all workers of all ranks).
// - Word-topic rows: one WordTopicTable per slice, over that slice's words only, indexed by
//   SLICE-LOCAL id (a word's position in slice_words(s)); rows sized by the words' GLOBAL
//   frequencies, so a slice's table has the same layout on every rank. A rank has tables only
//   for the slices it holds (slices.cpp): model memory per rank is about 1/P of the W x K table.
// - Blocks hold slice-local word ids too; with one slice they are the global ids.
//
// Thread-safety: one thread (the rank's "comm thread", the one that created the communicator)
// drives a Trainer; every public method except the accessors is COLLECTIVE: all ranks call it in
// the same order. The runtime's workers sample; MPI is only called from the driving thread
// (MPI_THREAD_FUNNELED suffices).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm/communicator.h"
#include "core/base/error.h"
#include "core/base/timer.h"
#include "core/base/types.h"
#include "core/corpus/corpus.h"
#include "core/lda/alpha_optimizer.h"
#include "core/lda/doc_token_index.h"
#include "core/lda/doc_topic_table.h"
#include "core/lda/heldout.h"
#include "core/lda/likelihood.h"
#include "core/lda/model.h"
#include "core/lda/sampler.h"
#include "core/lda/token_block.h"
#include "core/lda/topic_init.h"
#include "core/lda/word_topic_table.h"
#include "sched/timer_control.h"
#include "train/loop.h"
#include "train/record.h"
#include "train/reporter.h"
#include "train/ring_iteration.h"
#include "train/trace.h"

namespace rotor::sched {
class BlockScheduler;
class Runtime;
struct ScheduleEvent;
}  // namespace rotor::sched

namespace rotor::comm {
class InProcessGroup;
class WireReader;
}  // namespace rotor::comm

namespace rotor::lda {

class SamplerPolicy;

/// What a training run does. Plain struct; validate() throws ConfigError naming the flag.
struct TrainOptions {
    LdaParams params;                ///< K, α, β
    std::uint32_t iterations = 100;  ///< Gibbs sweeps (--iterations), >= 0 (>= 1 sequential)
    std::uint64_t seed = 1;          ///< every random choice derives from it (--seed)
    int blocks = 0;  ///< grid side L (--blocks); 0: ⌈√2·P⌉, or 16 if deterministic
    bool deterministic = false;     ///< diagonal sweeps: same model at any thread count
    std::uint32_t eval_every = 10;  ///< evaluate log-likelihood every N iterations (0: only last)
    InitOptions init;               ///< the first topics (--init, --init-doc-topics)

    bool record_schedule = false;  ///< keep every block's run for a timeline (--trace)
    /// The kernel (--sampler): a run setting, not part of the model (a resumed run may change it).
    SamplerKind sampler = SamplerKind::kSparse;
    /// MhSampler's cycles of a doc and a word proposal per token (--mh-steps), >= 1.
    std::uint32_t mh_steps = 2;

    /// Deterministic mode's default L: fixed, so that it does not depend on --threads.
    static constexpr int kDeterministicBlocks = 16;
    /// The least default grid side with two or more threads (one process, no --blocks): at 2
    /// threads ceil(sqrt(2)·2) = 3 leaves a worker 4 blocks to choose from and a sweep's last
    /// blocks wait on each other; 4 x 4 was 7–24% faster at K = 100 and 5% at K = 1,000 on the
    /// kernel split (docs/BENCHMARKS.md, "Grid side at 2 threads"). From 3 threads on the
    /// formula gives 5 or more.
    static constexpr int kMinThreadedBlocks = 4;
    void validate() const;
};

/// The metrics keys of an LDA run (work: tokens sampled; headline: log-likelihood per token).
train::RecordSchema record_schema();
/// Adds loglik_word, loglik and both per token (N = `num_tokens`) to `r`.
void add_loglik(train::Record& r, const LogLikelihood& ll, std::uint64_t num_tokens);

/// What matters with more than one rank (one process ignores the timer, the straggler and
/// rebalancing). Plain struct; every rank must pass the same values (the straggler hook applies
/// to one rank only by design).
struct DistributedOptions {
    /// Timer control (--timer / --no-timer): each round's compute stops after the budget (on
    /// every round, or while the ranks' speeds differ: timer_always); off, every round runs until
    /// its work is done.
    bool timer = true;
    /// --timer-always (the default): the budget cuts every round, HarpLDA+'s rule as it is (on 2
    /// balanced ranks at K = 1,000 it reached each held-out perplexity 0-8% sooner than full
    /// rounds; docs/distributed.md). --no-timer-always: the timer cuts rounds only while the
    /// ranks' speeds differ: after an iteration whose
    /// imbalance (sched::rebalance_imbalance of the ranks' tokens and tokens per compute
    /// second) is at most 1 + rebalance_tolerance, the next runs untimed (every round to the
    /// end: no rank would wait long for another), and when the imbalance returns the budget
    /// restarts at sched::budget_for_ratio's for a processed ratio halfway between low and high.
    /// The first iteration (no speeds yet) is timed. train::RingTimer.
    bool timer_always = true;
    /// --timer-init (initial_s, seconds), --timer-low (low), --timer-high (high).
    sched::TimerParams timer_params;
    /// --simulate-straggler RANK:FACTOR: this rank (-1: none) sleeps (FACTOR-1)·t after each
    /// block that took t seconds, counted as compute. Sleeps end early when the timer fires.
    int straggler_rank = -1;
    double straggler_factor = 1.0;  ///< >= 1
    /// --rebalance / --no-rebalance: move documents between ranks so that each rank's share of
    /// the tokens follows its measured sampling speed (tokens sampled per compute second, the
    /// median of the last iterations). Off, documents stay where the static split put them.
    bool rebalance = true;
    /// --rebalance-tolerance: documents move when the busiest rank, measured against its
    /// speed-proportional share, holds more than (1 + this) times that share, i.e. when an
    /// iteration would be predicted to take that much longer than a balanced one (and when the
    /// iterations left gain more than twice what the move costs).
    double rebalance_tolerance = 0.25;
    /// Most tokens rebalancing may give one rank (0: no limit); the CLI derives it from
    /// --max-memory with Trainer::estimate_memory.
    std::uint64_t max_rank_tokens = 0;
    /// Column groups per slice (c); 0: sched::default_grid_side(threads). With one process (one
    /// slice) this is the grid side when TrainOptions::blocks is 0 (a resumed run's).
    int columns_per_slice = 0;
    /// Test hook: called on the driving thread at the start of every iteration with (rank,
    /// iteration number); it may throw to simulate a rank that fails mid-run.
    std::function<void(int rank, std::uint32_t iter)> on_iteration_start;

    /// Throws ConfigError naming the flag (e.g. "--simulate-straggler").
    void validate(int ranks) const;
};

/// Parses `RANK:FACTOR` (e.g. "1:5") into options.straggler_rank / straggler_factor. Throws
/// ConfigError("--simulate-straggler").
void parse_straggler(const std::string& text, DistributedOptions& options);

/// One move of the rebalancing plan: rank `from` sends about `tokens` tokens' worth of whole
/// documents to rank `to`.
struct DocTransfer {
    int from = 0;
    int to = 0;
    std::uint64_t tokens = 0;
    bool operator==(const DocTransfer&) const = default;
};

/// The moves that bring every rank's token count to its share of the measured `speeds` (tokens
/// per second, one per rank, > 0), or none when the imbalance max_q tokens_q / target_q is at
/// most 1 + `tolerance`. A rank's share is speed_q / Σ speed, floored at `min_share` of an even
/// share (so a very slow rank keeps some documents and its speed stays measurable). Senders and
/// receivers are paired greedily in rank order: at most P - 1 moves, each pair at most once.
/// Deterministic (every rank computing it gets the same plan).
/// With `max_tokens` > 0 no target exceeds it (the excess goes to the other ranks by their
/// shares), unless the ranks together cannot hold the tokens at that limit.
std::vector<DocTransfer> plan_rebalance(std::span<const std::uint64_t> tokens,
                                        std::span<const double> speeds, double tolerance,
                                        double min_share = 0.1, std::uint64_t max_tokens = 0);
/// One rank's accounting of one iteration. Seconds are wall seconds on that rank.
struct RankMetrics {
    std::uint64_t tokens = 0;            ///< tokens of the rank's docs
    std::uint64_t tokens_sampled = 0;    ///< of which sampled in the iteration
    double processed_ratio = 1;          ///< tokens_sampled / tokens (1 when tokens == 0)
    double iteration_s = 0;              ///< the iteration's wall time on this rank
    double compute_s = 0;                ///< inside the intra-node scheduler's rounds
    double comm_s = 0;                   ///< packing, unpacking, posting, collectives
    double wait_s = 0;                   ///< blocked waiting for a slice to arrive
    double overhead_ratio = 0;           ///< 1 - compute_s / iteration_s
    double effective_ratio = 0;          ///< Σ worker sampling seconds / (threads × iteration_s)
    double load_cv = 0;                  ///< std/mean of the rank's workers' sampling seconds
    double rebalance_s = 0;              ///< moving documents at the start of the iteration
    std::uint64_t tokens_moved_out = 0;  ///< tokens of the documents this rank sent away
    /// Most bytes of word-topic tables held at once in the iteration (Trainer::
    /// model_bytes(), sampled at its start and after each slice arrived).
    std::uint64_t model_bytes = 0;
};

/// A rank's documents with their tokens' topics, in a layout independent of the grid: docs
/// (global ids, increasing) and, per doc, its tokens (word and topic), sorted by word id where
/// a canonical order is needed (checkpoints; a word's tokens then in their order in the blocks,
/// so that a restore puts every topic back on its token). Used to move documents between ranks
/// and by checkpoints.
struct LocalDocs {
    std::vector<DocId> docs;
    std::vector<std::uint64_t> offsets{0};  ///< size docs.size() + 1, into words / topics
    std::vector<WordId> words;
    std::vector<TopicId> topics;
};

/// Trains LDA over the ranks of a communicator (one process: P = 1). Owns the rank's blocks,
/// doc-topic rows, the word-topic tables of the slices it holds and the topic-total copies.
class Trainer {
  public:
    /// Collective. Every rank passes the same whole corpus (each keeps only its docs), options
    /// and seed. `comm` and `runtime` must outlive the trainer. Throws ConfigError for invalid
    /// options (every rank throws the same), CommError on communication failure.
    Trainer(const core::Corpus& corpus, const TrainOptions& options, const DistributedOptions& dist,
            sched::Runtime& runtime, comm::Communicator& comm);
    /// One process (P = 1, a communicator of one rank owned by the trainer). `runtime` must
    /// outlive the trainer. Throws ConfigError for invalid options.
    Trainer(const core::Corpus& corpus, const TrainOptions& options, sched::Runtime& runtime);
    ~Trainer();
    /// Bytes one rank holds at its peak when it has `rank_tokens` of the corpus' tokens: its
    /// blocks, doc rows (its share of all docs' rows), the slices' tables and messages (2/P of
    /// the whole word-topic table: the held slices plus the ring's messages), the per-worker
    /// totals, and while documents move, its documents twice more (the grid-free copy and the
    /// new blocks). With one rank: the blocks, every doc row, the whole table and the copies of
    /// the totals (per worker, or per block of a diagonal round). Estimated from the corpus'
    /// shape before anything big is allocated; the corpus itself is not counted. Linear in
    /// rank_tokens.
    static std::uint64_t estimate_memory(const core::Corpus& corpus, const TrainOptions& options,
                                         int ranks, int threads, std::uint64_t rank_tokens);
    /// One process: estimate_memory(corpus, options, 1, threads, corpus.num_tokens()).
    static std::uint64_t estimate_memory(const core::Corpus& corpus, const TrainOptions& options,
                                         int threads);
    /// What `lda train` holds beyond estimate_memory once the sweeps have allocated it, at its
    /// larger of two moments: the UMass coherence of `coherence_top` words per topic at an
    /// evaluation (the top words and umass_coherence_bytes; 0: none), or the model gathered for
    /// save_model (word and doc rows as CSR, at most min(K, f) cells per word and min(K, length)
    /// per doc; labels, α, totals; the top 20 words per topic of topics.txt and params.json)
    /// plus `text_bytes`, the vocabulary and document names as the model copies them. With
    /// `ranks` > 1 the gathered rows arrive as one vector per row beside the model (rank 0);
    /// every rank plans for it. An upper bound from the corpus' shape.
    static std::uint64_t estimate_finish_memory(const core::Corpus& corpus,
                                                const TrainOptions& options, int ranks,
                                                std::size_t coherence_top,
                                                std::uint64_t text_bytes);
    /// The doc-topic rows' share of estimate_memory: every doc's row of capacity min(K, length)
    /// (8 bytes a slot, 64-byte lines, plus 8 bytes of metadata).
    static std::uint64_t estimate_doc_rows(const core::Corpus& corpus, std::uint32_t num_topics);
    Trainer(const Trainer&) = delete;
    Trainer& operator=(const Trainer&) = delete;

    /// Collective. Sweeps until iterations_done() reaches `last_iteration` (0: options'
    /// iterations more). `reporter` is called on rank 0 only (other ranks may pass any
    /// reporter; it is not called); evaluation every eval_every sweeps and at the last.
    void train(train::Reporter& reporter, const train::Hooks& hooks = {},
               std::uint32_t last_iteration = 0);
    /// Collective: one iteration (P = 1: one sweep; P > 1: P rounds of two slices). The returned
    /// record is the same on every rank: aggregated values, plus per-rank arrays (P > 1) as in
    /// rank_metrics().
    train::Record iterate();
    /// Collective: `sweeps` >= 1 iterations back to back (P = 1, dynamic: no barrier between
    /// them). Returns the last one's record; the others go to on_sweep as each completes, in
    /// order, one call at a time, possibly from a worker thread while the next sweep runs.
    train::Record iterate_span(std::uint32_t sweeps,
                               const std::function<void(train::Record&)>& on_sweep);
    /// Collective: log p(w|z) and log p(w,z) of the current state, equal on every rank.
    LogLikelihood evaluate();
    /// Collective: evaluate() written into `r` (add_loglik).
    void evaluate_record(train::Record& r) { add_loglik(r, evaluate(), num_tokens_); }
    /// Collective: the whole model on rank 0 (docs in corpus order with their labels, rows sorted
    /// by topic); an empty model on the other ranks.
    LdaModel gather_model(std::vector<std::string> vocab, std::string corpus_path);

    /// Collective: held-out document completion (--heldout) of the current state, the same
    /// numbers `rotor lda eval` reports on the gathered model (to rounding: a sparse row's cells
    /// may come in another order). Every rank passes an evaluator of the same held-out
    /// corpus. Every rank sends every rank the rows of heldout.words() that lie in its home slices
    /// (one allgather); each builds φ of those words (TopicWordDistribution over the global W) and
    /// folds in its share of the held-out documents (contiguous, about equal in tokens) with its
    /// runtime's workers; rank 0 adds the per-document results in document order (so the split over
    /// ranks does not change the total) and broadcasts it: equal on every rank. Memory per rank:
    /// the gathered rows, φ of the held-out words and 8 bytes per vocabulary word (φ's row
    /// offsets).
    HeldoutResult evaluate_heldout(const HeldoutEvaluator& heldout);
    /// Collective: each topic's `top` words by count n_wk (ties: lower word id first), most
    /// frequent first, on rank 0 (empty on the others): what lda::top_words gives on the
    /// gathered model, without gathering it. Every rank keeps the top of its home slices' rows
    /// per topic; rank 0 merges them (K·top entries per rank on the wire).
    std::vector<std::vector<WordId>> top_words(std::size_t top);
    /// Collective: the doc-topic histograms of every rank's docs, summed; equal on every rank.
    DocTopicHistograms doc_topic_histograms();
    /// Collective (--optimize-alpha): Minka's update of an asymmetric α from the histograms of
    /// all docs, computed on rank 0 and broadcast, so every rank's samplers use the same α.
    /// Returns whether α was updated (the same on every rank).
    bool optimize_alpha(const AlphaOptimizerOptions& options = {});
    /// α_k in force (size K), the same on every rank.
    const std::vector<double>& alpha() const noexcept { return alpha_; }
    /// Sets α on this rank (size K, each > 0; ConfigError otherwise) and rebuilds the samplers.
    /// Not collective: every rank must pass the same values (optimize_alpha() does).
    void set_alpha(std::vector<double> alpha);

    /// Collective, between iterations: moves whole documents (their tokens and topics) as `plan`
    /// says (every rank passes the same plan; rebalancing calls it with plan_rebalance's), about
    /// t.tokens tokens from rank t.from to rank t.to for each entry, and rebuilds each rank's
    /// blocks and doc rows. The sampling state does not change: the same tokens keep the same
    /// topics, so word rows, topic totals and the log-likelihood stay as they were. Returns the
    /// tokens this rank sent. ConfigError for a rank out of range or a move to itself.
    std::uint64_t move_documents(const std::vector<DocTransfer>& plan);

    /// Collective: continues from a checkpoint (apps/lda/checkpoint.h). `docs` are the global
    /// ids (increasing) of the documents this rank takes, any split of the corpus' documents over
    /// the ranks (every document on exactly one rank), and `topics` their tokens' topics: per doc,
    /// in the order of its tokens sorted by word id (local_state()'s layout); the words come from
    /// `corpus`, the one the trainer was built from. The tables are rebuilt from them as at
    /// construction (doc rows locally, topic totals by allreduce, each home slice's word rows
    /// summed on its home rank), i.e. the state at an iteration boundary. `timer_budget` (> 0;
    /// ignored when the timer is off) becomes the next round's budget. Everything is checked on
    /// every rank first (the same iterations_done everywhere, docs valid and a partition, topic
    /// counts, topics < K); a mismatch on any rank makes every rank throw the same
    /// comm::AgreedError (an InputError naming `source` of the lowest failing rank), before
    /// anything changed.
    void restore(const core::Corpus& corpus, const std::vector<DocId>& docs,
                 const std::vector<TopicId>& topics, std::uint32_t iterations_done,
                 double timer_budget, const std::string& source);
    /// This rank's documents and their tokens' words and topics (see LocalDocs), as a checkpoint
    /// saves them and restore() takes them back. `by_word` false: each document's tokens in no
    /// particular order (cheaper; moving documents sends words and topics together).
    LocalDocs local_state(bool by_word = true) const;

    /// Block runs of this rank recorded so far (options.record_schedule): worker = the rank's
    /// worker, col = s·c + j (group j of slice s); seconds since the trainer was constructed,
    /// the ranks' clocks started together after a barrier.
    const std::vector<train::BlockRun>& schedule() const noexcept { return schedule_; }
    /// Collective: every rank's schedule() on rank 0 (index = rank); empty on the others.
    std::vector<std::vector<train::BlockRun>> gather_schedule();

    // Read access for tests and the CLI (no communication).
    int rank() const noexcept { return rank_; }
    int ranks() const noexcept { return ranks_; }
    /// 1 for one process, 2P for P > 1 ranks.
    int num_slices() const noexcept { return ranks_ == 1 ? 1 : 2 * ranks_; }
    /// The slices held by `rank` between iterations: {0} for one process, {2p, 2p+1} else.
    std::vector<int> home_slices(int rank) const {
        return ranks_ == 1 ? std::vector<int>{0} : std::vector<int>{2 * rank, 2 * rank + 1};
    }
    /// The communicator the trainer runs over (its own one-rank one for one process).
    comm::Communicator& comm() const noexcept { return comm_; }
    int grid_side() const noexcept { return side_; }
    int columns_per_slice() const noexcept { return cols_per_slice_; }
    /// Words of slice s in [0, 2P), increasing.
    const std::vector<WordId>& slice_words(int s) const { return slice_words_[s]; }
    /// Global id of each local doc (increasing). Changes when documents move (rebalancing).
    const std::vector<DocId>& local_docs() const noexcept { return local_docs_; }
    /// Every rank's documents (index = rank), the same on every rank.
    const std::vector<std::vector<DocId>>& rank_docs() const noexcept { return rank_docs_; }
    /// Times documents moved between ranks so far, and the tokens they held in all.
    std::uint32_t rebalances() const noexcept { return rebalances_; }
    std::uint64_t tokens_moved() const noexcept { return tokens_moved_; }
    /// The rank's blocks, G×G, block (row, col) at row·G + col; their docs are LOCAL ids and
    /// their words SLICE-LOCAL ids: word i of a block of column col is
    /// slice_words(slice_of_column(col))[i].
    const std::vector<TokenBlock>& blocks() const noexcept { return blocks_; }
    /// The slice of grid column `col` (col / columns_per_slice()).
    int slice_of_column(int col) const noexcept { return col / cols_per_slice_; }
    /// Rows of the local docs (local ids).
    const DocTopicTable& doc_topic() const noexcept { return doc_topic_; }
    /// The word-topic table of slice s (rows indexed by slice-local id, as slice_words(s)), or
    /// null when this rank does not hold slice s. Between iterations exactly the home slices
    /// 2p, 2p+1 are held, with exact rows.
    const WordTopicTable* slice_table(int s) const { return held_[s].get(); }
    /// One process: the whole word-topic table (slice 0, global word ids). P > 1: ROTOR_ASSERT.
    const WordTopicTable& word_topic() const;
    /// n_wk for a GLOBAL word id, or 0 when this rank does not hold w's slice. O(2P + log W).
    Count word_count(WordId w, TopicId k) const;
    /// Bytes of the word-topic tables this rank holds now (WordTopicTable::memory_bytes summed).
    std::size_t model_bytes() const;
    const std::vector<TotalCount>& topic_totals() const noexcept { return totals_; }
    std::uint32_t iterations_done() const noexcept { return iterations_done_; }
    std::uint64_t num_tokens() const noexcept { return num_tokens_; }
    std::uint64_t local_tokens() const noexcept { return local_tokens_; }
    /// Every rank's metrics of the last iteration (index = rank), the same on every rank; empty
    /// for one process (P = 1 keeps no per-rank accounting).
    const std::vector<RankMetrics>& rank_metrics() const noexcept { return rank_metrics_; }
    /// The timer's budget for the next round, seconds (0 when the timer is off).
    double timer_budget() const noexcept;

  private:
    /// Both public constructors: over `comm`, or over `own`'s one rank when comm is null.
    Trainer(const core::Corpus& corpus, const TrainOptions& options, const DistributedOptions& dist,
            sched::Runtime& runtime, comm::Communicator* comm,
            std::unique_ptr<comm::InProcessGroup> own);
    /// Seeds of the layout and the initial topics: one process keeps the streams of rotor's
    /// single-node trainer of earlier rotors (so its models are unchanged), a rank of P > 1 its
    /// own.
    std::uint64_t row_seed() const;
    /// The grid: columns per slice (c) and side G = slices · c.
    void choose_grid(int threads);
    /// Cuts the corpus' docs into the ranks' shares (rank_docs_, local_docs_); returns this
    /// rank's docs as a doc-major corpus (topics empty), or nothing for one process, whose docs
    /// are the corpus' own.
    LocalDocs split_docs(const core::Corpus& corpus);
    /// Cuts the words into slices and each slice into column groups (slice_words_, col_of_word_).
    void split_words(const core::Corpus& corpus);
    std::uint64_t init_seed() const;
    /// Builds the word-topic tables and topic totals from the blocks (P = 1 directly, P > 1
    /// summed on each slice's home rank) and, in deterministic mode, canonicalizes the rows.
    void build_tables();

    // One process (trainer_local.cpp).
    train::Record sweep_dynamic(std::uint32_t sweeps,
                                const std::function<void(train::Record&)>& on_sweep);
    void sweep_deterministic(train::Record& m);
    /// Folds the per-block copies into totals_; returns Σ_p ‖ñ^p − n‖₁.
    double reconcile_copies();
    /// Adds Σ_p (ñ^p_k − n_k) over this rank's copies of the totals to delta[k], k < K.
    void add_copy_deltas(std::span<std::int64_t> delta) const;
    /// Σ_p ‖ñ^p − next‖₁ over this rank's copies: STRADS' eq. 1 before the division.
    double copy_staleness(const std::vector<TotalCount>& next) const;
    /// Appends the loop's block runs to schedule(), run e of iteration first_iter + e.sweep.
    void keep_schedule(const std::vector<sched::ScheduleEvent>& events, std::uint32_t first_iter);
    void canonicalize_rows();

    /// The model's parameters, vocabulary, labels and totals, without rows.
    LdaModel model_shell(std::vector<std::string> vocab, std::string corpus_path) const;
    /// One process: the model straight from the tables.
    LdaModel local_model(std::vector<std::string> vocab, std::string corpus_path) const;

    // P > 1 ranks (trainer_ring.cpp).
    train::Record iterate_ring();
    /// What reconcile_totals found, the same on every rank.
    struct Reconciled {
        std::uint64_t sampled = 0;  ///< tokens sampled by every rank in the iteration
        double ratio = 1;           ///< sampled / the corpus' tokens
        double s_error = 0;         ///< STRADS' Δ_t over every worker of every rank
    };
    /// Collective, at the end of an iteration: sums every worker's topic-total deltas into
    /// topic_totals() (exact) and measures the s-error.
    Reconciled reconcile_totals(std::uint64_t sampled_here);
    void init_word_topic();
    /// Renumbers the words of every block of column s·c + j to their positions in
    /// slice_words_[s] (blocks come from build_blocks with global word ids).
    void to_slice_local(std::vector<TokenBlock>& blocks);
    /// An empty table for slice s: rows sized by the global frequencies of its words.
    std::unique_ptr<WordTopicTable> new_slice_table(int s) const;
    /// 0, 1, ..., |slice s| - 1: the slice-local ids of all of slice s' words.
    std::span<const WordId> slice_ids(int s) const {
        return std::span<const WordId>(local_ids_).first(slice_words_[s].size());
    }
    std::vector<std::byte> pack_slice(int slice);
    void unpack_slice(int slice, std::span<const std::byte> buf);
    void make_samplers();
    /// Samples block `block` of iteration `iter` on worker `worker` with the kernel the policy
    /// picks, keeping the doc-token index current; returns the tokens sampled.
    std::uint64_t sample_block(int worker, std::uint32_t iter, TokenBlock& block,
                               WordTopicTable& word_topic, std::span<TotalCount> totals, Rng& rng,
                               const std::atomic<bool>* stop);
    /// --init sequential: iteration `iter` draws the first topics (SparseLDA with the init's
    /// β' on every block, untimed on the ring, on its own when MhSampler follows). Depends on
    /// the options and `iter` only: workers may call it.
    bool draws_first_topics(std::uint32_t iter) const {
        return options_.init.method == InitMethod::kSequential && iter == 1;
    }
    /// Builds the doc-token index when MhSampler may run and the blocks changed since.
    void prepare_index();
    /// Token-weighted mean number of topics in a doc row (O(D)); `at_random`: its expectation
    /// under uniformly random topics.
    double mean_doc_topics(bool at_random) const;
    /// Sets the record's "sampler" label (the kernels that ran in iteration r.iter).
    void label_sampler(train::Record& r);
    /// Replaces this rank's documents by `docs` (blocks, doc rows, local_docs_); the word rows
    /// and topic totals do not change (the same tokens with the same topics, on another rank).
    void adopt(LocalDocs docs);
    /// Collective: every rank's `mine` (index = rank); `problem` says why they are not a
    /// partition of the corpus' documents (empty if they are), the same on every rank.
    std::vector<std::vector<DocId>> gather_doc_lists(std::span<const DocId> mine,
                                                     std::string& problem);
    /// Collective: after every rank's adopt(), every rank learns every rank's documents
    /// (rank_docs_); CommError if they are not a partition.
    void share_doc_lists();
    /// Collective (evaluate_heldout): φ of the held-out words `wanted` (ascending) over the
    /// global W, from every rank's rows of them (one allgather); the same on every rank.
    TopicWordDistribution heldout_phi(std::span<const WordId> wanted);
    /// Packs docs.docs[i] for each i of `which` (with their words and topics) into one message
    /// of moving documents.
    static std::vector<std::byte> write_documents(const LocalDocs& docs,
                                                  std::span<const std::size_t> which);
    /// Reads one message of moving documents (migrate's) into `out` (appended): CommError
    /// naming the message unless ids, words and topics are in range.
    void read_documents(comm::WireReader& in, LocalDocs& out) const;
    /// Collective: the exchange of move_documents; returns the tokens this rank sent.
    std::uint64_t migrate(const std::vector<DocTransfer>& plan);
    /// Collective: records the last iteration's speeds (unless documents `moved` at its start);
    /// the plan for the next iteration's start (empty: nothing moves), computed on rank 0 and
    /// broadcast.
    std::vector<DocTransfer> decide_rebalance(bool moved);
    /// Global id of word j of block b (whose words are slice-local ids).
    WordId global_word(const TokenBlock& b, std::size_t j) const {
        return slice_words_[slice_of_column(static_cast<int>(b.col))][b.words[j]];
    }

    TrainOptions options_;
    DistributedOptions dist_;
    sched::Runtime& runtime_;
    std::unique_ptr<comm::InProcessGroup> own_comm_;  // one process: its one-rank communicator
    comm::Communicator& comm_;
    int rank_ = 0;
    int ranks_ = 1;
    int side_ = 0;
    int cols_per_slice_ = 0;
    std::uint32_t num_words_ = 0;
    std::uint64_t num_tokens_ = 0;
    std::uint64_t local_tokens_ = 0;
    std::uint32_t num_docs_ = 0;
    std::vector<std::vector<DocId>> rank_docs_;  // global ids of each rank's docs, increasing
    std::vector<DocId> local_docs_;              // rank_docs_[rank_]
    std::vector<std::uint64_t> all_labels_;      // every doc's label, rank 0 only
    std::vector<std::vector<WordId>> slice_words_;
    std::vector<std::uint32_t> col_of_word_;  // grid column of every word (slice s: s·c + j)
    std::vector<std::uint64_t> word_freq_;    // global word frequencies (rows' kind and capacity)
    std::vector<TokenBlock> blocks_;
    DocTopicTable doc_topic_;
    std::vector<std::unique_ptr<WordTopicTable>> held_;  // per slice; null when not held
    std::vector<WordId> local_ids_;                      // 0, 1, ..., largest slice size - 1
    std::size_t peak_model_bytes_ = 0;                   // most model_bytes() this iteration
    std::vector<TotalCount> totals_;
    std::vector<std::unique_ptr<Sampler>> samplers_;     // one per worker (SparseLDA)
    std::vector<std::unique_ptr<Sampler>> mh_samplers_;  // one per worker, unless --sampler sparse
    // --init sequential: one per worker for the first sweep (β' = first_sweep_beta); freed after.
    std::vector<std::unique_ptr<Sampler>> init_samplers_;
    DocTokenIndex doc_index_;  // MhSampler's doc-major topics
    bool index_stale_ = true;  // the blocks changed since its build
    std::unique_ptr<SamplerPolicy> policy_;
    std::vector<std::vector<TotalCount>> local_totals_;  // per worker, or per block (determ.)
    std::vector<std::vector<TotalCount>> base_totals_;   // P = 1: totals_ at each block's start
    std::vector<std::uint32_t> scratch_;                 // pack/unpack staging
    std::unique_ptr<sched::BlockScheduler> scheduler_;
    Likelihood likelihood_;
    std::optional<train::RingTimer> timer_;
    std::vector<RankMetrics> rank_metrics_;
    std::uint32_t iterations_done_ = 0;
    std::vector<double> alpha_;
    Stopwatch since_start_;
    std::vector<train::BlockRun> schedule_;
    std::vector<std::vector<double>> speed_history_;  // per rank, tokens/s of recent iterations
    std::vector<DocTransfer> pending_moves_;          // to execute at the next iteration's start
    std::uint32_t rebalances_ = 0;
    std::uint64_t tokens_moved_ = 0;
    double last_move_s_ = 0;            // the slowest rank's time for the last move
    std::uint32_t last_iteration_ = 0;  // train()'s target (options' iterations until called)
};

}  // namespace rotor::lda
