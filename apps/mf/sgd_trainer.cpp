// The SGD trainer (sgd_trainer.h): layout, one rank's epochs on the dynamic block loop or on
// diagonal rounds, evaluation, the gathered model and state, restore. The ring of H's slices for
// P > 1 ranks is in sgd_ring.cpp.
#include "apps/mf/sgd_trainer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "comm/collectives.h"
#include "comm/wire.h"
#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/mf/objective.h"
#include "sched/block_grid.h"
#include "sched/block_loop.h"
#include "sched/block_scheduler.h"
#include "sched/runtime.h"

namespace rotor::mf {
namespace detail {
namespace {

/// The grid side with --deterministic on one rank: fixed, so that it does not depend on the
/// thread count.
constexpr int kDeterministicBlocks = 16;
/// The least grid side per slice by default (choose_grid).
constexpr int kMinBlocks = 8;
constexpr std::uint32_t kNoRow = std::numeric_limits<std::uint32_t>::max();

/// Appends the rows, biases and accumulators of `h` and `state` to a message.
void put_rows(comm::WireWriter& w, const Factors& h, const SgdState& state) {
    w.put_length(h.values().size());
    w.put_array(h.values());
    w.put(state.bias);
    w.put(state.factor_gsum);
    w.put(state.bias_gsum);
}

/// Reads put_rows' fields for `ids` (global rows of `out`, in order) into `out`, each row
/// straight into its place (no copy of the message's values).
void read_rows(comm::WireReader& r, std::span<const std::uint32_t> ids, std::uint32_t k, bool bias,
               WholeH& out) {
    const std::size_t n = ids.size();
    if (r.get_length(sizeof(float)) != n * k)
        r.fail(fmt::format("factor rows of the wrong size for {} rows of K = {}", n, k));
    for (std::size_t i = 0; i < n; ++i) r.get_array(out.h.row(ids[i]));
    const auto b = r.get<std::vector<float>>();
    const auto g = r.get<std::vector<float>>();
    const auto bg = r.get<std::vector<float>>();
    if (g.size() != n || b.size() != (bias ? n : 0) || bg.size() != b.size())
        r.fail(fmt::format("biases or accumulators of the wrong size for {} rows", n));
    for (std::size_t i = 0; i < n; ++i) {
        out.gsum[ids[i]] = g[i];
        if (bias) {
            out.bias[ids[i]] = b[i];
            out.bias_gsum[ids[i]] = bg[i];
        }
    }
}

/// Copies local row i of `h` and `state` to global row ids[i] of `out`.
void scatter_rows(const Factors& h, const SgdState& state, std::span<const std::uint32_t> ids,
                  WholeH& out) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto r = static_cast<std::uint32_t>(i);
        std::copy_n(h.row(r).begin(), h.k(), out.h.row(ids[i]).begin());
        out.gsum[ids[i]] = state.factor_gsum[i];
        if (!state.bias.empty()) {
            out.bias[ids[i]] = state.bias[i];
            out.bias_gsum[ids[i]] = state.bias_gsum[i];
        }
    }
}

WholeH empty_whole(std::uint32_t rows, std::uint32_t k, bool bias) {
    WholeH w;
    w.h = Factors(rows, k);
    w.gsum.assign(rows, 0.0f);
    if (bias) {
        w.bias.assign(rows, 0.0f);
        w.bias_gsum.assign(rows, 0.0f);
    }
    return w;
}

}  // namespace

SgdTrainer::SgdTrainer(const TrainerInputs& in)
    : Trainer(in.comm.rank(), in.comm.size()),
      train_(in.train),
      releasable_(in.releasable),
      test_(in.test),
      options_(in.options),
      params_(in.options.sgd()),
      runtime_(in.runtime),
      comm_(in.comm),
      ranks_(in.comm.size()),
      k_(in.options.rank),
      user_state_(0, false) {
    options_.validate(ranks_);
    if (options_.deterministic && ranks_ > 1)
        throw ConfigError("--deterministic", "sgd supports it on one rank only");
    if (train_.nnz() == 0) throw ConfigError("--train", "no ratings to train on");
    num_users_ = train_.num_users();
    num_items_ = train_.num_items();
    nnz_ = train_.nnz();
    item_counts_.resize(num_items_);
    for (std::uint32_t j = 0; j < num_items_; ++j) item_counts_[j] = train_.item_degree(j);
    const bool bias = options_.objective.bias;
    if (bias) mu_ = rating_sum(train_.user_values()).value() / static_cast<double>(train_.nnz());
    rank_users_ = assign_users(train_, ranks_, options_.seed);
    choose_grid(runtime_.threads());
    split_users();
    w_ = Factors(static_cast<std::uint32_t>(users_.size()), k_);
    w_.init_uniform(options_.seed, kSgdInitWStream, 0.0f, init_high(), users_);
    user_state_ = SgdState(static_cast<std::uint32_t>(users_.size()), bias);
    split_items();
    build_blocks();
    init_slices();
    if (ranks_ > 1) keep_slices_in_heap();
    scheduler_ = std::make_unique<sched::BlockScheduler>(side_);
    if (options_.timer && ranks_ > 1) timer_.emplace(options_.timer_params);
    if (options_.record_schedule) {
        // One time origin for every rank's timeline (to within the barrier's latency).
        comm_.barrier();
        since_start_.reset();
    }
}

