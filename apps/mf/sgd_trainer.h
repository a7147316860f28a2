// Internal to the SGD trainer's sources (sgd_trainer.cpp: layout, one rank's epochs, evaluation,
// model and state; sgd_ring.cpp: the ring of H's slices for P > 1 ranks). Block SGD
// (core/mf/sgd.h) on the engine in the pattern of HarpLDA+ (Peng et al., VLDB 2017) and NOMAD
// (Yun et al., VLDB 2014), the mf::Trainer that make_sgd_trainer returns (docs/mf.md, "Training
// with SGD").
//
// Layout on rank p of P:
// - Users (rows of W): assign_users(train, P, seed)[p], in group-major order
//   (the rows of a grid row group contiguous); the rank's W rows, user biases and their AdaGrad
//   accumulators never move. Local row r is user users_[r]. The rank's ratings are kept only as
//   its blocks (below): the training matrix is read while the trainer is built, not after.
// - Items (rows of H): P = 1: one slice of every item (slice-local id = global id). P > 1: 2P
//   slices balancing every rank's share of the ratings (sched::partition_cols_balanced), slice s
//   holding its items' H rows, biases and accumulators, indexed by slice-local id (the item's
//   position in slice_items(s), group-major like the rows); slices 2p and 2p + 1 are home on rank p
//   and rotate on comm::RingPipeline during an epoch.
// - Grid: each slice cut into c column groups (partition_cols_greedy by each item's ratings on
//   every rank, so that all ranks cut a slice alike), so the rank's grid has side G = slices · c,
//   column s·c + j being group j of slice s; the rank's rows cut into G groups of about equal
//   ratings (partition_rows). c is --blocks, or 16 with --deterministic (P = 1), or
//   max(sched::default_grid_side(threads), 8). Block (row, col)'s ratings are stored once, 8 bytes
//   each (BlockEntry): the local W row's offset in its row group and the slice-local H row's in
//   its column group packed into 32 bits (col_bits_ for the column, the rest for the row), and
//   the value. A row group with more rows than the row bits hold is cut into pages of 2^(32 −
//   col_bits_) rows, each block of it into one segment a page (one segment a block in practice).
// - Initial values: Factors::init_uniform in [0, 1/sqrt(K)) by global id (LIBMF's start), so the
//   initial model does not depend on P, the threads or the grid; biases 0, accumulators 1.
//   μ = the exact mean of every training rating (0 without bias).
// - Order: a block's ratings are stored sorted by local W row, then slice-local H row (the
//   order build_blocks writes them in), and sgd_block visits them in that order (LIBMF's), so a
//   block's result depends on its inputs only; the randomness is in which block runs when.
//
// Thread-safety: one driving thread calls the methods (collective ones on every rank in the same
// order); the runtime's workers run blocks that share no W row and no H row.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "apps/mf/shard.h"
#include "apps/mf/trainer.h"
#include "core/base/page_array.h"
#include "core/base/timer.h"
#include "core/mf/factors.h"
#include "core/mf/sgd.h"
#include "core/mf/sparse_view.h"

namespace rotor::sched {
class BlockScheduler;
struct ScheduleEvent;
}  // namespace rotor::sched

namespace rotor::mf::detail {

// Seed streams of the SGD trainer: every random choice derives from (seed, stream, ...).
inline constexpr std::uint64_t kSgdInitWStream = 0x53474957;  // "SGIW": W row of a global user
inline constexpr std::uint64_t kSgdInitHStream = 0x53474948;  // "SGIH": H row of a global item
inline constexpr std::uint64_t kSgdRowStream = 0x53475257;    // "SGRW": row groups of rank p
inline constexpr std::uint64_t kSgdPickStream = 0x5347504b;   // "SGPK": which free block next

/// One slice of H: its items' rows, biases and AdaGrad accumulators, by slice-local id.
struct HSlice {
    HSlice(std::uint32_t rows, std::uint32_t k, bool bias) : h(rows, k), state(rows, bias) {}
    Factors h;
    SgdState state;
};

/// H, biases and accumulators of every item in global order (gathered for evaluation, the model
/// and the state).
struct WholeH {
    Factors h;
    std::vector<float> bias, gsum, bias_gsum;
};

class SgdTrainer final : public Trainer {
  public:
    /// Collective. Throws ConfigError for --deterministic with P > 1 or an oversized grid.
    explicit SgdTrainer(const TrainerInputs& in);
    ~SgdTrainer() override;

    std::uint32_t iterations_done() const override { return iterations_done_; }
    train::Record iterate() override;
    /// One rank without --deterministic: the sweeps pipelined on the block loop
    /// (BlockScheduler::reset_sweeps), so the tail of one epoch overlaps the next. Else the
    /// default.
    train::Record iterate_span(std::uint32_t sweeps,
                               const std::function<void(train::Record&)>& on_sweep) override;
    void evaluate_record(train::Record& r) override;
    Model gather_model() override;
    TrainerState gather_state() override;
    bool gives_seen_items() const override { return ranks_ == 1; }
    std::pair<std::vector<std::uint64_t>, std::vector<ItemId>> release_seen_items() override;
    void restore(const TrainerState& state) override;
    std::vector<std::vector<train::BlockRun>> gather_schedule() override;

