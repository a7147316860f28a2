#include "apps/lda/trainer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <numeric>

#include <fmt/format.h>

#include "apps/lda/parallel_sum.h"
#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/base/timer.h"
#include "core/lda/sparse_lda_sampler.h"
#include "sched/block_grid.h"
#include "sched/block_loop.h"
#include "sched/block_scheduler.h"
#include "sched/runtime.h"
#include "sched/worker_clock.h"

namespace rotor::lda {
namespace {

// Seed streams: block b of iteration t samples with Rng::from({seed, kSampleStream, t, b}), so
// the draws depend on the block, never on the thread that runs it (ARCHITECTURE.md, step 7).
constexpr std::uint64_t kSampleStream = 0x53414d50;  // "SAMP"
constexpr std::uint64_t kPickStream = 0x5049434b;    // "PICK": which free block a worker takes
constexpr std::uint64_t kInitStream = 0x494e4954;    // "INIT"
constexpr std::uint64_t kRowStream = 0x524f5753;     // "ROWS": doc permutation of the grid

/// What the blocks of each sweep of a span add up to, for the sweep's metrics: tokens sampled
/// and the staleness of the topic-total copies folded in. Also guards the shared topic totals
/// while blocks copy them and fold into them. Thread-safe.
class SweepTally {
  public:
    explicit SweepTally(std::uint32_t sweeps)
        : sampled_(sweeps, 0), staleness_(sweeps, 0.0), merges_(sweeps, 0) {}

    /// A block starts: its copies `local` and `base` take the current `totals`.
    void take(const std::vector<TotalCount>& totals, std::vector<TotalCount>& local,
              std::vector<TotalCount>& base) {
        std::lock_guard lock(mutex_);
        std::copy(totals.begin(), totals.end(), local.begin());
        std::copy(totals.begin(), totals.end(), base.begin());
    }
    /// A block of sweep s ends, having sampled n tokens: folds its moves into `totals`.
    void fold(std::vector<TotalCount>& totals, const std::vector<TotalCount>& local,
              const std::vector<TotalCount>& base, std::uint32_t s, std::uint64_t n) {
        // Exact: every token move of the block is in local - base. The staleness is STRADS'
        // ‖ñ − n‖₁ of this copy: what the other workers folded in meanwhile.
        std::lock_guard lock(mutex_);
        double err = 0;
        for (std::size_t k = 0; k < totals.size(); ++k) {
            totals[k] += local[k] - base[k];
            err += std::abs(static_cast<double>(local[k] - totals[k]));
        }
        sampled_[s] += n;
        staleness_[s] += err;
        ++merges_[s];
    }
    std::uint64_t sampled(std::uint32_t s) const {
        std::lock_guard lock(mutex_);
        return sampled_[s];
    }
    /// STRADS Δ_t of sweep s: the mean staleness per fold, per token.
    double s_error(std::uint32_t s, std::uint64_t num_tokens) const {
        std::lock_guard lock(mutex_);
        return merges_[s] ? staleness_[s] / (static_cast<double>(merges_[s]) * num_tokens) : 0.0;
    }