SgdTrainer::~SgdTrainer() = default;

float SgdTrainer::init_high() const {
    // LIBMF's initial values: uniform in [0, 1/sqrt(K)), so that w·h starts below 1.
    return static_cast<float>(1.0 / std::sqrt(static_cast<double>(k_)));
}

std::vector<int> SgdTrainer::home_slices() const {
    if (ranks_ == 1) return {0};
    return {2 * rank(), 2 * rank() + 1};
}

void SgdTrainer::choose_grid(int threads) {
    if (options_.blocks > 0) {
        cols_per_slice_ = options_.blocks;
    } else if (options_.deterministic) {
        cols_per_slice_ = kDeterministicBlocks;
    } else {
        // At least 8 groups a side even for one thread: smaller blocks keep a block's W and H
        // rows in cache (one thread ran an epoch 1.5x faster on 8 x 8 than on 2 x 2 blocks;
        // docs/mf.md, "Training with SGD"). Threads beyond the processors do not widen it.
        cols_per_slice_ =
            std::max(sched::default_grid_side(threads, sched::available_cpus()), kMinBlocks);
    }
    side_ = num_slices() * cols_per_slice_;
    if (side_ > 4096)
        throw ConfigError("--blocks", fmt::format("the rank's grid would have {} > 4096 blocks "
                                                  "per side ({} slices of {} columns)",
                                                  side_, num_slices(), cols_per_slice_));
}

void SgdTrainer::split_users() {
    const auto& users = rank_users_[static_cast<std::size_t>(rank())];
    std::vector<std::uint64_t> counts(users.size());
    for (std::size_t r = 0; r < users.size(); ++r) counts[r] = train_.user_degree(users[r]);
    const std::uint64_t row_seed =
        Rng::from({options_.seed, kSgdRowStream, static_cast<std::uint64_t>(rank())}).next();
    const sched::Partition groups = sched::partition_rows(counts, side_, row_seed);
    // Local rows in group-major order: a row group's W rows, biases and accumulators are
    // contiguous, so that workers running blocks of different row groups write different cache
    // lines (with the rows interleaved, the per-row floats of many groups shared every line, and
    // two threads ran no faster than one).
    std::vector<std::uint32_t> order;
    order.reserve(users.size());
    row_group_.clear();
    row_group_.reserve(users.size());
    group_first_row_.assign(static_cast<std::size_t>(side_) + 1, 0);
    for (int g = 0; g < groups.groups(); ++g) {
        group_first_row_[static_cast<std::size_t>(g)] = static_cast<std::uint32_t>(order.size());
        std::vector<std::uint32_t> members = groups.members[static_cast<std::size_t>(g)];
        std::sort(members.begin(), members.end());
        for (const std::uint32_t r : members) {
            order.push_back(users[r]);
            row_group_.push_back(static_cast<std::uint32_t>(g));
        }
    }
    for (auto g = static_cast<std::size_t>(groups.groups()); g <= static_cast<std::size_t>(side_);
         ++g)
        group_first_row_[g] = static_cast<std::uint32_t>(order.size());
    users_ = std::move(order);
    local_row_.assign(train_.num_users(), kNoRow);
    user_counts_.resize(users_.size());
    for (std::uint32_t r = 0; r < users_.size(); ++r) {
        local_row_[users_[r]] = r;
        user_counts_[r] = train_.user_degree(users_[r]);
        local_nnz_ += user_counts_[r];
    }
}

