#include "apps/lasso/trainer.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "apps/lasso/trainer_internal.h"
#include "core/base/error.h"
#include "core/base/radix_sort.h"
#include "core/lasso/pair_cache.h"

namespace rotor::lasso {
namespace {

/// The stream of the schedulers' Rng: Rng::from({seed, kScheduleStream, round}).
constexpr std::uint64_t kScheduleStream = 0x4C53534F;  // "LSSO"
/// At most this many sweeps over the active set in one cyclic iteration.
constexpr int kMaxActiveSweeps = 1000;
/// The active sweeps stop below this max d_j δ_j² whatever the tolerance: changes of 1e-12
/// (standardised) are rounding, which can go on forever at tol = 0.
constexpr double kInnerTolFloor = 1e-24;
/// A coordinate's pull (combine, soft-threshold, b) costs about as much as pushing this many
/// stored entries (random reads of four p-long arrays): the pull of a round is split over the
/// workers when coordinates x this reach options.inline_entries.
constexpr std::uint64_t kPullEntries = 8;

}  // namespace

using detail::share;

std::uint32_t row_tiles(std::uint32_t rows, std::uint64_t entries, std::uint32_t p,
                        std::uint32_t tile_rows, std::uint32_t column_entries) {
    if (tile_rows == 0 || rows <= tile_rows) return 1;
    const std::uint64_t wanted = (std::uint64_t{rows} + tile_rows - 1) / tile_rows;
    const std::uint64_t affordable =
        entries / (std::uint64_t{std::max(column_entries, 1U)} * std::max(p, 1U));
    return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, std::min(wanted, affordable)));
}

Trainer::Trainer(RawData slice, const TrainOptions& options, sched::Runtime& runtime,
                 comm::Communicator& comm)
    : options_(options),
      runtime_(runtime),
      team_(runtime),
      comm_(comm),
      clocks_(runtime.threads()),
      strads_(options.strads) {
    options_.validate();
    {
        SliceDesign design = build_slice_design(slice, options_.standardize, comm_reducer(comm_));
        samples_ = design.total_samples;
        target_sum_ = design.total_target_sum;
        standardization_ = design.rows.standardization();
        shifts_.assign(design.rows.shifts().begin(), design.rows.shifts().end());
        sq_norms_.assign(design.rows.sq_norms().begin(), design.rows.sq_norms().end());
        const std::vector<std::uint32_t> begin =
            split_by_entries(slice.row_offsets, runtime_.threads());
        std::vector<std::uint64_t> part_entries(begin.size() - 1);
        for (std::size_t w = 0; w + 1 < begin.size(); ++w)
            part_entries[w] = slice.row_offsets[begin[w + 1]] - slice.row_offsets[begin[w]];
        slice = RawData{};  // standardised: the workers' parts are built from the design
        const ColumnsView x = design.rows.columns();
        for (int w = 0; w < runtime_.threads(); ++w) {
            auto worker = std::make_unique<Worker>();
            worker->index = w;
            const std::uint32_t first = begin[w], end = begin[w + 1];
            const std::uint32_t tiles =
                row_tiles(end - first, part_entries[static_cast<std::size_t>(w)], x.columns(),
                          options_.tile_rows, options_.tile_column_entries);
            for (std::uint32_t t = 0; t < tiles; ++t) {
                // Even cuts by rows: a tile's cost is its residuals' footprint.
                const auto cut = [&](std::uint32_t k) {
                    return first +
                           static_cast<std::uint32_t>(std::uint64_t{end - first} * k / tiles);
                };
                worker->tiles.emplace_back(design.rows, cut(t), cut(t + 1));
                const auto targets = worker->tiles.back().targets();
                worker->residuals.insert(worker->residuals.end(), targets.begin(), targets.end());
            }
            workers_.push_back(std::move(worker));
        }
        column_entries_.resize(x.columns());
        for (std::uint32_t j = 0; j < x.columns(); ++j) column_entries_[j] = x.count(j);
        slice_entries_ = x.nnz() + design.rows.samples();
    }
    coefs_ = Coefficients(features());
    if (options_.schedule == Schedule::kStrads)
        sampler_ = std::make_unique<PrioritySampler>(coefs_.last_delta, options_.strads.eta);
    // λ_max from the gradients at b = 0 (q = ỹ).
    const Evaluation at_zero = evaluate_all();
    double m = 0;
    for (const double g : gradient_) m = std::max(m, std::fabs(g));
    lambda_max_ = standardization_.y_scale * m;
    gradient_lambda_ = m;  // b = 0 is the solution at λ_max: the strong rule's λ_old
    gradient_fresh_ = true;
    inner_tol_ = options_.tol;
    last_ = at_zero;
    save_state(at_zero);  // b = 0: where a first rollback returns to
}