  private:
    mutable std::mutex mutex_;
    std::vector<std::uint64_t> sampled_;
    std::vector<double> staleness_;
    std::vector<std::uint32_t> merges_;
};

}  // namespace

train::RecordSchema record_schema() {
    train::RecordSchema s;
    s.count_key = "tokens_sampled";
    s.rate_key = "tokens_per_s";
    s.rate_unit = "tok/s";
    s.headline_key = "loglik_per_token";
    s.headline_label = "loglik/token";
    return s;
}

void add_loglik(train::Record& r, const LogLikelihood& ll, std::uint64_t num_tokens) {
    const double n = static_cast<double>(std::max<std::uint64_t>(num_tokens, 1));
    r.set("loglik_word", ll.loglik_word);
    r.set("loglik", ll.loglik);
    r.set("loglik_word_per_token", ll.loglik_word / n);
    r.set("loglik_per_token", ll.loglik / n);
}

void TrainOptions::validate() const {
    params.validate();
    if (blocks < 0) throw ConfigError("--blocks", "must be 0 (automatic) or at least 1");
    if (blocks > 4096) throw ConfigError("--blocks", "at most 4096 blocks per side");
}

Trainer::Trainer(const core::Corpus& corpus, const TrainOptions& options, sched::Runtime& runtime)
    : options_(options),
      runtime_(runtime),
      num_words_(corpus.num_words()),
      num_tokens_(corpus.num_tokens()),
      doc_labels_(corpus.doc_labels().begin(), corpus.doc_labels().end()),
      alpha_(options.params.topic_alphas()),
      likelihood_(options.params, std::max<std::uint32_t>(corpus.num_words(), 1)) {
    options_.validate();
    if (corpus.num_words() == 0 || corpus.num_tokens() == 0)
        throw ConfigError("--corpus", "the corpus has no tokens to train on");
    const int threads = runtime_.threads();
    side_ = options_.blocks > 0      ? options_.blocks
            : options_.deterministic ? TrainOptions::kDeterministicBlocks
                                     : sched::default_grid_side(threads);
    const std::uint32_t k_count = options_.params.num_topics;

    // The grid: docs in a random permutation cut into equal-token groups, words greedily by
    // frequency (ARCHITECTURE.md, step 2).
    std::vector<std::uint64_t> doc_len(corpus.num_docs());
    for (DocId d = 0; d < corpus.num_docs(); ++d) doc_len[d] = corpus.doc_length(d);
    const auto freq = corpus.word_frequencies();
    const std::vector<std::uint64_t> word_w(freq.begin(), freq.end());
    const auto rows =
        sched::partition_rows(doc_len, side_, Rng::from({options_.seed, kRowStream}).next());
    const auto cols = sched::partition_cols_greedy(word_w, side_);
    blocks_ = build_blocks(corpus.doc_offsets(), corpus.word_ids(), rows.group_of, cols.group_of,
                           static_cast<std::uint32_t>(side_));
    init_topics(blocks_, k_count, Rng::from({options_.seed, kInitStream}).next());
    rebuild_tables();

    const std::size_t copies = options_.deterministic ? static_cast<std::size_t>(side_)
                                                      : static_cast<std::size_t>(threads);
    local_totals_.assign(copies, std::vector<TotalCount>(k_count, 0));
    make_samplers();
}

void Trainer::rebuild_tables() {
    const std::uint32_t k_count = options_.params.num_topics;
    doc_topic_ = DocTopicTable::from_blocks(k_count, static_cast<std::uint32_t>(doc_labels_.size()),
                                            blocks_);
    word_topic_ = WordTopicTable::from_blocks(k_count, num_words_, blocks_);
    totals_ = count_topic_totals(blocks_, k_count);
    if (options_.deterministic) canonicalize_rows();
}

void Trainer::make_samplers() {
    const LdaParams p = options_.params.with_alphas(alpha_);
    samplers_.clear();
    for (int w = 0; w < runtime_.threads(); ++w)
        samplers_.push_back(std::make_unique<SparseLdaSampler>(p, num_words_));
    likelihood_ = Likelihood(p, num_words_);
}

void Trainer::canonicalize_rows() {
    // The sampler walks sparse rows in storage order, and that order depends on the history of
    // increments. Deterministic mode puts every row in a canonical order (doc rows: count
    // descending, then topic; sparse word rows: topic) at the end of every sweep, so that the
    // state is a function of the assignments alone and a run resumed from a checkpoint continues
    // exactly as the uninterrupted run.
    runtime_.parallel_for(0, doc_topic_.num_docs(), [&](std::int64_t lo, std::int64_t hi) {
        for (auto d = lo; d < hi; ++d) {
            TopicCount* h = doc_topic_.header(static_cast<DocId>(d));
            std::sort(h + 1, h + 1 + h->topic, [](const TopicCount& a, const TopicCount& b) {
                return a.count != b.count ? a.count > b.count : a.topic < b.topic;
            });
        }
    });
    const std::uint32_t k_count = options_.params.num_topics;
    runtime_.parallel_for(0, num_words_, [&](std::int64_t lo, std::int64_t hi) {
        std::vector<Count> dense(k_count, 0);
        std::vector<TopicId> topics;
        for (auto w64 = lo; w64 < hi; ++w64) {
            const auto w = static_cast<WordId>(w64);
            if (word_topic_.is_dense(w)) continue;
            topics.clear();
            for (const TopicCount& e : word_topic_.sparse_row(w)) {
                topics.push_back(e.topic);
                dense[e.topic] = e.count;
            }
            std::sort(topics.begin(), topics.end());
            word_topic_.store_sparse_row(w, topics, dense.data());
            for (TopicId k : topics) dense[k] = 0;
        }
    });
}

std::uint64_t Trainer::estimate_memory(const core::Corpus& corpus, const TrainOptions& options,
                                       int threads) {
    const std::uint64_t k = options.params.num_topics;
    const std::uint64_t n = corpus.num_tokens();
    std::uint64_t bytes = 0;
    // Blocks: doc and topic per token, plus the word list and offsets (at most one entry per
    // token), and the temporary N * 4 bytes of build_blocks.
    bytes += n * (sizeof(DocId) + sizeof(TopicId)) + n * 4;
    bytes += std::min<std::uint64_t>(n, static_cast<std::uint64_t>(corpus.num_words()) * 64) * 12;
    bytes += estimate_doc_rows(corpus, options.params.num_topics);
    // Word-topic rows: dense 4K bytes, or sparse 8 * (1 + min(K, f)), whichever the table picks.
    const auto freq = corpus.word_frequencies();
    const std::vector<std::uint64_t> f(freq.begin(), freq.end());
    bytes += WordTopicTable::bytes_for(options.params.num_topics, f);
    // Topic totals: the global copy, one per worker or per block, and sampler scratch.
    const std::uint64_t side = options.blocks > 0 ? options.blocks : 2 * threads;
    bytes += k * 8 * (1 + std::max<std::uint64_t>(threads, side)) + k * 40 * threads;
    return bytes;
}

std::uint64_t Trainer::estimate_doc_rows(const core::Corpus& corpus, std::uint32_t num_topics) {
    // 8 bytes per (topic, count) slot, capacity min(K, length), 64-byte lines.
    std::uint64_t bytes = 0;
    for (DocId d = 0; d < corpus.num_docs(); ++d) {
        const std::uint64_t cells =
            8 * (1 + std::min<std::uint64_t>(num_topics, corpus.doc_length(d)));
        bytes += (cells + 63) / 64 * 64 + 8;
    }
    return bytes;
}

void Trainer::restore(const std::vector<std::vector<TopicId>>& block_topics,
                      std::uint32_t iterations_done, const std::string& source) {
    if (block_topics.size() != blocks_.size())
        throw InputError(source, fmt::format("has {} blocks, this run has {}", block_topics.size(),
                                             blocks_.size()));
    const std::uint32_t k_count = options_.params.num_topics;
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
        if (block_topics[b].size() != blocks_[b].topics.size())
            throw InputError(source, fmt::format("block {} has {} tokens, this run's has {}", b,
                                                 block_topics[b].size(), blocks_[b].topics.size()));
        for (TopicId k : block_topics[b])
            if (k >= k_count)
                throw InputError(source, fmt::format("topic {} out of range [0, {})", k, k_count));
    }
    for (std::size_t b = 0; b < blocks_.size(); ++b) blocks_[b].topics = block_topics[b];
    rebuild_tables();
    iterations_done_ = iterations_done;
}

