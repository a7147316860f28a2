#include "sched/block_scheduler.h"

#include <string>

#include "core/base/error.h"

namespace rotor::sched {
namespace {

/// Random picks acquire() tries before scanning every pending block.
constexpr int kRejectionTries = 8;

void check_side(int side) {
    if (side < 1) {
        throw ConfigError("blocks",
                          "the grid side must be at least 1, got " + std::to_string(side));
    }
}

}  // namespace

BlockScheduler::BlockScheduler(int side) : side_(side), epoch_(Clock::now()) {
    check_side(side);
    const auto n = static_cast<std::size_t>(side) * static_cast<std::size_t>(side);
    row_busy_.assign(static_cast<std::size_t>(side), 0);
    col_busy_.assign(static_cast<std::size_t>(side), 0);
    pending_at_.assign(n, -1);
    done_.assign(n, 0);
    open_event_.assign(n, -1);
    pending_.reserve(n);
    candidates_.reserve(n);
}

double BlockScheduler::now_s() const noexcept {
    return std::chrono::duration<double>(Clock::now() - epoch_).count();
}

bool BlockScheduler::is_free(int block_id) const noexcept {
    return row_busy_[static_cast<std::size_t>(block_id / side_)] == 0 &&
           col_busy_[static_cast<std::size_t>(block_id % side_)] == 0;
}

void BlockScheduler::reset_locked(const std::vector<int>& active, int sweeps) {
    ROTOR_ASSERT(busy_ == 0, "BlockScheduler reset while a block is busy");
    for (int b : pending_) pending_at_[static_cast<std::size_t>(b)] = -1;
    pending_.clear();
    for (int b : active) {
        if (pending_at_[static_cast<std::size_t>(b)] >= 0) continue;
        pending_at_[static_cast<std::size_t>(b)] = static_cast<int>(pending_.size());
        pending_.push_back(b);
        done_[static_cast<std::size_t>(b)] = 0;
    }
    sweeps_ = sweeps;
    min_done_ = 0;
    at_min_ = static_cast<int>(pending_.size());
    stopped_ = false;
}

void BlockScheduler::reset() { reset_sweeps(1); }

void BlockScheduler::reset_sweeps(int sweeps) {
    if (sweeps < 1) {
        throw ConfigError("iterations",
                          "a round needs at least one sweep, got " + std::to_string(sweeps));
    }
    std::vector<int> all(static_cast<std::size_t>(side_) * static_cast<std::size_t>(side_));
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    std::lock_guard lock(mutex_);
    reset_locked(all, sweeps);
}

void BlockScheduler::reset_columns(std::span<const int> cols) {
    std::vector<int> active;
    for (int c : cols) {
        if (c < 0 || c >= side_) {
            throw ConfigError("blocks", "column " + std::to_string(c) +
                                            " outside the grid of side " + std::to_string(side_));
        }
        for (int r = 0; r < side_; ++r) active.push_back(id(Block{r, c}));
    }
    std::lock_guard lock(mutex_);
    reset_locked(active, 1);
}

void BlockScheduler::reset_blocks(std::span<const Block> blocks) {
    std::vector<int> active;
    for (Block b : blocks) {
        if (b.row < 0 || b.row >= side_ || b.col < 0 || b.col >= side_) {
            throw ConfigError("blocks", "block (" + std::to_string(b.row) + ", " +
                                            std::to_string(b.col) + ") outside the grid of side " +
                                            std::to_string(side_));
        }
        active.push_back(id(b));
    }
    std::lock_guard lock(mutex_);
    reset_locked(active, 1);
}

std::optional<Block> BlockScheduler::acquire(Rng& rng, int worker) {
    const std::optional<Job> job = acquire_job(rng, worker);
    if (!job) return std::nullopt;
    return job->block;
}

std::optional<Job> BlockScheduler::acquire_job(Rng& rng, int worker) {
    std::unique_lock lock(mutex_);
    for (;;) {
        if (stopped_ || pending_.empty()) return std::nullopt;
        // Blocks of the slowest sweep come first. Rejection sampling: a uniform pending block,
        // kept only if free and in the slowest sweep, is a uniform such block. Early in a sweep
        // most pending blocks qualify, so this is O(1); when a few tries fail, the exact
        // O(pending) scan below decides (also uniform, also detects "none"). With one sweep
        // every pending block is in the slowest sweep.
        const auto slowest = [&](int b) { return done_[static_cast<std::size_t>(b)] == min_done_; };
        int chosen = -1;
        for (int t = 0; t < kRejectionTries && chosen < 0; ++t) {
            const int b = pending_[rng.below(pending_.size())];
            if (is_free(b) && slowest(b)) chosen = b;
        }
        if (chosen < 0) {
            // The slowest sweep's free blocks, else those one sweep ahead; a block two sweeps
            // ahead waits for the slowest sweep to complete.
            for (const int ahead : {0, 1}) {
                candidates_.clear();
                for (int b : pending_) {
                    if (is_free(b) && done_[static_cast<std::size_t>(b)] == min_done_ + ahead)
                        candidates_.push_back(b);
                }
                if (!candidates_.empty()) {
                    chosen = candidates_[rng.below(candidates_.size())];
                    break;
                }
            }
        }
        if (chosen >= 0) {
            const Block block{chosen / side_, chosen % side_};
            const int sweep = done_[static_cast<std::size_t>(chosen)];
            row_busy_[static_cast<std::size_t>(block.row)] = 1;
            col_busy_[static_cast<std::size_t>(block.col)] = 1;
            ++busy_;
            if (recording_) {
                open_event_[static_cast<std::size_t>(chosen)] = static_cast<int>(events_.size());
                events_.push_back(ScheduleEvent{block, sweep, worker, now_s(), 0.0, false});
            }
            return Job{block, sweep};
        }
        // Every pending block conflicts with a busy one or is waiting for the slowest sweep,
        // which has a busy block; either way busy_ > 0 and a release will come.
        ROTOR_ASSERT(busy_ > 0, "pending blocks but none free and none busy");
        freed_.wait(lock);
    }
}

int BlockScheduler::sweeps_done() const {
    std::lock_guard lock(mutex_);
    return pending_.empty() ? sweeps_ : min_done_;
}

int BlockScheduler::release(Block block, bool completed) {
    int sweep_completed = 0;
    {
        std::lock_guard lock(mutex_);
        ROTOR_ASSERT(block.row >= 0 && block.row < side_ && block.col >= 0 && block.col < side_,
                     "released block outside the grid");
        const int b = id(block);
        ROTOR_ASSERT(row_busy_[static_cast<std::size_t>(block.row)] != 0 &&
                         col_busy_[static_cast<std::size_t>(block.col)] != 0,
                     "released a block that was not acquired");
        row_busy_[static_cast<std::size_t>(block.row)] = 0;
        col_busy_[static_cast<std::size_t>(block.col)] = 0;
        --busy_;
        if (completed) {
            const int at = pending_at_[static_cast<std::size_t>(b)];
            ROTOR_ASSERT(at >= 0, "completed a block that was not pending");
            int& done = done_[static_cast<std::size_t>(b)];
            const bool was_slowest = done++ == min_done_;
            if (done == sweeps_) {
                const int last = pending_.back();
                pending_[static_cast<std::size_t>(at)] = last;
                pending_at_[static_cast<std::size_t>(last)] = at;
                pending_.pop_back();
                pending_at_[static_cast<std::size_t>(b)] = -1;
            }
            if (was_slowest && --at_min_ == 0) {
                // The slowest sweep is complete: the blocks one sweep ahead become the slowest.
                sweep_completed = ++min_done_;
                at_min_ = 0;
                for (int p : pending_) at_min_ += done_[static_cast<std::size_t>(p)] == min_done_;
            }
        }
        int& open = open_event_[static_cast<std::size_t>(b)];
        if (recording_ && open >= 0) {
            events_[static_cast<std::size_t>(open)].end_s = now_s();
            events_[static_cast<std::size_t>(open)].completed = completed;
        }
        open = -1;
    }
    // A freed row and a freed column can unblock two different waiters.
    freed_.notify_all();
    return sweep_completed;
}

void BlockScheduler::stop() {
    {
        std::lock_guard lock(mutex_);
        stopped_ = true;
    }
    freed_.notify_all();
}

bool BlockScheduler::stopped() const {
    std::lock_guard lock(mutex_);
    return stopped_;
}

int BlockScheduler::remaining() const {
    std::lock_guard lock(mutex_);
    return static_cast<int>(pending_.size());
}

int BlockScheduler::busy() const {
    std::lock_guard lock(mutex_);
    return busy_;
}

void BlockScheduler::set_recording(bool on) {
    std::lock_guard lock(mutex_);
    ROTOR_ASSERT(busy_ == 0, "BlockScheduler recording toggled while a block is busy");
    recording_ = on;
    events_.clear();
}

std::vector<ScheduleEvent> BlockScheduler::take_record() {
    std::lock_guard lock(mutex_);
    ROTOR_ASSERT(busy_ == 0, "BlockScheduler record taken while a block is busy");
    std::vector<ScheduleEvent> out;
    out.swap(events_);
    return out;
}

DiagonalSchedule::DiagonalSchedule(int side) : side_(side) { check_side(side); }

Block DiagonalSchedule::block(int round, int i) const {
    ROTOR_ASSERT(round >= 0 && round < side_ && i >= 0 && i < side_, "diagonal index out of range");
    return Block{i, (i + round) % side_};
}

std::vector<Block> DiagonalSchedule::round(int r) const {
    std::vector<Block> blocks;
    blocks.reserve(static_cast<std::size_t>(side_));
    for (int i = 0; i < side_; ++i) blocks.push_back(block(r, i));
    return blocks;
}

}  // namespace rotor::sched