Trainer::~Trainer() = default;

std::size_t Trainer::tiles() const {
    std::size_t n = 0;
    for (const auto& w : workers_) n += w->tiles.size();
    return n;
}

ProblemView Trainer::problem() const {
    return {samples_, shifts_, sq_norms_, target_sum_, standardization_.y_scale};
}

std::uint64_t Trainer::entries_of(std::span<const std::uint32_t> coords) const {
    if (!counts_entries()) return 0;
    std::uint64_t n = 0;
    for (const std::uint32_t j : coords) n += column_entries_[j];
    return n;
}

void Trainer::flush_residuals() {
    if (pending_coords_.empty()) return;
    run([&](Worker& me) { me.update(pending_coords_, pending_deltas_); }, pending_entries_);
    pending_coords_.clear();
    pending_deltas_.clear();
    pending_entries_ = 0;
}

void Trainer::reduce(std::vector<core::ExactSum>& total) {
    if (comm_.size() > 1) comm_reducer(comm_).sum(total);
}

void Trainer::combine(std::vector<core::ExactSum>& total, std::size_t size) {
    total.assign(size, core::ExactSum{});
    for (auto& w : workers_) {
        for (std::size_t t = 0; t < size; ++t) total[t].add(w->sums[t]);
    }
}

void Trainer::combine_range(Worker& me, std::size_t size) {
    const auto [lo, hi] = share(size, me.index, workers_.size());
    for (std::size_t t = lo; t < hi; ++t) {
        core::ExactSum s;
        for (const auto& w : workers_) s.add(w->sums[t]);
        total_[t] = s;
    }
}

void Trainer::push_part(Worker& me, std::span<const std::uint32_t> coords) {
    // The last pull's residual updates first (in order: a row's residual sees the same
    // operations whatever the split).
    me.update_and_push(pending_coords_, pending_deltas_, coords);
}

void Trainer::round(std::span<const std::uint32_t> coords) {
    const std::uint64_t entries = entries_of(coords);
    run([&](Worker& me) { push_part(me, coords); }, pending_entries_ + entries);
    pending_entries_ = entries;
    pull_round(coords);
}

