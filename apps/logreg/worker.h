// A worker of the delayed block proximal gradient (apps/logreg/trainer.h; docs/logreg.md,
// "The delayed trainer"): its part of the examples, its blocks (its keys split by block_of) and
// its copy of w over its keys. For iteration t it computes the values to push (the limbs of the
// exact sums g_b and u_b, core/logreg/objective.h) and takes the pulled w_b into w and the
// margins.
//
// Threads: with T > 1 the part's examples are split into T contiguous row ranges of about equal
// nonzeros (row_cuts), the shares of a sched::Team on T pinned workers (a range is taken by
// whichever thread runs, the caller included); each range's terms go into its own exact sums
// (push_slices), which are combined exactly, and the pulled changes into its rows' margins
// (apply_slices). While the team runs alone (its hand-offs do not pay, or a teammate's core is
// taken), the calling thread runs one range over every row instead of T (slices of every row, kept
// besides): a range costs its keys' sums and slices whatever its rows, so T ranges on one thread
// would cost more than one thread's run. A margin sees the same operations in the same order and
// the sums are exact, so the pushed values and the margins are bitwise the same for every T and
// either way. Borrows the part; one caller at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/logreg/block_prox.h"
#include "core/logreg/kkt_screen.h"
#include "sched/team.h"

namespace rotor::logreg {

/// Values pushed per key: g's core::ExactSum limbs, then u's.
inline constexpr std::size_t kPushWidth = 2 * core::ExactSum::kLimbs;
/// A row range standing for every row of the part (Worker: the team alone runs one).
inline constexpr std::size_t kAllRows = ~std::size_t{0};
/// Values pushed per key without the limbs: g_k and u_k (each a float32, PushValues::kFloat32).
inline constexpr std::size_t kFloatPushWidth = 2;

/// The T + 1 row boundaries of `threads` row ranges of `part` (0 first, part.examples() last,
/// non-decreasing) holding about equal numbers of nonzeros: the threads' share of every pass.
std::vector<std::uint32_t> row_cuts(const Shard& part, int threads);

/// A worker's T > 1 threads: a runtime of T pinned workers and their team. A run keeps them
/// over its calls of train_delayed (DelayedMemory), so that the runtime starts once and the team's
/// measure of its hand-offs (docs/scheduler.md, "Going solo") carries over from call to call.
struct WorkerThreads {
    WorkerThreads(int threads, sched::PinMode pin);
    ~WorkerThreads();
    WorkerThreads(const WorkerThreads&) = delete;
    WorkerThreads& operator=(const WorkerThreads&) = delete;
    std::unique_ptr<sched::Runtime> runtime;
    std::unique_ptr<sched::Team> team;
};

/// A worker's state: its part, its blocks, its copy of w over its keys and its threads.
class Worker {
  public:
    /// `part` is borrowed; its margins must match `start` (w over part.keys(); empty: w = 0).
    /// `threads` >= 1 share its examples. `screen` (null without the KKT filter; borrowed)
    /// learns w_k and ĝ_k from pulls of `pull_width` values per key (w_k, then ĝ_k when 2).
    /// With threads > 1 the worker runs on `shared` (borrowed; of `threads` threads) or, when
    /// null, on a runtime of its own of that many workers, bound by `pin`.
    /// `exact`: pushes carry the limbs (kPushWidth values a key); else g_k and u_k rounded to
    /// float32 (kFloatPushWidth).
    Worker(Shard& part, const BlockProxOptions& options, int threads = 1,
           std::span<const double> start = {}, KktScreen* screen = nullptr,
           std::size_t pull_width = 1, bool exact = true,
           sched::PinMode pin = sched::PinMode::kAuto, WorkerThreads* shared = nullptr);
    ~Worker();
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    /// The block of iteration t; sets `values` to the push's values per key of the block. With
    /// a KKT screen, the keys it skips at the filters' iteration `kv_t` (the ones the kkt
    /// filter drops from this push) are not computed: their values are zeros.
    std::uint32_t push_values(std::uint64_t t, std::vector<double>& values, std::uint64_t kv_t = 0);
    /// Takes block b's pulled weights (pull_width values per key of block(b), w_k first):
    /// changes w and the margins.
    void apply(std::uint32_t b, std::span<const double> pulled);
    /// apply(applied, pulled), then push_values(t, values, kv_t), with ONE hand-off to the
    /// threads instead of two (each thread applies and pushes its own rows): the same numbers.
    std::uint32_t apply_and_push(std::uint32_t applied, std::span<const double> pulled,
                                 std::uint64_t t, std::vector<double>& values,
                                 std::uint64_t kv_t = 0);
    /// Takes every key's pulled weight (an exact pull of part.keys(), pull_width values a key).
    void apply_all(std::span<const double> pulled);
    /// The part's keys, increasing.
    std::span<const std::uint64_t> keys() const { return part_.keys(); }
    /// The keys of block b, increasing.
    std::span<const std::uint64_t> block(std::uint32_t b) const { return blocks_[b]; }
    /// w over the part's keys (aligned with part.keys()).
    const std::vector<double>& weights() const { return w_; }
    /// The threads' team (null for one thread): tests send it alone (Team::stay_alone_for).
    sched::Team* team() { return team_; }

  private:
    /// Runs fn(j) for every row range j (on the team when there is one: a range is taken by
    /// whichever thread runs, the caller included), or fn(kAllRows) once when the team runs the
    /// call alone (sched::Team::run): one thread's work, not T ranges' (each range costs its
    /// keys' sums and slices). Sets ranges_.
    template <class Fn>
    void on_threads(const Fn& fn);
    /// Row range j's slices of block b, or every row's (j = kAllRows; T > 1 only).
    const ColumnSlices& slices(std::uint32_t b, std::size_t j) const;
    /// Serial steps around the threads' work: the block of iteration t with its screen flags
    /// and a new scratch stamp; thread j's pushes of block b; the threads' sums combined into
    /// the pushed values; the pulled weights of block b into w and deltas_ (and the screen).
    std::uint32_t prepare_push(std::uint64_t t, std::uint64_t kv_t);
    void push_rows(std::uint32_t b, std::size_t j);
    void combine(std::uint32_t b, std::vector<double>& values) const;
    void take_weights(std::uint32_t b, std::span<const double> pulled);

    Shard& part_;
    BlockProxOptions options_;
    int threads_;
    std::vector<double> w_;
    std::vector<std::vector<std::uint64_t>> blocks_;
    std::vector<std::vector<std::size_t>> index_;    ///< block key t's index in part.keys()
    std::vector<std::vector<ColumnSlices>> slices_;  ///< [block][thread]
    std::vector<ColumnSlices> whole_;  ///< T > 1: [block] over every row (the team alone)
    BlockOrder order_;
    BlockScratch scratch_;                            ///< shared by the threads (disjoint rows)
    std::vector<std::vector<core::ExactSum>> g_, u_;  ///< per thread
    std::size_t ranges_ = 1;  ///< g_ and u_ the last push filled: T, or 1 (every row, alone)
    std::vector<double> deltas_;
    std::vector<std::uint8_t> skip_;      ///< keys of the block the screen skips (push_slices)
    std::unique_ptr<WorkerThreads> own_;  ///< threads > 1 and none shared
    sched::Team* team_ = nullptr;         ///< threads > 1: own_'s or the shared one's
    KktScreen* screen_;
    std::size_t pull_width_;
    bool exact_;
};

}  // namespace rotor::logreg