void SgdTrainer::split_items() {
    const std::uint32_t m = train_.num_items();
    sched::Partition slices;
    if (ranks_ == 1) {
        slices.members.resize(1);
        slices.members[0].resize(m);
        std::iota(slices.members[0].begin(), slices.members[0].end(), std::uint32_t{0});
    } else {
        // Every (rank, slice) cell about equal: a round ends for a rank when its neighbour's
        // slice arrives, so an unequal cell turns into waiting.
        const auto p = static_cast<std::size_t>(ranks_);
        std::vector<std::uint64_t> weights(static_cast<std::size_t>(m) * p, 0);
        for (std::size_t q = 0; q < p; ++q)
            for (const std::uint32_t u : rank_users_[q])
                for (const std::uint32_t j : train_.items_of(u)) ++weights[j * p + q];
        slices = sched::partition_cols_balanced(weights, ranks_, num_slices());
    }
    col_of_item_.assign(m, 0);
    local_of_item_.assign(m, 0);
    col_base_.assign(static_cast<std::size_t>(side_), 0);
    std::uint64_t widest = 0;
    slice_items_.resize(static_cast<std::size_t>(num_slices()));
    slice_counts_.resize(static_cast<std::size_t>(num_slices()));
    for (int s = 0; s < num_slices(); ++s) {
        std::vector<std::uint32_t> sorted = slices.members[static_cast<std::size_t>(s)];
        std::sort(sorted.begin(), sorted.end());
        // Column groups by the items' rating counts over every rank, so that every rank cuts a
        // slice alike and a travelling slice keeps one order. Slice-local ids are group-major
        // (a group's H rows and per-row floats contiguous: no cache line written by two
        // workers at once but at a group's ends).
        std::vector<std::uint64_t> weights(sorted.size());
        for (std::size_t i = 0; i < sorted.size(); ++i) weights[i] = train_.item_degree(sorted[i]);
        const sched::Partition groups = sched::partition_cols_greedy(weights, cols_per_slice_);
        std::vector<std::uint32_t>& items = slice_items_[static_cast<std::size_t>(s)];
        items.clear();
        auto& counts = slice_counts_[static_cast<std::size_t>(s)];
        counts.clear();
        for (int g = 0; g < groups.groups(); ++g) {
            std::vector<std::uint32_t> members = groups.members[static_cast<std::size_t>(g)];
            std::sort(members.begin(), members.end());
            col_base_[static_cast<std::size_t>(s * cols_per_slice_ + g)] =
                static_cast<std::uint32_t>(items.size());
            widest = std::max<std::uint64_t>(widest, members.size());
            for (const std::uint32_t i : members) {
                const std::uint32_t j = sorted[i];
                col_of_item_[j] = static_cast<std::uint32_t>(s * cols_per_slice_ + g);
                local_of_item_[j] = static_cast<std::uint32_t>(items.size());
                items.push_back(j);
                counts.push_back(train_.item_degree(j));
            }
        }
    }
    col_bits_ = offset_bits(widest);
}

void SgdTrainer::build_blocks() {
    const auto blocks = static_cast<std::size_t>(side_) * static_cast<std::size_t>(side_);
    // A row group's rows in pages of 2^row_bits (the bits a key leaves the row), each block of
    // the group one segment a page.
    const std::uint32_t row_bits = 32 - col_bits_;
    block_seg_.assign(blocks + 1, 0);
    seg_row_base_.clear();
    for (int g = 0; g < side_; ++g) {
        const std::uint32_t first = group_first_row_[static_cast<std::size_t>(g)];
        const std::uint64_t rows = group_first_row_[static_cast<std::size_t>(g) + 1] - first;
        const std::uint64_t pages =
            std::max<std::uint64_t>(1, (rows + (std::uint64_t{1} << row_bits) - 1) >> row_bits);
        for (int c = 0; c < side_; ++c) {
            block_seg_[block_id(g, c)] = static_cast<std::uint32_t>(seg_row_base_.size());
            for (std::uint64_t q = 0; q < pages; ++q)
                seg_row_base_.push_back(first + static_cast<std::uint32_t>(q << row_bits));
        }
    }
    block_seg_[blocks] = static_cast<std::uint32_t>(seg_row_base_.size());
    const auto segment = [&](std::uint32_t r, std::uint32_t j) {
        const std::uint32_t g = row_group_[r];
        return block_seg_[block_id(static_cast<int>(g), static_cast<int>(col_of_item_[j]))] +
               static_cast<std::size_t>((std::uint64_t{r} - group_first_row_[g]) >> row_bits);
    };
    seg_offsets_.assign(seg_row_base_.size() + 1, 0);
    const std::vector<std::uint32_t>& mine = rank_users_[static_cast<std::size_t>(rank())];
    for (const std::uint32_t u : mine)
        for (const std::uint32_t j : train_.items_of(u))
            ++seg_offsets_[segment(local_row_[u], j) + 1];
    std::partial_sum(seg_offsets_.begin(), seg_offsets_.end(), seg_offsets_.begin());
    block_offsets_.resize(blocks + 1);
    for (std::size_t id = 0; id <= blocks; ++id) block_offsets_[id] = seg_offsets_[block_seg_[id]];
    block_cursor_.assign(blocks, 0);
    // The ratings user by user in increasing id: in a block, the rows come in increasing local
    // order (a row group's local rows are its users in increasing id) and each row's columns
    // in increasing slice-local order (a column group's local ids rise with the global ids),
    // the order sgd_block visits them in. When the owner allows, the matrix's pages are given
    // back behind the fill (its items too on one rank, where nothing else reads them: the
    // trainer gives the model its seen items), so the blocks take the matrix's place: 8 bytes a
    // rating at most, not 16. entries_' pages are written as they fill (one page of slack a
    // segment).
    entries_ = PageArray<BlockEntry>(local_nnz_);
    const bool release = releasable_ != nullptr;
    ROTOR_ASSERT(!release || releasable_ == &train_,
                 "TrainerInputs::releasable is not the training matrix");
    const bool items_too = gives_seen_items();
    constexpr std::uint64_t kReleaseStep = std::uint64_t{1} << 19;  // ratings: 2 MiB of values
    std::vector<std::uint64_t> at(seg_offsets_.begin(), seg_offsets_.end() - 1);
    std::uint64_t released = 0;
    for (const std::uint32_t u : mine) {
        const std::uint32_t r = local_row_[u];
        const std::span<const std::uint32_t> items = train_.items_of(u);
        const std::span<const float> values = train_.values_of_user(u);
        for (std::size_t e = 0; e < items.size(); ++e) {
            const std::uint32_t j = items[e];
            const std::size_t seg = segment(r, j);
            entries_[at[seg]++] = BlockView::entry(r - seg_row_base_[seg],
                                                   local_of_item_[j] - col_base_[col_of_item_[j]],
                                                   col_bits_, values[e]);
        }
        const std::uint64_t end = train_.user_offsets()[u + 1];
        if (release && end - released >= kReleaseStep) {
            releasable_->release_users_before(u + 1, items_too);
            released = end;
        }
    }
    if (release) releasable_->release_users_before(num_users_, items_too);
}