void Trainer::pull_round(std::span<const std::uint32_t> coords) {
    const std::size_t size = coords.size();
    total_.resize(size);
    remote_pull_ = {};
    pending_coords_.assign(coords.begin(), coords.end());
    pending_deltas_.resize(size);  // every entry is set by the pull (and exchange_pulled)
    shift_deltas_.resize(size);
    const ProblemView pv = problem();
    const double q_sum = residual_sum(pv, coefs_);
    const auto pull = [&](Worker& me) {
        const auto [lo, hi] = share(size, me.index, workers_.size());
        me.pull = pull_range(pv, options_.lambda, q_sum, pending_coords_, total_, lo, hi, coefs_,
                             pending_deltas_, shift_deltas_);
    };
    // The workers add their sums and pull over their shares of the round's coordinates.
    const std::uint64_t cost = size * kPullEntries;
    if (comm_.size() == 1) {
        run_pull(
            [&](Worker& me) {
                combine_range(me, size);
                pull(me);
            },
            cost);
    } else if (cost < options_.inline_entries) {
        run_pull([&](Worker& me) { combine_range(me, size); }, cost);
        {
            const detail::CommClock clock(comm_s_);
            reduce(total_);
        }
        run_pull(pull, cost);
    } else {
        // Each rank receives only the totals of its share of the round (a reduce-scatter of two
        // limbs a sum, RankSums), pulls it over its workers, and applies the other ranks'
        // changes: no rank converts or pulls the whole round.
        const auto round_sum = [&](std::size_t t) {
            if (workers_.size() == 1) return workers_[0]->sums[t];
            core::ExactSum s;
            for (const auto& w : workers_) s.add(w->sums[t]);
            return s;
        };
        rank_sums_.reset(size, 0, comm_);
        run_pull(
            [&](Worker& me) {
                const auto [lo, hi] = share(size, me.index, workers_.size());
                me.misfits = rank_sums_.encode(lo, hi, round_sum);
            },
            cost);
        std::uint64_t misfits = 0;
        for (const auto& w : workers_) misfits += w->misfits;
        {
            const detail::CommClock clock(comm_s_);
            rank_sums_.reduce(comm_, misfits, round_sum,
                              [](std::size_t) { return core::ExactSum{}; });
        }
        const std::size_t first = rank_sums_.first(), last = rank_sums_.last();
        run_pull(
            [&](Worker& me) {
                const auto [lo, hi] = share(last - first, me.index, workers_.size());
                for (std::size_t t = first + lo; t < first + hi; ++t)
                    total_[t] = rank_sums_.total(t);
                me.pull =
                    pull_range(pv, options_.lambda, q_sum, pending_coords_, total_, first + lo,
                               first + hi, coefs_, pending_deltas_, shift_deltas_);
            },
            (last - first) * kPullEntries);
        double largest = 0;
        for (const auto& w : workers_) largest = std::max(largest, w->pull.largest);
        exchange_pulled(first, last, largest);
    }
    finish_pull(coords, pending_deltas_);
}

void Trainer::exchange_pulled(std::size_t first, std::size_t last, double largest) {
    // One allgather in place: each rank sends its share only (the blocks of RankSums, the share()
    // of every rank): the bit patterns of its δ's and of their c_j δ_j, interleaved, then of its
    // largest d_j δ_j². So a rank reads no shift or norm of another rank's coordinates: applying
    // them touches b and last_delta only.
    const std::size_t size = pending_coords_.size();
    const auto ranks = static_cast<std::size_t>(comm_.size());
    const auto rank = static_cast<std::size_t>(comm_.rank());
    exchange_.resize(2 * size + ranks);
    exchange_counts_.resize(ranks);
    for (std::size_t q = 0; q < ranks; ++q) {
        const auto [lo, hi] = share(size, static_cast<int>(q), ranks);
        exchange_counts_[q] = 2 * (hi - lo) + 1;
    }
    // Rank q's block starts at 2 lo + q.
    std::int64_t* mine = exchange_.data() + 2 * first + rank;
    for (std::size_t t = first; t < last; ++t, mine += 2) {
        mine[0] = std::bit_cast<std::int64_t>(pending_deltas_[t]);
        mine[1] = std::bit_cast<std::int64_t>(shift_deltas_[t]);
    }
    *mine = std::bit_cast<std::int64_t>(largest);
    {
        const detail::CommClock clock(comm_s_);
        comm_.allgather_blocks(exchange_, exchange_counts_);
    }
    for (std::size_t q = 0; q < ranks; ++q) {
        if (q == rank) continue;
        const auto [lo, hi] = share(size, static_cast<int>(q), ranks);
        const std::int64_t* block = exchange_.data() + 2 * lo + q;
        for (std::size_t t = lo; t < hi; ++t, block += 2) {
            pending_deltas_[t] = std::bit_cast<double>(block[0]);
            shift_deltas_[t] = std::bit_cast<double>(block[1]);
        }
        remote_pull_.largest = std::max(remote_pull_.largest, std::bit_cast<double>(*block));
        remote_pull_.changed += apply_pulled(pending_coords_, lo, hi, pending_deltas_, coefs_);
    }
}

void Trainer::finish_pull(std::span<const std::uint32_t> coords, std::span<const double> deltas) {
    add_offset_changes(shift_deltas_, coefs_);
    changed_ += remote_pull_.changed;
    round_largest_ = remote_pull_.largest;
    for (const auto& w : workers_) {
        changed_ += w->pull.changed;
        round_largest_ = std::max(round_largest_, w->pull.largest);
    }
    if (sampler_) {
        for (std::size_t t = 0; t < coords.size(); ++t) sampler_->update(coords[t], deltas[t]);
    }
    gradient_fresh_ = false;
    total_updates_ += coords.size();
}

