// One SGD epoch with P > 1 ranks (sgd_trainer.h): W's rows stay, H's 2P slices rotate on the
// two-slot ring pipeline (HarpLDA+, Peng et al., VLDB 2017; NOMAD, Yun et al., VLDB 2014). Each
// rank runs its blocks of one held slice with the dynamic block loop while the other held slice
// travels; the HarpLDA+ timer stops every rank's round after the same budget, tuned on the
// allreduced processed ratio. The same rotation as LDA's word-topic slices
// (apps/lda/trainer_ring.cpp).
#include <algorithm>
#include <atomic>
#include <numeric>

#include <fmt/format.h>

#include "apps/mf/sgd_trainer.h"
#include "comm/collectives.h"
#include "comm/wire.h"
#include "core/base/error.h"
#include "core/base/timer.h"
#include "sched/block_loop.h"
#include "train/ring_iteration.h"

namespace rotor::mf::detail {
namespace {

/// First field of every slice message (u32), then the slice id, rows and K (u32 each), the rows
/// (rows x K floats, no length), then the biases and accumulators (vectors of floats).
constexpr std::uint32_t kSliceMagic = 0x4d465348;  // "MFSH"

}  // namespace

train::Record SgdTrainer::iterate_ring() {
    const std::uint32_t epoch = iterations_done_ + 1;
    Stopwatch wall;
    // The timer stops the round: sgd_block ends between ratings and the block stays not done;
    // its other ratings wait for the next epoch.
    train::RingIterationOptions ring;
    ring.cols_per_slice = cols_per_slice_;
    ring.pick_seed = {options_.seed, kSgdPickStream, epoch, static_cast<std::uint64_t>(rank())};
    ring.budget_s = timer_ ? timer_->round_budget() : 0.0;
    ring.record = options_.record_schedule;
    ring.origin = &since_start_;
    const auto kernel_for = [&](int slice) -> sched::BlockKernel {
        ROTOR_ASSERT(held_[static_cast<std::size_t>(slice)] != nullptr,
                     "computing on a slice this rank does not hold");
        return [this, slice](int, const sched::Job& job, const std::atomic<bool>& stop) {
            const std::size_t id = block_id(job.block.row, job.block.col);
            const std::uint64_t n = run_block(id, slice, &stop);
            return sched::BlockResult{n, n == block_size(id)};
        };
    };
    const train::RingIteration done = train::run_ring_iteration(
        comm_, runtime_, *scheduler_, ring,
        train::slice_ring_model(kernel_for, *this, &SgdTrainer::pack_slice,
                                &SgdTrainer::unpack_slice));
    keep_schedule(done.events, epoch);
    const sched::IterationTimes& times = done.times;
    const comm::RingStats& stats = done.ring;
    const std::uint64_t here = done.total_units();
    std::vector<std::int64_t> total{static_cast<std::int64_t>(here)};
    comm_.allreduce_sum(total);
    const auto processed = static_cast<std::uint64_t>(total[0]);
    const double ratio = static_cast<double>(processed) / static_cast<double>(nnz_);

    const double wall_s = wall.seconds();
    const train::RingRankTimes mine{
        .iteration_s = wall_s,
        .compute_s = done.compute_s,
        .comm_s = stats.comm_s,
        .wait_s = stats.wait_s,
        .effective_ratio = times.effective_ratio,
        .load_cv = times.load_cv,
        .overhead_ratio = wall_s > 0 ? std::clamp(1 - done.compute_s / wall_s, 0.0, 1.0) : 0,
        .processed_ratio =
            local_nnz_ ? static_cast<double>(here) / static_cast<double>(local_nnz_) : 1.0,
        .units = static_cast<double>(local_nnz_)};
    const std::vector<train::RingRankTimes> all = comm::allgather(comm_, mine, "sgd metrics");
    if (timer_) {
        // Every rank feeds the same allreduced ratio and gathered speeds, so every rank keeps
        // the same budget and decision.
        std::vector<std::uint64_t> units;
        std::vector<double> speeds;
        for (const train::RingRankTimes& t : all) {
            units.push_back(static_cast<std::uint64_t>(t.units));
            speeds.push_back(t.compute_s > 0 ? t.processed_ratio * t.units / t.compute_s : 0.0);
        }
        timer_->after_iteration(ring.budget_s, ratio, units, speeds, num_slices());
    }

    train::Record m;
    m.iter = epoch;
    m.set_times(times);  // this rank's workers; the ratios below are every rank's means
    train::add_ring_ranks(m, all, timer_ ? timer_->round_budget() : 0.0);
    m.processed = processed;
    m.finish(nnz_);
    iterations_done_ = epoch;
    return m;
}

std::vector<std::byte> SgdTrainer::pack_slice(int slice) {
    auto& held = held_[static_cast<std::size_t>(slice)];
    ROTOR_ASSERT(held != nullptr, "packing a slice this rank does not hold");
    const std::span<const float> values = held->h.values();
    comm::WireWriter message(32 + 4 * (values.size() + 4 * held->h.rows()));
    message.put(kSliceMagic);
    message.put(static_cast<std::uint32_t>(slice));
    message.put(held->h.rows());
    message.put(k_);
    message.put_array(values);
    message.put(held->state.bias);
    message.put(held->state.factor_gsum);
    message.put(held->state.bias_gsum);
    // The rows now travel: this rank no longer holds them.
    held.reset();
    return message.take();
}

void SgdTrainer::unpack_slice(int slice, std::span<const std::byte> bytes) {
    comm::WireReader message(bytes, "H slice message", rank());
    message.expect_u32(kSliceMagic, "magic");
    const auto got = message.get<std::uint32_t>();
    if (got != static_cast<std::uint32_t>(slice))
        message.fail(fmt::format("expected slice {}, received slice {}", slice, got));
    const auto rows = message.get<std::uint32_t>();
    const auto k = message.get<std::uint32_t>();
    const std::size_t want = slice_items_[static_cast<std::size_t>(slice)].size();
    if (rows != want || k != k_)
        message.fail(fmt::format("slice {} is {} x {}, not {} x {}", slice, rows, k, want, k_));
    const bool bias = options_.objective.bias;
    auto held = std::make_unique<HSlice>(rows, k_, bias);
    message.get_array(held->h.values());
    message.get(held->state.bias);
    message.get(held->state.factor_gsum);
    message.get(held->state.bias_gsum);
    message.finish();
    const std::size_t nb = bias ? rows : 0;
    if (held->state.factor_gsum.size() != rows || held->state.bias.size() != nb ||
        held->state.bias_gsum.size() != nb)
        message.fail(fmt::format("slice {}: biases or accumulators of the wrong size", slice));
    held_[static_cast<std::size_t>(slice)] = std::move(held);
}

}  // namespace rotor::mf::detail