template <class Fn>
bool SgdTrainer::for_each_segment(std::size_t id, std::uint64_t lo, std::uint64_t hi,
                                  const Fn& fn) const {
    const std::uint64_t first = block_offsets_[id];
    const auto col = static_cast<std::size_t>(id % static_cast<std::size_t>(side_));
    for (std::uint32_t s = block_seg_[id]; s < block_seg_[id + 1]; ++s) {
        const std::uint64_t a = std::max(seg_offsets_[s] - first, lo);
        const std::uint64_t b = std::min(seg_offsets_[s + 1] - first, hi);
        if (a >= b) continue;
        const BlockView view{entries_.span().subspan(first + a, b - a), seg_row_base_[s],
                             col_base_[col], col_bits_};
        if (!fn(view)) return false;
    }
    return true;
}

void SgdTrainer::init_slices() {
    held_.clear();
    held_.resize(static_cast<std::size_t>(num_slices()));
    for (const int s : home_slices()) {
        const auto& items = slice_items_[static_cast<std::size_t>(s)];
        auto slice = std::make_unique<HSlice>(static_cast<std::uint32_t>(items.size()), k_,
                                              options_.objective.bias);
        slice->h.init_uniform(options_.seed, kSgdInitHStream, 0.0f, init_high(), items);
        held_[static_cast<std::size_t>(s)] = std::move(slice);
    }
}

void SgdTrainer::keep_slices_in_heap() const {
    std::size_t rows = 0;
    for (const auto& items : slice_items_) rows = std::max(rows, items.size());
    // A slice's message: a header, the H rows, a bias, two accumulators a row (pack_slice).
    keep_messages_in_heap(64 + 4 * rows * (std::size_t{k_} + 4));
}

SgdSide SgdTrainer::user_side() { return user_state_.side(w_, user_counts_); }

SgdSide SgdTrainer::slice_side(int slice) {
    HSlice& s = *held_[static_cast<std::size_t>(slice)];
    return s.state.side(s.h, slice_counts_[static_cast<std::size_t>(slice)]);
}

std::uint64_t SgdTrainer::run_block(std::size_t id, int slice, const std::atomic<bool>* stop) {
    SgdSide rows = user_side();
    SgdSide cols = slice_side(slice);
    const std::uint64_t n = block_size(id);
    // A block the timer stopped continues where it stopped the next time it runs (wrapping
    // around), so that no part of it is always the one cut off.
    const std::uint64_t start = block_cursor_[id];
    std::uint64_t done = 0;
    const auto run = [&](const BlockView& v) {
        const std::uint64_t d = sgd_block(v, rows, cols, mu_, params_, stop, nullptr);
        done += d;
        return d == v.size();
    };
    if (for_each_segment(id, start, n, run) && start > 0) for_each_segment(id, 0, start, run);
    block_cursor_[id] = (start + done) % std::max<std::uint64_t>(n, 1);
    return done;
}