double Trainer::sweep(std::span<const std::uint32_t> coords) {
    double largest = 0;
    for (const std::uint32_t& j : coords) {
        round({&j, 1});
        const double d = pending_deltas_[0];
        largest = std::max(largest, sq_norms_[j] * d * d);
    }
    return largest;
}

double Trainer::strong_threshold() const {
    // KKT: b_j = 0 is optimal while |g_j| <= λ̃. After a change of λ, the sequential strong rule
    // (Tibshirani et al., JRSS B 2012): keep j when |g_j(λ_old)| >= 2λ̃ − λ̃_old. The same test
    // with λ_old = λ. Coordinates it misses show in the next evaluation (gap, gradients).
    return 2 * options_.lambda / standardization_.y_scale - gradient_lambda_;
}

std::uint64_t Trainer::working_set(std::vector<std::uint32_t>& set) {
    const std::uint32_t p = features();
    if (!options_.active_set || !gradient_fresh_) {
        set.resize(p);
        for (std::uint32_t j = 0; j < p; ++j) set[j] = j;
        return slice_entries_;  // as every column (the rows too: a pass's cost)
    }
    const double threshold = strong_threshold();
    return filter(
        {}, p,
        [&](std::uint32_t j) { return coefs_.b[j] != 0 || std::fabs(gradient_[j]) > threshold; },
        set);
}

std::uint64_t Trainer::keep_nonzero(std::vector<std::uint32_t>& set) {
    std::vector<std::uint32_t> kept;
    const std::uint64_t entries = filter(
        set, features(), [&](std::uint32_t j) { return coefs_.b[j] != 0; }, kept);
    set = std::move(kept);
    return entries;
}

void Trainer::iterate_cyclic() {
    std::vector<std::uint32_t> active;
    working_set(active);
    sweep(active);
    if (!options_.active_set) return;
    for (int s = 0; s < kMaxActiveSweeps; ++s) {
        keep_nonzero(active);
        if (active.empty() || sweep(active) <= std::max(inner_tol_, kInnerTolFloor)) break;
    }
}

std::vector<std::uint32_t> Trainer::strads_schedule(Rng& rng, PrioritySampler& sampler,
                                                    std::span<const std::uint32_t> set,
                                                    std::uint32_t& rejected) {
    std::vector<std::uint32_t> candidates = sampler.draw(rng, strads_.candidates);
    if (!set.empty()) {
        for (std::uint32_t& c : candidates) c = set[c];
    }
    Selection s;
    if (comm_.size() == 1) {
        // Every row is here: only the pairs the greedy scan reaches, each the exact total over
        // the parts, on this thread (a pair is a dot of two short columns).
        s = select_uncorrelated(problem(), candidates, strads_,
                                [&](std::uint32_t a, std::uint32_t b) { return pair_dot(a, b); });
    } else {
        // Every pair the cache lacks, pushed by the workers and reduced over the ranks.
        flush_residuals();
        CandidateDots c = cached_candidate_dots(candidates, pair_cache_);
        if (!c.missing.empty()) {
            std::uint64_t entries = 0;
            for (const CoordinatePair& pr : c.missing) entries += column_entries_[pr.b];
            run(
                [&](Worker& me) {
                    me.sums.assign(c.missing.size(), core::ExactSum{});
                    me.push_pairs(c.missing, me.sums);
                },
                entries);
            combine(total_, c.missing.size());
            {
                const detail::CommClock clock(comm_s_);
                reduce(total_);
            }
            for (std::size_t t = 0; t < c.missing.size(); ++t) {
                c.dots[c.missing_index[t]] = total_[t].value();
                pair_cache_.insert(c.missing[t].a, c.missing[t].b, total_[t].value());
            }
        }
        const auto position = [&](std::uint32_t j) {
            return static_cast<std::size_t>(std::find(candidates.begin(), candidates.end(), j) -
                                            candidates.begin());
        };
        s = select_uncorrelated(
            problem(), candidates, strads_, [&](std::uint32_t a, std::uint32_t b) {
                const std::size_t pa = position(a), pb = position(b);
                return c.dots[pair_index(std::min(pa, pb), std::max(pa, pb), candidates.size())];
            });
    }
    rejected += s.rejected;
    bounded_ += s.bounded;
    return std::move(s.kept);
}