void Trainer::set_alpha(std::vector<double> alpha) {
    if (alpha.size() != options_.params.num_topics)
        throw ConfigError("--alpha", "needs one value per topic");
    for (double a : alpha)
        if (!(a > 0)) throw ConfigError("--alpha", "values must be positive");
    alpha_ = std::move(alpha);
    make_samplers();
}

Trainer::~Trainer() = default;

train::Record Trainer::iterate() { return iterate_span(1, {}); }

train::Record Trainer::iterate_span(std::uint32_t sweeps,
                                    const std::function<void(train::Record&)>& on_sweep) {
    ROTOR_ASSERT(sweeps >= 1, "iterate_span needs at least one sweep");
    if (!options_.deterministic) return sweep_dynamic(sweeps, on_sweep);
    for (std::uint32_t s = 1;; ++s) {
        train::Record m;
        m.iter = ++iterations_done_;
        sweep_deterministic(m);
        m.finish(num_tokens_);
        if (s == sweeps) return m;
        if (on_sweep) on_sweep(m);
    }
}

double Trainer::reconcile_totals() {
    // Exact reconciliation: every token move is recorded in exactly one copy, so
    // n_k(new) = n_k(old) + Σ_p (ñ^p_k − n_k(old)).
    const std::uint32_t k_count = options_.params.num_topics;
    std::vector<TotalCount> next = totals_;
    for (const auto& local : local_totals_)
        for (std::uint32_t k = 0; k < k_count; ++k) next[k] += local[k] - totals_[k];
    // STRADS eq. 1: Σ_p ‖ñ^p − n‖₁, the staleness of the copies (the caller divides by P·N).
    double err = 0;
    for (const auto& local : local_totals_)
        for (std::uint32_t k = 0; k < k_count; ++k) err += std::abs(local[k] - next[k]);
    totals_ = std::move(next);
    return err;
}