void SgdTrainer::keep_schedule(const std::vector<sched::ScheduleEvent>& events,
                               std::uint32_t epoch) {
    for (const sched::ScheduleEvent& e : events)
        schedule_.push_back({epoch, e.worker, e.block.row, e.block.col, e.start_s, e.end_s});
}

train::Record SgdTrainer::iterate() { return iterate_span(1, {}); }

train::Record SgdTrainer::iterate_span(std::uint32_t sweeps,
                                       const std::function<void(train::Record&)>& on_sweep) {
    if (ranks_ == 1 && !options_.deterministic) return iterate_dynamic(sweeps, on_sweep);
    ROTOR_ASSERT(sweeps >= 1, "iterate_span needs at least one sweep");
    for (std::uint32_t s = 1;; ++s) {
        train::Record r = ranks_ > 1 ? iterate_ring() : iterate_deterministic();
        if (s == sweeps) return r;
        if (on_sweep) on_sweep(r);
    }
}

train::Record SgdTrainer::iterate_dynamic(std::uint32_t sweeps,
                                          const std::function<void(train::Record&)>& on_sweep) {
    // Sweeps over the L x L grid back to back: an idle worker takes a random block whose row
    // group and column group are both free (HarpLDA+'s scheduler, LIBMF's get_job / put_job),
    // of the slowest sweep if it can, else of the next one (BlockScheduler::reset_sweeps), so the
    // tail of an epoch costs no idle time. Block b of sweep s is epoch first + s's.
    ROTOR_ASSERT(sweeps >= 1, "iterate_span needs at least one sweep");
    const std::uint32_t first = iterations_done_ + 1;
    std::vector<std::atomic<std::uint64_t>> done(sweeps);
    const auto kernel = [&](int, const sched::Job& job, const std::atomic<bool>&) {
        const auto s = static_cast<std::uint32_t>(job.sweep);
        const std::uint64_t n = run_block(block_id(job.block.row, job.block.col), 0, nullptr);
        done[s].fetch_add(n, std::memory_order_relaxed);
        return sched::BlockResult{n, true};
    };
    // The loop closes sweeps in order, one at a time, after their last block's release.
    train::Record last;
    const auto close_sweep = [&](int sweep, const sched::IterationTimes& times) {
        const auto s = static_cast<std::uint32_t>(sweep);
        train::Record m;
        m.iter = first + s;
        m.set_times(times);
        m.processed = done[s].load(std::memory_order_relaxed);
        m.finish(local_nnz_);
        iterations_done_ = m.iter;
        if (s + 1 == sweeps) {
            last = std::move(m);
        } else if (on_sweep) {
            on_sweep(m);
        }
    };
    scheduler_->reset_sweeps(static_cast<int>(sweeps));
    sched::DynamicLoopOptions loop;
    loop.pick_seed = {options_.seed, kSgdPickStream, first, static_cast<std::uint64_t>(rank()), 0};
    loop.record = options_.record_schedule;
    loop.origin = &since_start_;
    const sched::LoopResult result =
        sched::run_dynamic_loop(runtime_, *scheduler_, loop, kernel, close_sweep);
    ROTOR_ASSERT(result.sweeps_completed == static_cast<int>(sweeps),
                 "a sweep ended without being closed");
    for (const sched::ScheduleEvent& e : result.events)
        schedule_.push_back({first + static_cast<std::uint32_t>(e.sweep), e.worker, e.block.row,
                             e.block.col, e.start_s, e.end_s});
    return last;
}

train::Record SgdTrainer::iterate_deterministic() {
    // L diagonal rounds of L blocks sharing no row and no column: every block starts from the
    // state the previous rounds left, whichever worker runs it, so the model does not depend on
    // the thread count.
    const std::uint32_t epoch = iterations_done_ + 1;
    const auto kernel = [&](int, const sched::DiagonalJob& job) {
        return run_block(block_id(job.block.row, job.block.col), 0, nullptr);
    };
    const sched::DiagonalResult result =
        sched::run_diagonal_loop(runtime_, sched::DiagonalSchedule(side_), kernel, {},
                                 options_.record_schedule, &since_start_);
    keep_schedule(result.events, epoch);
    train::Record m;
    m.iter = epoch;
    m.set_times(result.times);
    m.processed = std::accumulate(result.units.begin(), result.units.end(), std::uint64_t{0});
    m.finish(local_nnz_);
    iterations_done_ = epoch;
    return m;
}

