// One iteration with P > 1 ranks: the ring pipeline over the 2P word-topic slices (each rank
// samples every slice once, with the block loop, while the other held slice travels), the timer,
// and the exact reconciliation of the topic totals across every worker of every rank.
#include "apps/lda/trainer.h"

#include <algorithm>
#include <atomic>
#include <numeric>

#include <fmt/format.h>

#include "apps/lda/messages.h"
#include "apps/lda/seed_streams.h"
#include "comm/agreed.h"
#include "comm/collectives.h"
#include "comm/wire.h"
#include "core/base/rng.h"
#include "core/base/timer.h"
#include "core/lda/inference.h"
#include "core/lda/sparse_lda_sampler.h"
#include "sched/block_loop.h"
#include "train/ring_iteration.h"

namespace rotor::lda {

using detail::kRingPickStream;
using detail::kRingSampleStream;

train::Record Trainer::iterate_ring() {
    const std::uint32_t iter = iterations_done_ + 1;
    if (dist_.on_iteration_start) dist_.on_iteration_start(rank_, iter);
    Stopwatch wall;
    double comm_s = 0;
    double rebalance_s = 0;
    std::uint64_t moved_out = 0;
    if (!pending_moves_.empty()) {
        // Documents move before any slice does: every word row is at home and n_k is exact.
        Stopwatch t;
        const std::vector<DocTransfer> plan = std::move(pending_moves_);
        pending_moves_.clear();
        moved_out = move_documents(plan);
        rebalance_s = t.seconds();
        comm_s += rebalance_s;
    }
    for (auto& local : local_totals_) local = totals_;
    prepare_index();
    peak_model_bytes_ = model_bytes();

    // The pipelined two-slice ring of docs/comm.md: slot 0 travels while slot 1 is sampled and
    // the other way round. The timer stops the round on this rank: the flag ends the block being
    // sampled (between words), and the block stays not done; unreached tokens wait for a later
    // visit. --init sequential: the first iteration is not timed, so that it draws every token.
    train::RingIterationOptions ring;
    ring.cols_per_slice = cols_per_slice_;
    ring.pick_seed = {options_.seed, kRingPickStream, iter, static_cast<std::uint64_t>(rank_)};
    ring.budget_s = timer_ && !draws_first_topics(iter) ? timer_->round_budget() : 0.0;
    if (rank_ == dist_.straggler_rank) ring.straggler_factor = dist_.straggler_factor;
    ring.record = options_.record_schedule;
    ring.origin = &since_start_;
    const auto kernel_for = [&](int slice) -> sched::BlockKernel {
        ROTOR_ASSERT(held_[slice] != nullptr, "sampling a slice this rank does not hold");
        WordTopicTable& word_topic = *held_[slice];
        return [this, iter, &word_topic](int w, const sched::Job& job,
                                         const std::atomic<bool>& stop) {
            const std::size_t id = static_cast<std::size_t>(job.block.row) * side_ + job.block.col;
            Rng rng = Rng::from(
                {options_.seed, kRingSampleStream, iter, static_cast<std::uint64_t>(rank_), id});
            const std::uint64_t n =
                sample_block(w, iter, blocks_[id], word_topic,
                             std::span<TotalCount>(local_totals_[w]), rng, &stop);
            return sched::BlockResult{n, n == blocks_[id].num_tokens()};
        };
    };
    const train::RingIteration done = train::run_ring_iteration(
        comm_, runtime_, *scheduler_, ring,
        train::slice_ring_model(kernel_for, *this, &Trainer::pack_slice, &Trainer::unpack_slice));
    keep_schedule(done.events, iter);
    const double wait_s = done.ring.wait_s;
    comm_s += done.ring.comm_s;

    Stopwatch coll;
    const std::uint64_t sampled_here = done.total_units();
    const Reconciled all = reconcile_totals(sampled_here);
    comm_s += coll.seconds();

    RankMetrics mine;
    mine.tokens = local_tokens_;
    mine.tokens_sampled = sampled_here;
    mine.processed_ratio =
        local_tokens_ ? static_cast<double>(sampled_here) / static_cast<double>(local_tokens_) : 1;
    mine.iteration_s = wall.seconds();
    mine.compute_s = done.compute_s;
    mine.wait_s = wait_s;
    mine.comm_s = comm_s;
    mine.overhead_ratio =
        mine.iteration_s > 0 ? std::clamp(1 - done.compute_s / mine.iteration_s, 0.0, 1.0) : 0;
    mine.effective_ratio = done.times.effective_ratio;
    mine.load_cv = done.times.load_cv;
    mine.rebalance_s = rebalance_s;
    mine.tokens_moved_out = moved_out;
    mine.model_bytes = peak_model_bytes_;
    rank_metrics_ = comm::allgather(comm_, mine, "metrics");
    iterations_done_ = iter;
    std::uint64_t moved_all = 0;
    double rebalance_max = 0;
    for (const RankMetrics& r : rank_metrics_) {
        moved_all += r.tokens_moved_out;
        rebalance_max = std::max(rebalance_max, r.rebalance_s);
    }
    if (moved_all > 0) last_move_s_ = rebalance_max;
    if (dist_.rebalance && ranks_ > 1) pending_moves_ = decide_rebalance(moved_all > 0);
    if (timer_) {
        // Every rank feeds the same allreduced ratio and gathered speeds, so every rank keeps the
        // same budget and decision. An untimed iteration (the first of --init sequential, or
        // ranks of equal speed) says nothing about the budget.
        std::vector<std::uint64_t> tokens;
        std::vector<double> speeds;
        for (const RankMetrics& m : rank_metrics_) {
            tokens.push_back(m.tokens);
            speeds.push_back(m.compute_s > 0 ? static_cast<double>(m.tokens_sampled) / m.compute_s
                                             : 0.0);
        }
        timer_->after_iteration(ring.budget_s, all.ratio, tokens, speeds, num_slices());
    }

    train::Record r = detail::summarize_ranks(rank_metrics_, iter, all.sampled, all.ratio,
                                              all.s_error, timer_ ? timer_->round_budget() : 0.0);
    label_sampler(r);  // this rank's kernels (rank 0's are reported)
    return r;
}

Trainer::Reconciled Trainer::reconcile_totals(std::uint64_t sampled_here) {
    const std::uint32_t k_count = options_.params.num_topics;
    // Exact reconciliation across workers and ranks: n_k(new) = n_k(old) + Σ_{ranks, workers}
    // (ñ_k − n_k(old)). The token count rides along in the same allreduce.
    std::vector<std::int64_t> delta(k_count + 1, 0);
    add_copy_deltas(delta);
    delta[k_count] = static_cast<std::int64_t>(sampled_here);
    comm_.allreduce_sum(delta);
    std::vector<TotalCount> next = totals_;
    for (std::uint32_t k = 0; k < k_count; ++k) next[k] += delta[k];
    // STRADS eq. 1 over every worker of every rank: Δ_t = Σ_p ‖ñ^p − n‖₁ / (P·N).
    std::vector<double> err{copy_staleness(next), static_cast<double>(runtime_.threads())};
    comm_.allreduce_sum(err);
    totals_ = std::move(next);
    Reconciled out;
    out.sampled = static_cast<std::uint64_t>(delta[k_count]);
    out.ratio =
        num_tokens_ ? static_cast<double>(out.sampled) / static_cast<double>(num_tokens_) : 1.0;
    out.s_error = err[0] / (err[1] * static_cast<double>(num_tokens_));
    return out;
}

}  // namespace rotor::lda