train::Record Trainer::sweep_dynamic(std::uint32_t sweeps,
                                     const std::function<void(train::Record&)>& on_sweep) {
    // Sweeps back to back (BlockScheduler::reset_sweeps): a worker that finds no free block of
    // the slowest sweep starts one of the next, so the tail of a sweep costs no idle time. Sweep
    // s ends when its last block is released; its metrics cover the wall time since the previous
    // sweep ended, with the other workers' time counted up to that moment (the block loop's
    // on_sweep). Each block samples against a copy of the topic totals taken when it starts; its
    // changes are folded exactly into totals_ when it ends, before the block is released.
    const int threads = runtime_.threads();
    const std::uint32_t first = iterations_done_ + 1;
    sched::BlockScheduler scheduler(side_);
    base_totals_.assign(static_cast<std::size_t>(threads), totals_);
    for (auto& local : local_totals_) local = totals_;
    SweepTally tally(sweeps);

    const auto kernel = [&](int w, const sched::Job& job, const std::atomic<bool>&) {
        const auto s = static_cast<std::uint32_t>(job.sweep);
        const std::uint64_t id = static_cast<std::uint64_t>(job.block.row) * side_ + job.block.col;
        std::vector<TotalCount>& local = local_totals_[w];
        tally.take(totals_, local, base_totals_[w]);
        Rng rng = Rng::from({options_.seed, kSampleStream, first + s, id});
        const std::uint64_t n = samplers_[w]->sample_block(
            blocks_[id], doc_topic_, word_topic_, std::span<TotalCount>(local), rng, nullptr);
        tally.fold(totals_, local, base_totals_[w], s, n);
        return sched::BlockResult{n, true};
    };
    // The loop closes sweeps in order, one at a time.
    train::Record last;
    const auto close_sweep = [&](int sweep, const sched::IterationTimes& times) {
        const auto c = static_cast<std::uint32_t>(sweep);
        train::Record m;
        m.iter = first + c;
        m.set_times(times);
        m.processed = tally.sampled(c);
        m.set("s_error", tally.s_error(c, num_tokens_));
        m.finish(num_tokens_);
        iterations_done_ = m.iter;
        if (c + 1 == sweeps) {
            last = std::move(m);
        } else if (on_sweep) {
            on_sweep(m);
        }
    };

    scheduler.reset_sweeps(static_cast<int>(sweeps));
    sched::DynamicLoopOptions loop;
    loop.pick_seed = {options_.seed, kPickStream, first};
    loop.record = options_.record_schedule;
    loop.origin = &since_start_;
    const sched::LoopResult result =
        sched::run_dynamic_loop(runtime_, scheduler, loop, kernel, close_sweep);
    ROTOR_ASSERT(result.sweeps_completed == static_cast<int>(sweeps),
                 "a sweep ended without being closed");
    for (const sched::ScheduleEvent& e : result.events)
        schedule_.push_back({first + static_cast<std::uint32_t>(e.sweep), e.worker, e.block.row,
                             e.block.col, e.start_s, e.end_s});
    return last;
}

