// The dynamic block scheduler of HarpLDA+ (Peng et al., VLDB 2017, section 4.2), in the shape of
// LIBMF's Scheduler (get_job / put_job): an L × L grid of blocks, per-row and per-column busy
// flags and per-block done flags. An idle worker takes a random block whose row and column are
// both idle, processes it, releases it. No two blocks sharing a row or a column ever run at the
// same time, so the owner of a row (doc-topic rows) and of a column (word-topic rows) is unique.
//
// Also DiagonalSchedule, the deterministic alternative: L rounds of L pairwise independent blocks.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "core/base/rng.h"

namespace rotor::sched {

/// One block of the grid: row group and column group, both in [0, L).
struct Block {
    int row = 0;
    int col = 0;
    friend bool operator==(const Block&, const Block&) = default;
};

/// A block handed out by BlockScheduler::acquire_job(): the block and which of the round's
/// sweeps over it this run is (0-based; always 0 in a one-sweep round).
struct Job {
    Block block;
    int sweep = 0;
};

/// One block's run, as recorded by BlockScheduler when recording is on. Times are seconds since
/// the scheduler was constructed (steady clock), taken under the scheduler's lock, so for two
/// blocks sharing a row or column one's end_s <= the other's start_s.
struct ScheduleEvent {
    Block block;
    int sweep = 0;           ///< Job::sweep of this run
    int worker = -1;         ///< the `worker` argument of acquire(), -1 if not given
    double start_s = 0;      ///< when acquire() handed the block out
    double end_s = 0;        ///< when release() took it back
    bool completed = false;  ///< the `completed` argument of release()
};

/// The dynamic scheduler. Thread-safe: any number of workers call acquire()/release()
/// concurrently; reset() and the recording calls must not race with a busy block (asserted).
/// One mutex guards everything: blocks take milliseconds, an acquire/release pair about a
/// microsecond (see docs/scheduler.md for measurements). acquire() costs O(1) expected while
/// many blocks are free (rejection sampling), O(blocks not done) otherwise.
class BlockScheduler {
  public:
    /// An L × L grid with every block done (call reset() to start a round). Throws ConfigError
    /// (key "blocks") for side < 1.
    explicit BlockScheduler(int side);

    int side() const noexcept { return side_; }

    /// Starts an iteration: every block active and not done, no stop. Precondition: no block busy.
    void reset();
    /// Starts a round of `sweeps` >= 1 sweeps over every block, without a barrier between them
    /// (docs/scheduler.md, "Pipelined sweeps"): a block may start its next sweep as soon as its
    /// row and column are free, provided it is at most one sweep ahead of the slowest block, and
    /// blocks of the slowest sweep are preferred. So the tail of one sweep overlaps the start of
    /// the next; only the last sweep of the round ends with idle workers. Throws ConfigError
    /// (key "iterations") for sweeps < 1. Precondition: no block busy.
    void reset_sweeps(int sweeps);
    /// Starts a round in which only the blocks whose column is in `cols` are active (e.g. the
    /// columns of the one slice a rank holds). Duplicates are ignored; a column outside
    /// [0, L) throws ConfigError (key "blocks"). Precondition: no block busy.
    void reset_columns(std::span<const int> cols);
    /// Starts a round with exactly `blocks` active. Same rules as reset_columns().
    void reset_blocks(std::span<const Block> blocks);

    /// Hands out a uniformly random block among the active, not-done blocks whose row and column
    /// are both free, and marks its row and column busy. If none is free but some are not done,
    /// waits until a release() frees one. Returns nullopt when every active block is done or
    /// stop() was called. `worker` is only used for recording.
    std::optional<Block> acquire(Rng& rng, int worker = -1);
    /// acquire(), also saying which sweep of the round the block is in.
    std::optional<Job> acquire_job(Rng& rng, int worker = -1);
    /// Gives back a block returned by acquire(). `completed` = false leaves it not done, so it
    /// is handed out again later in the round (e.g. a worker stopped by the timer mid-block).
    /// Returns s >= 1 when this release completed sweep s of every active block (the sweep's
    /// last block), else 0. In a one-sweep round, 1 on the round's last completed block.
    int release(Block block, bool completed);
    /// Sweeps that every active block has completed in this round.
    int sweeps_done() const;

    /// Makes every acquire(), current and future, return nullopt until the next reset().
    /// Busy blocks stay busy until released. Safe from any thread (e.g. a timer thread).
    void stop();
    bool stopped() const;
    /// Active blocks not yet done (busy ones included).
    int remaining() const;
    /// Blocks currently held by workers.
    int busy() const;

    /// Turns recording of ScheduleEvents on or off (off by default); clears the record.
    void set_recording(bool on);
    /// The events recorded since recording was turned on or last taken; clears them.
    /// Precondition: no block busy.
    std::vector<ScheduleEvent> take_record();

  private:
    using Clock = std::chrono::steady_clock;
    int id(Block b) const noexcept { return b.row * side_ + b.col; }
    bool is_free(int block_id) const noexcept;
    void reset_locked(const std::vector<int>& active, int sweeps);
    double now_s() const noexcept;

    const int side_;
    const Clock::time_point epoch_;
    mutable std::mutex mutex_;
    std::condition_variable freed_;
    std::vector<std::uint8_t> row_busy_;
    std::vector<std::uint8_t> col_busy_;
    std::vector<int> pending_;     ///< active blocks not done, any order
    std::vector<int> pending_at_;  ///< position of each block in pending_, -1 if absent
    std::vector<int> candidates_;  ///< scratch for acquire()
    std::vector<int> done_;        ///< per block: sweeps completed in this round
    int sweeps_ = 1;               ///< sweeps each active block does in this round
    int min_done_ = 0;             ///< min of done_ over active blocks
    int at_min_ = 0;               ///< active blocks with done_ == min_done_
    int busy_ = 0;
    bool stopped_ = false;
    bool recording_ = false;
    std::vector<ScheduleEvent> events_;
    std::vector<int> open_event_;  ///< per block: index in events_ of its open run, -1 if none
};

/// The deterministic schedule: L rounds; in round r the blocks (i, (i + r) mod L), i = 0..L-1,
/// which share no row and no column, so they can run in parallel in any order. After L rounds
/// every block has run exactly once. Stateless and thread-safe.
class DiagonalSchedule {
  public:
    /// Throws ConfigError (key "blocks") for side < 1.
    explicit DiagonalSchedule(int side);
    int side() const noexcept { return side_; }
    int rounds() const noexcept { return side_; }
    /// Block i of round r (0 <= r, i < L).
    Block block(int round, int i) const;
    /// All L blocks of round r, by row.
    std::vector<Block> round(int r) const;

  private:
    int side_;
};

}  // namespace rotor::sched
