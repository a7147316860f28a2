// Private to the Lasso trainer's sources (apps/lasso/trainer*.cpp): a worker's state and the
// member templates that hand steps to the workers. Not part of the trainer's interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "apps/lasso/trainer.h"
#include "core/base/timer.h"
#include "core/lasso/cd.h"
#include "core/lasso/pair_cache.h"

namespace rotor::lasso {
namespace detail {

/// Adds the seconds of its scope to `total`: a collective's time on this rank (the transfer and
/// the wait for the other ranks), for the records' comm_s and eval_comm_s.
class CommClock {
  public:
    explicit CommClock(double& total) : total_(total) {}
    CommClock(const CommClock&) = delete;
    CommClock& operator=(const CommClock&) = delete;
    ~CommClock() { total_ += watch_.seconds(); }

  private:
    double& total_;
    Stopwatch watch_;
};

/// Worker w's share [first, second) of n items cut into `workers` contiguous ranges (also a
/// rank's share of a round, with w = rank and workers = ranks).
inline std::pair<std::size_t, std::size_t> share(std::size_t n, int w, std::size_t workers) {
    const auto k = static_cast<std::size_t>(w);
    return {n * k / workers, n * (k + 1) / workers};
}

}  // namespace detail

/// One worker's rows, residuals and push buffers. Its rows are cut into tiles of at most
/// TrainOptions::tile_rows rows (one DesignPart each, over consecutive rows of `residuals`) and
/// every step walks the tiles in order, so the residuals a step reads at random stay in cache
/// (docs/lasso.md, "Row tiles"). Exact sums and a row's operations in the same order: the same
/// bits for any tiling.
struct Trainer::Worker {
    int index = 0;
    std::vector<DesignPart> tiles;  ///< consecutive rows: tile t's first is row_begin() − tile 0's
    std::vector<double> residuals;
    std::vector<double> saved_residuals;  ///< shotgun, strads: at the last accepted evaluation
    std::vector<core::ExactSum> sums;
    EvalSums eval;
    std::vector<double> scratch;
    PullStats pull;                   ///< its share of the last round's pull
    CoordinateStats stats;            ///< its share of the last evaluation's coordinates
    std::uint64_t misfits = 0;        ///< sums of its share RankSums::encode could not narrow
    std::vector<std::uint32_t> kept;  ///< its share of a filter (Trainer::filter)
    std::uint64_t kept_entries = 0;   ///< and their stored entries

    /// Tile t with its residuals.
    PartView view(std::size_t t) {
        const std::size_t first = tiles[t].row_begin() - tiles[0].row_begin();
        return tiles[t].view(std::span<double>(residuals).subspan(first, tiles[t].rows()));
    }
    /// The residual update of a pull (cd.h update_residuals) over every tile.
    void update(std::span<const std::uint32_t> coords, std::span<const double> deltas) {
        for (std::size_t t = 0; t < tiles.size(); ++t) update_residuals(view(t), coords, deltas);
    }
    /// A round's push: the last pull's update (`before`, `deltas`; none when empty), then
    /// sums[k] = x̃_jᵀq over the worker's rows for j = coords[k]. Tile after tile, each updated
    /// just before it is pushed, while its residuals are in cache.
    void update_and_push(std::span<const std::uint32_t> before, std::span<const double> deltas,
                         std::span<const std::uint32_t> coords) {
        sums.resize(coords.size());  // overwritten by the first tile
        for (std::size_t t = 0; t < tiles.size(); ++t) {
            if (!before.empty()) update_residuals(view(t), before, deltas);
            if (t == 0)
                push_gradients_into(view(t), coords, sums);
            else
                push_gradients(view(t), coords, sums);
        }
    }
    /// sums[k] += the worker's pair dots (pair_cache.h push_pair_dots) over every tile.
    void push_pairs(std::span<const CoordinatePair> pairs, std::span<core::ExactSum> out) {
        for (std::size_t t = 0; t < tiles.size(); ++t) push_pair_dots(view(t), pairs, out, scratch);
    }
};

// Inline: called once a column in the evaluation's loops.
inline core::ExactSum Trainer::column_total(std::size_t j) const {
    if (workers_.size() == 1) return workers_[0]->eval.xq[j];
    core::ExactSum s;
    for (const auto& w : workers_) s.add(w->eval.xq[j]);
    return s;
}

template <class Fn>
void Trainer::run(const Fn& fn, std::uint64_t entries) {
    if (workers_.size() == 1 || entries < options_.inline_entries) {
        // No hand-off: every part here, in order; its time counts as worker 0's.
        const sched::PhaseTimer timer(clocks_.clock(0), sched::Phase::kCompute);
        for (auto& w : workers_) fn(*w);
        return;
    }
    ++handoffs_;
    // A part is taken by whichever worker (or this thread) runs: its clock is the part's.
    team_.run([&](int part) {
        const sched::PhaseTimer timer(clocks_.clock(part), sched::Phase::kCompute);
        fn(*workers_[static_cast<std::size_t>(part)]);
    });
}

template <class Keep>
std::uint64_t Trainer::filter(std::span<const std::uint32_t> from, std::uint32_t p,
                              const Keep& keep, std::vector<std::uint32_t>& out) {
    // Each worker filters a contiguous share; the shares are joined in order.
    const std::size_t n = from.empty() ? p : from.size();
    const bool count_entries = counts_entries();
    run(
        [&](Worker& me) {
            const auto [lo, hi] = detail::share(n, me.index, workers_.size());
            me.kept.clear();
            me.kept_entries = 0;
            for (std::size_t i = lo; i < hi; ++i) {
                const auto j = from.empty() ? static_cast<std::uint32_t>(i) : from[i];
                if (!keep(j)) continue;
                me.kept.push_back(j);
                if (count_entries) me.kept_entries += column_entries_[j];
            }
        },
        n);
    std::size_t size = 0;
    std::uint64_t entries = 0;
    for (const auto& w : workers_) {
        size += w->kept.size();
        entries += w->kept_entries;
    }
    out.resize(size);
    std::size_t at = 0;
    for (const auto& w : workers_) {
        std::copy(w->kept.begin(), w->kept.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
        at += w->kept.size();
    }
    return entries;
}

template <class Fn>
void Trainer::run_pull(const Fn& fn, std::uint64_t entries) {
    if (workers_.size() > 1 && entries >= options_.inline_entries) {
        run(fn, entries);
        return;
    }
    for (auto& w : workers_) fn(*w);  // small: no hand-off and no clock (cyclic's rounds)
}

}  // namespace rotor::lasso