double Trainer::parallel_pass(std::span<const std::uint32_t> set, std::uint64_t set_entries,
                              std::uint32_t& rejected, std::uint64_t& rounds) {
    const auto n = static_cast<std::uint32_t>(set.size());
    const bool all = n == features();  // the identity: the draws are the coordinates
    const std::uint32_t l = std::max<std::uint32_t>(1, std::min(strads_.parallel, n));
    const std::uint64_t count = n == 0 ? 0 : (std::uint64_t{n} + l - 1) / l;
    std::unique_ptr<PrioritySampler> local;  // strads over a subset: its priorities
    if (sampler_ && !all) {
        std::vector<double> deltas(n);
        for (std::uint32_t i = 0; i < n; ++i) deltas[i] = coefs_.last_delta[set[i]];
        local = std::make_unique<PrioritySampler>(deltas, options_.strads.eta);
    }
    const std::span<const std::uint32_t> map = all ? std::span<const std::uint32_t>{} : set;
    double largest = 0;
    // Shotgun's draw of the pass's round k (of Rng stream `first` + k) depends on nothing else:
    // the region's workers draw the rounds ahead, each a share. A round's coordinates are
    // updated from the same residual, so their order is free: ascending, a round reads its
    // columns (offsets, rows, values, coefficients) in address order (docs/lasso.md, "Rounds in
    // address order"). set is ascending, so set[c] keeps c's order.
    const auto shotgun_draw = [&, n, l, all](std::uint64_t round) {
        Rng rng = Rng::from({options_.seed, kScheduleStream, round});
        std::vector<std::uint32_t> coords = schedule_shotgun(rng, n, l);
        std::vector<std::uint32_t> scratch;
        radix_sort(coords, scratch);
        for (std::uint32_t& c : coords) c = all ? c : set[c];
        return coords;
    };
    const RoundSchedule schedule = [&] {
        if (options_.schedule == Schedule::kShotgun) return shotgun_draw(rounds_done_ + rounds);
        Rng rng = Rng::from({options_.seed, kScheduleStream, rounds_done_ + rounds});
        return strads_schedule(rng, local ? *local : *sampler_, map, rejected);
    };
    const RoundDone done = [&](std::span<const std::uint32_t> coords,
                               std::span<const double> deltas) {
        largest = std::max(largest, round_largest_);
        for (std::size_t t = 0; local && t < coords.size(); ++t) {
            const auto at = std::lower_bound(set.begin(), set.end(), coords[t]) - set.begin();
            local->update(static_cast<std::uint32_t>(at), deltas[t]);
        }
        ++rounds;
    };
    // Shotgun on one rank: the pass in one region when its rounds are worth handing to the
    // workers (as run() decides per step: the mean round's stored entries).
    if (options_.schedule == Schedule::kShotgun && workers_.size() > 1 && comm_.size() == 1 &&
        count > 0 && set_entries * l / n >= options_.inline_entries) {
        const std::uint64_t first = rounds_done_ + rounds;
        region_rounds(
            count, [&](std::uint64_t k) { return shotgun_draw(first + k); }, done);
        return largest;
    }
    // Shotgun on several ranks: the ranks draw the pass's rounds ahead, a share each.
    if (options_.schedule == Schedule::kShotgun && comm_.size() > 1 && count > 1) {
        const std::uint64_t first = rounds_done_ + rounds;
        const std::vector<std::uint32_t> draws =
            draw_on_ranks(count, l, [&](std::uint64_t k) { return shotgun_draw(first + k); });
        for (std::uint64_t k = 0; k < count; ++k) {
            const std::span<const std::uint32_t> coords(draws.data() + k * l, l);
            round(coords);
            done(coords, pending_deltas_);
        }
        return largest;
    }
    // Rounds until the pass has made |set| updates: ceil(|set| / L) rounds of L for shotgun;
    // strads' rounds keep up to L (at least the first candidate), so it may take more.
    for (std::uint64_t made = 0; made < n;) {
        const std::vector<std::uint32_t> coords = schedule();
        round(coords);
        done(coords, pending_deltas_);
        made += coords.size();
    }
    return largest;
}

