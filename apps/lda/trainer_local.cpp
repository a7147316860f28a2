// One process's iterations (P = 1): sweeps over the grid run back to back between sync points,
// every block sampling against a copy of the topic totals taken at its start and folded exactly
// into them at its end; or, with --deterministic, diagonal rounds whose blocks share one snapshot
// of the totals, so that the model does not depend on the thread count.
#include "apps/lda/trainer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <numeric>

#include <fmt/format.h>

#include "apps/lda/sampler_policy.h"
#include "apps/lda/seed_streams.h"
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

using detail::kLocalPickStream;
using detail::kLocalSampleStream;

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
            if (held_[0]->is_dense(w)) continue;
            topics.clear();
            for (const TopicCount& e : held_[0]->sparse_row(w)) {
                topics.push_back(e.topic);
                dense[e.topic] = e.count;
            }
            std::sort(topics.begin(), topics.end());
            held_[0]->store_sparse_row(w, topics, dense.data());
            for (TopicId k : topics) dense[k] = 0;
        }
    });
}

void Trainer::add_copy_deltas(std::span<std::int64_t> delta) const {
    const std::uint32_t k_count = options_.params.num_topics;
    for (const auto& local : local_totals_)
        for (std::uint32_t k = 0; k < k_count; ++k) delta[k] += local[k] - totals_[k];
}

double Trainer::copy_staleness(const std::vector<TotalCount>& next) const {
    const std::uint32_t k_count = options_.params.num_topics;
    double err = 0;
    for (const auto& local : local_totals_)
        for (std::uint32_t k = 0; k < k_count; ++k)
            err += static_cast<double>(std::abs(local[k] - next[k]));
    return err;
}

void Trainer::keep_schedule(const std::vector<sched::ScheduleEvent>& events,
                            std::uint32_t first_iter) {
    for (const sched::ScheduleEvent& e : events)
        schedule_.push_back({first_iter + static_cast<std::uint32_t>(e.sweep), e.worker,
                             e.block.row, e.block.col, e.start_s, e.end_s});
}

double Trainer::reconcile_copies() {
    // Exact reconciliation: every token move is recorded in exactly one copy, so
    // n_k(new) = n_k(old) + Σ_p (ñ^p_k − n_k(old)).
    std::vector<std::int64_t> delta(totals_.size(), 0);
    add_copy_deltas(delta);
    std::vector<TotalCount> next = totals_;
    for (std::size_t k = 0; k < next.size(); ++k) next[k] += delta[k];
    // STRADS eq. 1: Σ_p ‖ñ^p − n‖₁, the staleness of the copies (the caller divides by P·N).
    const double err = copy_staleness(next);
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
    prepare_index();

    const auto kernel = [&](int w, const sched::Job& job, const std::atomic<bool>&) {
        const auto s = static_cast<std::uint32_t>(job.sweep);
        const std::uint64_t id = static_cast<std::uint64_t>(job.block.row) * side_ + job.block.col;
        std::vector<TotalCount>& local = local_totals_[w];
        tally.take(totals_, local, base_totals_[w]);
        Rng rng = Rng::from({options_.seed, kLocalSampleStream, first + s, id});
        const std::uint64_t n = sample_block(w, first + s, blocks_[id], *held_[0],
                                             std::span<TotalCount>(local), rng, nullptr);
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
        label_sampler(m);
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
    loop.pick_seed = {options_.seed, kLocalPickStream, first};
    loop.record = options_.record_schedule;
    loop.origin = &since_start_;
    const sched::LoopResult result =
        sched::run_dynamic_loop(runtime_, scheduler, loop, kernel, close_sweep);
    ROTOR_ASSERT(result.sweeps_completed == static_cast<int>(sweeps),
                 "a sweep ended without being closed");
    keep_schedule(result.events, first);
    return last;
}

void Trainer::sweep_deterministic(train::Record& m) {
    // Diagonal sweeps: L rounds of L blocks that share no row or column. Every block of a round
    // starts from the same snapshot of n_k and its changes are summed at the end of the round,
    // so the result does not depend on which worker runs which block, nor in which order.
    const std::uint64_t iter = m.iter;
    double err = 0;
    for (auto& local : local_totals_) local = totals_;
    if (options_.sampler == SamplerKind::kAuto && policy_->index_in_use()) {
        // A statistic of the state, not a timing: the same model at any thread count.
        policy_->plan_iteration(mean_doc_topics(false), mean_doc_topics(true));
    }
    prepare_index();
    const auto kernel = [&](int w, const sched::DiagonalJob& job) {
        const std::uint64_t id = static_cast<std::uint64_t>(job.block.row) * side_ + job.block.col;
        Rng rng = Rng::from({options_.seed, kLocalSampleStream, iter, id});
        return sample_block(w, m.iter, blocks_[id], *held_[0], local_totals_[job.index], rng,
                            nullptr);
    };
    const auto after_round = [&](int r) {
        err += reconcile_copies();
        if (r + 1 < side_) {
            for (auto& local : local_totals_) local = totals_;
        } else {
            canonicalize_rows();
        }
    };
    const sched::DiagonalResult result =
        sched::run_diagonal_loop(runtime_, sched::DiagonalSchedule(side_), kernel, after_round,
                                 options_.record_schedule, &since_start_);
    keep_schedule(result.events, m.iter);
    m.set("s_error", err / (static_cast<double>(side_) * side_ * num_tokens_));
    m.processed = std::accumulate(result.units.begin(), result.units.end(), std::uint64_t{0});
    m.set_times(result.times);
    label_sampler(m);
}

train::Record Trainer::iterate() { return iterate_span(1, {}); }

train::Record Trainer::iterate_span(std::uint32_t sweeps,
                                    const std::function<void(train::Record&)>& on_sweep) {
    ROTOR_ASSERT(sweeps >= 1, "iterate_span needs at least one sweep");
    if (!draws_first_topics(iterations_done_ + 1)) init_samplers_.clear();  // no worker runs
    for (std::uint32_t s = 1;; ++s) {
        train::Record m;
        if (ranks_ > 1) {
            m = iterate_ring();
        } else if (!options_.deterministic) {
            if (draws_first_topics(iterations_done_ + 1) && sweeps > 1 && policy_->index_in_use()) {
                // The sequential first sweep runs alone when MhSampler may sample sweep 2: its
                // doc proposals must not read a token that another block has yet to draw.
                train::Record first = sweep_dynamic(1, {});
                if (on_sweep) on_sweep(first);
                return sweep_dynamic(sweeps - 1, on_sweep);
            }
            return sweep_dynamic(sweeps, on_sweep);
        } else {
            m.iter = ++iterations_done_;
            sweep_deterministic(m);
            m.finish(num_tokens_);
        }
        if (s == sweeps) return m;
        if (on_sweep) on_sweep(m);
    }
}

}  // namespace rotor::lda