  private:
    int num_slices() const { return ranks_ == 1 ? 1 : 2 * ranks_; }
    /// The slices held between epochs: {0} for one rank, {2p, 2p + 1} else.
    std::vector<int> home_slices() const;
    /// LIBMF's initial values are uniform in [0, init_high()) = [0, 1/sqrt(K)).
    float init_high() const;
    void choose_grid(int threads);
    /// The rank's users into the grid's row groups (row_group_), local rows group-major (users_,
    /// local_row_, user_counts_).
    void split_users();
    /// Cuts the items into slices (slice_items_, slice_counts_) and each slice into column groups
    /// (col_of_item_, local_of_item_).
    void split_items();
    /// The rank's ratings into the G x G blocks (the matrix released behind them when allowed).
    void build_blocks();
    /// Initial H rows of the home slices.
    void init_slices();
    /// On P > 1 ranks every round allocates and frees a slice's message, its received copy and
    /// the slice: keep_messages_in_heap of a slice message's size (without it, 8,000 faults a
    /// rank an iteration at 21.2M ratings, K = 32: 0.15 s of a 0.5 s iteration).
    void keep_slices_in_heap() const;
    std::size_t block_id(int row, int col) const {
        return static_cast<std::size_t>(row) * static_cast<std::size_t>(side_) +
               static_cast<std::size_t>(col);
    }
    std::uint64_t block_size(std::size_t id) const {
        return block_offsets_[id + 1] - block_offsets_[id];
    }
    /// Calls fn(view) for the segments of ratings [lo, hi) of block `id` (offsets in the block),
    /// in order, while fn returns true; returns false when fn stopped it.
    template <class Fn>
    bool for_each_segment(std::size_t id, std::uint64_t lo, std::uint64_t hi, const Fn& fn) const;
    SgdSide user_side();
    SgdSide slice_side(int slice);
    /// Runs block `id` against `slice` (held); returns the ratings processed.
    std::uint64_t run_block(std::size_t id, int slice, const std::atomic<bool>* stop);
    void keep_schedule(const std::vector<sched::ScheduleEvent>& events, std::uint32_t epoch);

    // One rank.
    train::Record iterate_dynamic(std::uint32_t sweeps,
                                  const std::function<void(train::Record&)>& on_sweep);
    train::Record iterate_deterministic();

    // P > 1 ranks (sgd_ring.cpp).
    train::Record iterate_ring();
    std::vector<std::byte> pack_slice(int slice);
    void unpack_slice(int slice, std::span<const std::byte> bytes);

    /// Σ (a − â)² over the rank's ratings, in a fixed order of blocks (any thread count).
    double train_squared_error(const ModelView& view);
    /// InputError unless `state` has the shapes of this run's ratings and options.
    void check_state(const TrainerState& state) const;
    /// Collective: every item's H row, bias and accumulators in global order, on every rank
    /// (everywhere) or on rank 0 only (nothing elsewhere).
    std::optional<WholeH> collect_h(bool everywhere);
    /// Collective: W, b and their accumulators of every user on rank 0 (nothing elsewhere).
    std::optional<WholeH> collect_w();

    const Ratings& train_;
    Ratings* releasable_;  // TrainerInputs::releasable
    const TestRatings* test_;
    TrainOptions options_;
    SgdParams params_;
    sched::Runtime& runtime_;
    comm::Communicator& comm_;
    int ranks_ = 1;
    int side_ = 0;
    int cols_per_slice_ = 0;
    std::uint32_t k_ = 0;
    double mu_ = 0;
    std::vector<std::vector<std::uint32_t>> rank_users_;  // every rank's users, increasing
    // The training matrix's shape: train_ is read only while the trainer is built, so that the
    // caller may release it afterwards (the blocks hold the rank's ratings).
    std::uint32_t num_users_ = 0, num_items_ = 0;
    std::uint64_t nnz_ = 0;
    std::vector<std::uint64_t> item_counts_;      // |Ω_j| of every item (H's penalty)
    std::vector<std::uint32_t> users_;            // global user of every local row, group-major
    std::uint64_t local_nnz_ = 0;                 // the rank's ratings
    std::vector<std::uint32_t> local_row_;        // local row of every user, or ~0 if not ours
    std::vector<std::uint64_t> user_counts_;      // |Ω_i| of the local rows
    std::vector<std::uint32_t> row_group_;        // grid row group of every local row
    std::vector<std::uint32_t> group_first_row_;  // G + 1: row group g's local rows, from here
    Factors w_;
    SgdState user_state_;
    std::vector<std::vector<std::uint32_t>> slice_items_;   // global item ids, group-major
    std::vector<std::vector<std::uint64_t>> slice_counts_;  // |Ω_j| by slice-local id
    std::vector<std::uint32_t> col_of_item_;                // grid column of every item
    std::vector<std::uint32_t> local_of_item_;              // slice-local id of every item
    std::vector<std::unique_ptr<HSlice>> held_;             // per slice; null when not held
    std::vector<std::uint32_t> col_base_;  // slice-local id of grid column c's first item
    std::uint32_t col_bits_ = 0;           // bits of a column offset in a BlockEntry's key
    // The blocks' ratings, block after block (id order), each sorted by local W row, then
    // slice-local H row. Segment s is entries [seg_offsets_[s], seg_offsets_[s + 1]), its rows
    // from seg_row_base_[s]; block id's segments are [block_seg_[id], block_seg_[id + 1]).
    PageArray<BlockEntry> entries_;
    std::vector<std::uint64_t> block_offsets_;  // G·G + 1, into entries_
    std::vector<std::uint64_t> seg_offsets_;
    std::vector<std::uint32_t> seg_row_base_;
    std::vector<std::uint32_t> block_seg_;     // G·G + 1
    std::vector<std::uint64_t> block_cursor_;  // where a block stopped by the timer resumes
    std::unique_ptr<sched::BlockScheduler> scheduler_;
    std::optional<sched::TimerControl> timer_;
    std::uint32_t iterations_done_ = 0;
    Stopwatch since_start_;
    std::vector<train::BlockRun> schedule_;
};

}  // namespace rotor::mf::detail