void Trainer::sweep_deterministic(train::Record& m) {
    // Diagonal sweeps: L rounds of L blocks that share no row or column. Every block of a round
    // starts from the same snapshot of n_k and its changes are summed at the end of the round,
    // so the result does not depend on which worker runs which block, nor in which order.
    const std::uint64_t iter = m.iter;
    double err = 0;
    for (auto& local : local_totals_) local = totals_;
    const auto kernel = [&](int w, const sched::DiagonalJob& job) {
        const std::uint64_t id = static_cast<std::uint64_t>(job.block.row) * side_ + job.block.col;
        Rng rng = Rng::from({options_.seed, kSampleStream, iter, id});
        return samplers_[w]->sample_block(blocks_[id], doc_topic_, word_topic_,
                                          local_totals_[job.index], rng, nullptr);
    };
    const auto after_round = [&](int r) {
        err += reconcile_totals();
        if (r + 1 < side_) {
            for (auto& local : local_totals_) local = totals_;
        } else {
            canonicalize_rows();
        }
    };
    const sched::DiagonalResult result =
        sched::run_diagonal_loop(runtime_, sched::DiagonalSchedule(side_), kernel, after_round,
                                 options_.record_schedule, &since_start_);
    for (const sched::ScheduleEvent& e : result.events)
        schedule_.push_back({m.iter, e.worker, e.block.row, e.block.col, e.start_s, e.end_s});
    m.set("s_error", err / (static_cast<double>(side_) * side_ * num_tokens_));
    m.processed = std::accumulate(result.units.begin(), result.units.end(), std::uint64_t{0});
    m.set_times(result.times);
}

LogLikelihood Trainer::evaluate() const {
    const double words =
        detail::ordered_parallel_sum(runtime_, num_words_, [&](std::uint64_t b, std::uint64_t e) {
            return likelihood_.word_part(word_topic_, static_cast<WordId>(b),
                                         static_cast<WordId>(e));
        });
    const double docs = detail::ordered_parallel_sum(
        runtime_, doc_topic_.num_docs(), [&](std::uint64_t b, std::uint64_t e) {
            return likelihood_.doc_part(doc_topic_, static_cast<DocId>(b), static_cast<DocId>(e));
        });
    return likelihood_.combine(words, docs, totals_);
}

void Trainer::train(train::Reporter& reporter, const train::Hooks& hooks,
                    std::uint32_t last_iteration) {
    const std::uint32_t last =
        last_iteration > 0 ? last_iteration : iterations_done_ + options_.iterations;
    reporter.on_start(fmt::format(
        "{} tokens, {} docs, {} words; K = {}, alpha = {:g}, beta = {:g}; {} threads, {}x{} "
        "blocks{}; {}",
        num_tokens_, doc_labels_.size(), num_words_, options_.params.num_topics,
        options_.params.resolved_alpha(), options_.params.beta, runtime_.threads(), side_, side_,
        options_.deterministic ? ", deterministic" : "", runtime_.status()));
    train::run_iterations(*this, {.last = last, .eval_every = options_.eval_every, .report = true},
                          reporter, hooks);
}

LdaModel Trainer::to_model(std::vector<std::string> vocab, std::string corpus_path) const {
    LdaModel model;
    const std::uint32_t k_count = options_.params.num_topics;
    model.info.num_topics = k_count;
    model.info.alpha = alpha_;
    model.info.beta = options_.params.beta;
    model.info.num_words = num_words_;
    model.info.num_docs = doc_topic_.num_docs();
    model.info.num_tokens = num_tokens_;
    model.info.iterations = iterations_done_;
    model.info.seed = options_.seed;
    model.info.corpus = std::move(corpus_path);
    model.vocab = std::move(vocab);
    std::vector<std::pair<TopicId, Count>> row;
    for (WordId w = 0; w < num_words_; ++w) {
        row.clear();
        word_topic_.for_each_nonzero(w, [&](TopicId k, Count n) { row.emplace_back(k, n); });
        std::sort(row.begin(), row.end());
        model.word_topic.add_row(row);
    }
    for (DocId d = 0; d < doc_topic_.num_docs(); ++d) {
        row.clear();
        for (const TopicCount& e : doc_topic_.row(d)) row.emplace_back(e.topic, e.count);
        std::sort(row.begin(), row.end());
        model.doc_topic.add_row(row);
    }
    model.doc_labels = doc_labels_;
    model.topic_totals = totals_;
    return model;
}

}  // namespace rotor::lda