double SgdTrainer::train_squared_error(const ModelView& view) {
    // Block by block (the rank keeps its ratings only in its blocks), the blocks' sums added in
    // block order: the result does not depend on the thread count. One rank's `view` is its one
    // slice, in the order the blocks' columns are in.
    const bool local = ranks_ == 1;
    const std::size_t blocks = block_offsets_.size() - 1;
    std::vector<double> part(blocks, 0.0);
    runtime_.parallel_for(
        0, static_cast<std::int64_t>(blocks), [&](std::int64_t lo, std::int64_t hi) {
            for (auto id = static_cast<std::size_t>(lo); id < static_cast<std::size_t>(hi); ++id) {
                double sum = 0;
                const auto slice = static_cast<std::size_t>(
                    static_cast<int>(id % static_cast<std::size_t>(side_)) / cols_per_slice_);
                const std::vector<std::uint32_t>& items = slice_items_[slice];
                for_each_segment(id, 0, block_size(id), [&](const BlockView& b) {
                    for (std::uint64_t t = 0; t < b.size(); ++t) {
                        // One rank: H in slice-local order (a column group's rows together).
                        const double err =
                            b.entries[t].value -
                            view.predict(b.row(t), local ? b.col(t) : items[b.col(t)]);
                        sum += err * err;
                    }
                    return true;
                });
                part[id] = sum;
            }
        });
    return std::accumulate(part.begin(), part.end(), 0.0);
}

void SgdTrainer::evaluate_record(train::Record& r) {
    // Every rank evaluates its own users' ratings against all of H, gathered in global order
    // (the memory plan counts the copy); the sums are added across ranks. One rank reads its one
    // slice instead, item j at row local_of_item_[j], with the same values in the same order of
    // terms, so the same sums without the copy.
    std::optional<WholeH> whole;
    if (ranks_ > 1) whole = collect_h(true);
    const HSlice* held = whole ? nullptr : held_[0].get();
    const Factors& h = whole ? whole->h : held->h;
    const std::span<const float> c =
        whole ? std::span<const float>(whole->bias) : std::span<const float>(held->state.bias);
    const std::span<const std::uint32_t> order =
        whole ? std::span<const std::uint32_t>() : local_of_item_;
    const auto item_row = [&](std::uint32_t j) {
        return whole || j >= num_items_ ? j : local_of_item_[j];
    };
    const ModelView view{mu_, &w_, &h, user_state_.bias, c};
    const ObjectiveParams& o = options_.objective;
    // Squared training error, W's penalty, H's penalty (rank 0), test squared and absolute sums.
    std::vector<double> sums(5, 0.0);
    sums[0] = train_squared_error(view);
    sums[1] = penalty(w_, user_state_.bias, user_counts_, o);
    if (rank() == 0) {
        sums[2] = penalty(h, c,
                          whole ? std::span<const std::uint64_t>(item_counts_)
                                : std::span<const std::uint64_t>(slice_counts_[0]),
                          o, order);
    }
    if (test_ != nullptr) {
        // A known user is evaluated by its rank, an unseen one (>= N) by rank 0.
        for (std::uint64_t t = 0; t < test_->size(); ++t) {
            const std::uint32_t u = test_->users[t];
            const std::uint32_t row = u < local_row_.size() ? local_row_[u] : kNoRow;
            if (row == kNoRow && (u < local_row_.size() || rank() != 0)) continue;
            const double e = test_->values[t] - view.predict(row, item_row(test_->items[t]));
            sums[3] += e * e;
            sums[4] += std::abs(e);
        }
    }
    comm_.allreduce_sum(sums);
    r.set("train_rmse", rmse(sums[0], nnz_));
    r.set("objective", sums[0] + sums[1] + sums[2]);
    if (test_ != nullptr) {
        const auto n = static_cast<double>(std::max<std::uint64_t>(test_->size(), 1));
        r.set("test_rmse", std::sqrt(sums[3] / n));
        r.set("test_mae", sums[4] / n);
    }
}

std::optional<WholeH> SgdTrainer::collect_h(bool everywhere) {
    const bool bias = options_.objective.bias;
    if (ranks_ == 1) {  // one slice of every item
        WholeH out = empty_whole(num_items_, k_, bias);
        scatter_rows(held_[0]->h, held_[0]->state, slice_items_[0], out);
        return out;
    }
    comm::WireWriter mine;
    const std::vector<int> home = home_slices();
    for (const int s : home) {
        const HSlice& slice = *held_[static_cast<std::size_t>(s)];
        mine.put(static_cast<std::uint32_t>(s));
        put_rows(mine, slice.h, slice.state);
    }
    std::optional<WholeH> out;
    if (everywhere || rank() == 0) out = empty_whole(num_items_, k_, bias);
    const auto read = [&](int q, comm::WireReader& r) {
        for (std::size_t i = 0; i < home.size(); ++i) {
            const auto s = r.get<std::uint32_t>();
            const auto want =
                static_cast<std::uint32_t>(ranks_ == 1 ? 0 : 2 * q + static_cast<int>(i));
            if (s != want) r.fail(fmt::format("slice {} where slice {} was expected", s, want));
            read_rows(r, slice_items_[s], k_, bias, *out);
        }
    };
    if (everywhere) {
        comm::allgather_messages(comm_, mine.bytes(), "H slices", read);
    } else {
        comm::gather_messages(comm_, mine.bytes(), 0, "H slices", read);
    }
    return out;
}