std::vector<std::uint32_t> Trainer::draw_on_ranks(std::uint64_t count, std::uint32_t l,
                                                  const RoundDraw& draw) {
    // Rank q draws rounds [count·q/P, count·(q+1)/P) over its workers; one allgather.
    const auto ranks = static_cast<std::size_t>(comm_.size());
    const auto [lo, hi] = share(count, comm_.rank(), ranks);
    std::vector<std::uint32_t> mine((hi - lo) * l);
    run(
        [&](Worker& me) {
            const auto [a, b] = share(hi - lo, me.index, workers_.size());
            for (std::size_t k = a; k < b; ++k) {
                const std::vector<std::uint32_t> coords = draw(lo + k);
                ROTOR_ASSERT(coords.size() == l, "draw_on_ranks: a round of another size");
                std::copy(coords.begin(), coords.end(), mine.begin() + k * l);
            }
        },
        slice_entries_);
    std::vector<std::vector<std::byte>> all;
    {
        const detail::CommClock clock(comm_s_);
        all = comm_.allgather(std::as_bytes(std::span<const std::uint32_t>(mine)));
    }
    std::vector<std::uint32_t> draws(count * l);
    for (std::size_t q = 0; q < ranks; ++q) {
        const auto [a, b] = share(count, static_cast<int>(q), ranks);
        if (all[q].size() != (b - a) * l * sizeof(std::uint32_t))
            throw CommError(comm_.rank(),
                            fmt::format("shotgun draws of rank {}: {} bytes, not {}", q,
                                        all[q].size(), (b - a) * l * sizeof(std::uint32_t)));
        std::memcpy(draws.data() + a * l, all[q].data(), all[q].size());
    }
    return draws;
}

void Trainer::region_rounds(std::uint64_t count, const RoundDraw& draw, const RoundDone& done) {
    const std::size_t workers = workers_.size();
    std::vector<std::vector<std::uint32_t>> coords(count);  // coords[k]: round k's draw
    // Round k's changes in deltas[k & 1]; round k − 1's stay readable while the workers subtract
    // them from their residuals. Round −1: what earlier steps left pending.
    std::array<std::vector<double>, 2> deltas;
    const std::vector<std::uint32_t> before = std::move(pending_coords_);
    deltas[1] = std::move(pending_deltas_);
    pending_entries_ = 0;
    const ProblemView pv = problem();
    double q_sum = 0;
    // Worker 0 after its push: the end of round k − 1's pull, then round k's buffers.
    const auto serial = [&](std::uint64_t k) {
        if (k > 0) {
            finish_pull(coords[k - 1], deltas[(k - 1) & 1]);
            done(coords[k - 1], deltas[(k - 1) & 1]);
        }
        const std::size_t size = coords[k].size();
        deltas[k & 1].resize(size);  // every entry is set by the pull
        shift_deltas_.resize(size);
        total_.resize(size);
        q_sum = residual_sum(pv, coefs_);
    };
    // Step 0: the draws, a share each; then rounds k: step 2k + 1 pushes (share 0 also runs
    // serial(k)), step 2k + 2 pulls. A step starts once every share of the last is done.
    const sched::TeamRun run = team_.run_steps(1 + 2 * count, [&](std::size_t step, int part) {
        Worker& me = *workers_[static_cast<std::size_t>(part)];
        const sched::PhaseTimer timer(clocks_.clock(part), sched::Phase::kCompute);
        if (step == 0) {
            for (auto k = static_cast<std::uint64_t>(part); k < count; k += workers)
                coords[k] = draw(k);
            return;
        }
        const std::uint64_t k = (step - 1) / 2;
        const std::span<const std::uint32_t> now = coords[k];
        if ((step - 1) % 2 == 0) {
            me.update_and_push(k == 0 ? before : coords[k - 1], deltas[(k - 1) & 1], now);
            if (part == 0) serial(k);
            return;
        }
        combine_range(me, now.size());
        const auto [lo, hi] = share(now.size(), me.index, workers);
        me.pull = pull_range(pv, options_.lambda, q_sum, now, total_, lo, hi, coefs_, deltas[k & 1],
                             shift_deltas_);
    });
    for (std::size_t w = 0; w < workers; ++w)
        clocks_.clock(static_cast<int>(w)).add(sched::Phase::kWait, run.wait_s[w]);
    ++handoffs_;
    barrier_sleeps_ += run.sleeps;
    std::vector<double>& last = deltas[(count - 1) & 1];
    finish_pull(coords[count - 1], last);
    done(coords[count - 1], last);
    pending_coords_ = std::move(coords[count - 1]);
    pending_deltas_ = std::move(last);
    pending_entries_ = entries_of(pending_coords_);
}