std::optional<WholeH> SgdTrainer::collect_w() {
    const bool bias = options_.objective.bias;
    if (ranks_ == 1) {
        WholeH out = empty_whole(num_users_, k_, bias);
        scatter_rows(w_, user_state_, users_, out);
        return out;
    }
    // The users in the rank's local (group-major) order, then their rows.
    comm::WireWriter mine;
    mine.put(users_);
    put_rows(mine, w_, user_state_);
    std::optional<WholeH> out;
    if (rank() == 0) out = empty_whole(num_users_, k_, bias);
    comm::gather_messages(comm_, mine.bytes(), 0, "W rows", [&](int q, comm::WireReader& r) {
        const auto ids = r.get<std::vector<std::uint32_t>>();
        std::vector<std::uint32_t> sorted = ids;
        std::sort(sorted.begin(), sorted.end());
        if (sorted != rank_users_[static_cast<std::size_t>(q)])
            r.fail(fmt::format("rank {} sent rows of users it does not hold", q));
        read_rows(r, ids, k_, bias, *out);
    });
    return out;
}

Model SgdTrainer::gather_model() { return gather_state().model; }

std::pair<std::vector<std::uint64_t>, std::vector<ItemId>> SgdTrainer::release_seen_items() {
    ROTOR_ASSERT(ranks_ == 1, "release_seen_items() under MPI: a rank holds its users only");
    // One rank holds every rating, its blocks in one slice. Row group by row group: a group's
    // blocks are contiguous in entries_ and its local rows contiguous, so its users' items,
    // gathered by local row, take the place of its blocks, given back as they are read: 8 bytes
    // a rating at most, as while training. Then into the model's order (by user id), the
    // blocks gone.
    const std::vector<std::uint32_t>& global = slice_items_[0];
    const std::size_t rows = users_.size();
    std::vector<std::uint64_t> local_offsets(rows + 1, 0);
    for (std::size_t r = 0; r < rows; ++r)
        local_offsets[r + 1] = local_offsets[r] + user_counts_[r];
    PageArray<ItemId> local(local_nnz_);
    {
        // The group's rows in order, each from its run in every block of the group (a block is
        // sorted by row): the items are written in order, and the blocks read from their starts.
        const std::uint32_t row_bits = 32 - col_bits_;
        const auto mask = static_cast<std::uint32_t>((std::uint64_t{1} << col_bits_) - 1);
        const auto g_side = static_cast<std::size_t>(side_);
        std::vector<std::uint64_t> at(g_side);
        std::uint64_t out = 0;
        for (int g = 0; g < side_; ++g) {
            for (std::size_t c = 0; c < g_side; ++c) at[c] = block_offsets_[block_id(g, 0) + c];
            const std::uint32_t first = group_first_row_[static_cast<std::size_t>(g)];
            const std::uint32_t last = group_first_row_[static_cast<std::size_t>(g) + 1];
            for (std::uint32_t r = first; r < last; ++r) {
                for (std::size_t c = 0; c < g_side; ++c) {
                    const std::size_t id = block_id(g, 0) + c;
                    const std::uint32_t seg =
                        block_seg_[id] +
                        static_cast<std::uint32_t>((std::uint64_t{r} - first) >> row_bits);
                    const std::uint64_t end = block_offsets_[id + 1];
                    const std::uint64_t key_row = r - seg_row_base_[seg];
                    for (; at[c] < end &&
                           (std::uint64_t{entries_[at[c]].key} >> col_bits_) == key_row;
                         ++at[c])
                        local[out++] = global[col_base_[c] + (entries_[at[c]].key & mask)];
                }
                if ((r - first) % 4096 == 4095)
                    for (std::size_t c = 0; c < g_side; ++c)
                        entries_.release(block_offsets_[block_id(g, 0) + c], at[c]);
            }
            entries_.release(block_offsets_[block_id(g, 0)], block_offsets_[block_id(g + 1, 0)]);
        }
        ROTOR_ASSERT(out == local_nnz_, "release_seen_items: a rating not read back");
    }
    entries_.reset();
    block_offsets_.assign(block_offsets_.size(), 0);
    seg_offsets_.assign(seg_offsets_.size(), 0);
    std::vector<std::uint64_t> offsets(std::size_t{num_users_} + 1, 0);
    for (std::size_t r = 0; r < rows; ++r) offsets[std::size_t{users_[r]} + 1] = user_counts_[r];
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    std::vector<ItemId> items(local_nnz_);
    for (std::size_t r = 0; r < rows; ++r) {
        ItemId* first = local.data() + local_offsets[r];
        ItemId* last = local.data() + local_offsets[r + 1];
        std::sort(first, last);
        std::copy(first, last, items.begin() + static_cast<std::ptrdiff_t>(offsets[users_[r]]));
    }
    return {std::move(offsets), std::move(items)};
}

TrainerState SgdTrainer::gather_state() {
    std::optional<WholeH> w = collect_w();
    std::optional<WholeH> h = collect_h(false);
    TrainerState s;
    if (rank() != 0) return s;
    s.iterations_done = iterations_done_;
    s.timer_budget = timer_ ? timer_->budget() : 0.0;
    Model& m = s.model;
    m.params = options_.objective;
    m.solver = "sgd";
    m.iterations = iterations_done_;
    m.seed = options_.seed;
    m.mu = mu_;
    m.w = std::move(w->h);
    m.h = std::move(h->h);
    m.row_bias = std::move(w->bias);
    m.col_bias = std::move(h->bias);
    s.w_gsum = std::move(w->gsum);
    s.h_gsum = std::move(h->gsum);
    s.b_gsum = std::move(w->bias_gsum);
    s.c_gsum = std::move(h->bias_gsum);
    return s;
}

void SgdTrainer::check_state(const TrainerState& state) const {
    const Model& m = state.model;
    const std::uint32_t n = num_users_;
    const std::uint32_t items = num_items_;
    const bool bias = options_.objective.bias;
    const auto fail = [](const std::string& what) {
        throw InputError("checkpoint state", "does not fit the ratings and options: " + what);
    };
    if (m.w.rows() != n || m.w.k() != k_)
        fail(fmt::format("W is {} x {}, not {} x {}", m.w.rows(), m.w.k(), n, k_));
    if (m.h.rows() != items || m.h.k() != k_)
        fail(fmt::format("H is {} x {}, not {} x {}", m.h.rows(), m.h.k(), items, k_));
    if (state.w_gsum.size() != n || state.h_gsum.size() != items)
        fail("no sgd accumulators for every row of W and H");
    const std::size_t nb = bias ? n : 0;
    const std::size_t mb = bias ? items : 0;
    if (m.row_bias.size() != nb || state.b_gsum.size() != nb || m.col_bias.size() != mb ||
        state.c_gsum.size() != mb)
        fail(bias ? "biases or their accumulators missing" : "biases given without --bias");
}

void SgdTrainer::restore(const TrainerState& state) {
    check_state(state);
    const Model& m = state.model;
    const bool bias = options_.objective.bias;
    for (std::uint32_t r = 0; r < w_.rows(); ++r) {
        const std::uint32_t u = users_[r];
        std::copy_n(m.w.row(u).begin(), k_, w_.row(r).begin());
        user_state_.factor_gsum[r] = state.w_gsum[u];
        if (bias) {
            user_state_.bias[r] = m.row_bias[u];
            user_state_.bias_gsum[r] = state.b_gsum[u];
        }
    }
    for (const int s : home_slices()) {
        HSlice& slice = *held_[static_cast<std::size_t>(s)];
        const auto& items = slice_items_[static_cast<std::size_t>(s)];
        for (std::size_t i = 0; i < items.size(); ++i) {
            const std::uint32_t j = items[i];
            std::copy_n(m.h.row(j).begin(), k_, slice.h.row(static_cast<std::uint32_t>(i)).begin());
            slice.state.factor_gsum[i] = state.h_gsum[j];
            if (bias) {
                slice.state.bias[i] = m.col_bias[j];
                slice.state.bias_gsum[i] = state.c_gsum[j];
            }
        }
    }
    iterations_done_ = state.iterations_done;
    if (timer_) {
        sched::TimerParams p = options_.timer_params;
        if (state.timer_budget > 0) p.initial_s = state.timer_budget;
        timer_.emplace(p);
    }
}

std::vector<std::vector<train::BlockRun>> SgdTrainer::gather_schedule() {
    return comm::gather(comm_, schedule_, 0, "timeline");
}

}  // namespace detail

std::unique_ptr<Trainer> make_sgd_trainer(const TrainerInputs& in) {
    return std::make_unique<detail::SgdTrainer>(in);
}

}  // namespace rotor::mf