void Trainer::iterate_parallel(std::uint32_t& rejected, std::uint64_t& rounds) {
    const std::uint64_t start = total_updates_;
    std::vector<std::uint32_t> active;
    const std::uint64_t first_entries = working_set(active);
    parallel_pass(active, first_entries, rejected, rounds);
    if (!options_.active_set) return;
    // At most p updates an iteration, as without active sets: parallel updates of correlated
    // columns settle slowly, and the evaluation (which tightens the inner tolerance) should come.
    for (int s = 0; s < kMaxActiveSweeps && total_updates_ - start < features(); ++s) {
        const std::uint64_t entries = keep_nonzero(active);
        if (active.empty()) break;
        const double largest = parallel_pass(active, entries, rejected, rounds);
        // Not finite: the updates diverged, which the next evaluation reports.
        if (!std::isfinite(largest) || largest <= std::max(inner_tol_, kInnerTolFloor)) break;
    }
}

double Trainer::pair_dot(std::uint32_t a, std::uint32_t b) {
    if (const double* d = pair_cache_.find(a, b)) return *d;
    // Scatter the shorter column, walk the longer (the same terms either way).
    const CoordinatePair pair =
        column_entries_[a] <= column_entries_[b] ? CoordinatePair{a, b} : CoordinatePair{b, a};
    core::ExactSum total;
    for (auto& w : workers_) {
        core::ExactSum part;
        w->push_pairs({&pair, 1}, {&part, 1});
        total.add(part);
    }
    pair_cache_.insert(a, b, total.value());
    return total.value();
}

train::Record Trainer::iterate() {
    train::Record r;
    clocks_.begin_iteration();
    const std::uint64_t updates_before = total_updates_;
    const std::uint64_t handoffs_before = handoffs_, sleeps_before = barrier_sleeps_;
    comm_s_ = 0;
    changed_ = 0;
    std::uint32_t rejected = 0;
    bounded_ = 0;
    std::uint64_t rounds = 0;
    if (options_.schedule == Schedule::kCyclic) {
        iterate_cyclic();
        rounds = total_updates_ - updates_before;
    } else {
        iterate_parallel(rejected, rounds);
    }
    flush_residuals();
    r.processed = total_updates_ - updates_before;
    r.set("changed", changed_);
    rounds_done_ += rounds;
    ++iterations_done_;
    r.iter = iterations_done_;
    r.set_times(clocks_.end_iteration());
    r.finish(r.processed);
    r.set("rounds", static_cast<double>(rounds));
    r.set("handoffs", static_cast<double>(handoffs_ - handoffs_before));
    r.set("barrier_sleeps", static_cast<double>(barrier_sleeps_ - sleeps_before));
    if (comm_.size() > 1) r.set("comm_s", comm_s_);
    if (options_.schedule == Schedule::kStrads) {
        r.set("rejected", rejected);
        r.set("bounded", bounded_);
        const double looked = double(pair_cache_.hits() + pair_cache_.misses());
        r.set("pair_cache_hit_rate", looked > 0 ? double(pair_cache_.hits()) / looked : 0.0);
    }
    r.set("updates_total", static_cast<double>(total_updates_));
    return r;
}

}  // namespace rotor::lasso
