#include "apps/lasso/trainer.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/base/error.h"
#include "core/lasso/pair_cache.h"
#include "sched/worker_barrier.h"

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

/// Worker w's share [first, second) of n items cut into `workers` contiguous ranges.
std::pair<std::size_t, std::size_t> share(std::size_t n, int w, std::size_t workers) {
    const auto k = static_cast<std::size_t>(w);
    return {n * k / workers, n * (k + 1) / workers};
}

}  // namespace

std::string_view schedule_name(Schedule s) {
    switch (s) {
        case Schedule::kCyclic:
            return "cyclic";
        case Schedule::kShotgun:
            return "shotgun";
        case Schedule::kStrads:
            return "strads";
    }
    return "?";
}

Schedule parse_schedule(std::string_view name) {
    if (name == "cyclic") return Schedule::kCyclic;
    if (name == "shotgun") return Schedule::kShotgun;
    if (name == "strads") return Schedule::kStrads;
    throw ConfigError("--schedule", "must be cyclic, shotgun or strads");
}

StopRule parse_stop_rule(std::string_view name) {
    if (name == "gap") return StopRule::kGap;
    if (name == "kkt") return StopRule::kKkt;
    throw ConfigError("--stop", "must be gap or kkt");
}

std::string_view stop_rule_name(StopRule s) { return s == StopRule::kGap ? "gap" : "kkt"; }

void TrainOptions::validate() const {
    if (!(lambda >= 0) || !std::isfinite(lambda))
        throw ConfigError("--lambda", "must be a finite number >= 0");
    if (!(tol >= 0)) throw ConfigError("--tol", "must be >= 0");
    if (max_iterations == 0) throw ConfigError("--max-iterations", "must be at least 1");
    if (schedule == Schedule::kStrads) strads.validate();
    if (schedule == Schedule::kShotgun && strads.parallel == 0)
        throw ConfigError("--parallel", "must be at least 1");
}

std::vector<std::uint32_t> split_by_entries(std::span<const std::uint64_t> row_offsets, int parts) {
    ROTOR_ASSERT(parts >= 1 && !row_offsets.empty(), "split_by_entries: no parts or no offsets");
    const auto rows = static_cast<std::uint32_t>(row_offsets.size() - 1);
    const auto cost = [&](std::uint32_t i) { return row_offsets[i] + i; };  // entries + 1 per row
    const std::uint64_t total = cost(rows);
    std::vector<std::uint32_t> begin(static_cast<std::size_t>(parts) + 1, rows);
    begin[0] = 0;
    for (int q = 1; q < parts; ++q) {
        const auto qq = static_cast<std::uint64_t>(q), pp = static_cast<std::uint64_t>(parts);
        const std::uint64_t target = total / pp * qq + total % pp * qq / pp;
        std::uint32_t lo = begin[q - 1], hi = rows;  // first i with cost(i) >= target
        while (lo < hi) {
            const std::uint32_t mid = lo + (hi - lo) / 2;
            if (cost(mid) < target) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        begin[q] = lo;
    }
    return begin;
}

Reducer comm_reducer(comm::Communicator& comm) {
    if (comm.size() == 1) return Reducer::single();
    Reducer r;
    r.sum = [&comm](std::span<ExactSum> sums) {
        std::vector<std::int64_t> limbs(sums.size() * ExactSum::kLimbs);
        for (std::size_t i = 0; i < sums.size(); ++i) {
            const auto l = sums[i].to_limbs();
            std::copy(l.begin(), l.end(), limbs.begin() + static_cast<std::ptrdiff_t>(i * 4));
        }
        comm.allreduce_sum(limbs);
        for (std::size_t i = 0; i < sums.size(); ++i) {
            std::array<std::int64_t, ExactSum::kLimbs> l{};
            std::copy_n(limbs.begin() + static_cast<std::ptrdiff_t>(i * 4), 4, l.begin());
            sums[i] = ExactSum::from_limbs(l);
        }
    };
    r.max = [&comm](std::span<double> values) { comm.allreduce_max(values); };
    return r;
}

/// One worker's rows, residuals and push buffers.
struct Trainer::Worker {
    int index = 0;
    DesignPart part;
    std::vector<double> residuals;
    std::vector<ExactSum> sums;
    EvalSums eval;
    std::vector<double> scratch;
    PullStats pull;         ///< its share of the last round's pull
    CoordinateStats stats;  ///< its share of the last evaluation's coordinates

    PartView view() { return part.view(residuals); }
};

Trainer::Trainer(const RawData& slice, const TrainOptions& options, sched::Runtime& runtime,
                 comm::Communicator& comm)
    : options_(options), runtime_(runtime), comm_(comm), clocks_(runtime.threads()) {
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
        for (int w = 0; w < runtime_.threads(); ++w) {
            auto worker =
                std::make_unique<Worker>(Worker{w,
                                                DesignPart(design.rows, begin[w], begin[w + 1]),
                                                {},
                                                {},
                                                EvalSums(0),
                                                {},
                                                {},
                                                {}});
            worker->residuals.assign(worker->part.targets().begin(), worker->part.targets().end());
            workers_.push_back(std::move(worker));
        }
        const ColumnsView x = design.rows.columns();
        column_entries_.resize(x.columns());
        for (std::uint32_t j = 0; j < x.columns(); ++j) column_entries_[j] = x.count(j);
        slice_entries_ = x.nnz() + design.rows.samples();
    }
    coefs_ = Coefficients(features());
    if (options_.schedule == Schedule::kStrads)
        sampler_ = std::make_unique<PrioritySampler>(coefs_.last_delta, options_.strads.eta);
    // λ_max from the gradients at b = 0 (q = ỹ).
    evaluate_all();
    double m = 0;
    for (const double g : gradient_) m = std::max(m, std::fabs(g));
    lambda_max_ = standardization_.y_scale * m;
    gradient_lambda_ = m;  // b = 0 is the solution at λ_max: the strong rule's λ_old
    gradient_fresh_ = true;
    inner_tol_ = options_.tol;
}

Trainer::~Trainer() = default;

ProblemView Trainer::problem() const {
    return {samples_, shifts_, sq_norms_, target_sum_, standardization_.y_scale};
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
    runtime_.run_workers([&](int w) {
        const sched::PhaseTimer timer(clocks_.clock(w), sched::Phase::kCompute);
        fn(*workers_[static_cast<std::size_t>(w)]);
    });
}

std::uint64_t Trainer::entries_of(std::span<const std::uint32_t> coords) const {
    std::uint64_t n = 0;
    for (const std::uint32_t j : coords) n += column_entries_[j];
    return n;
}

void Trainer::flush_residuals() {
    if (pending_coords_.empty()) return;
    run([&](Worker& me) { update_residuals(me.view(), pending_coords_, pending_deltas_); },
        pending_entries_);
    pending_coords_.clear();
    pending_deltas_.clear();
    pending_entries_ = 0;
}

void Trainer::reduce(std::vector<ExactSum>& total) {
    if (comm_.size() > 1) comm_reducer(comm_).sum(total);
}

void Trainer::combine(std::vector<ExactSum>& total, std::size_t size) {
    total.assign(size, ExactSum{});
    for (auto& w : workers_) {
        for (std::size_t t = 0; t < size; ++t) total[t].add(w->sums[t]);
    }
}

void Trainer::combine_range(Worker& me, std::size_t size) {
    const auto [lo, hi] = share(size, me.index, workers_.size());
    for (std::size_t t = lo; t < hi; ++t) {
        ExactSum s;
        for (const auto& w : workers_) s.add(w->sums[t]);
        total_[t] = s;
    }
}

template <class Fn>
void Trainer::run_pull(const Fn& fn, std::uint64_t entries) {
    if (workers_.size() > 1 && entries >= options_.inline_entries) {
        run(fn, entries);
        return;
    }
    for (auto& w : workers_) fn(*w);  // small: no hand-off and no clock (cyclic's rounds)
}

void Trainer::push_part(Worker& me, std::span<const std::uint32_t> coords) {
    // The last pull's residual updates first (in order: a row's residual sees the same
    // operations whatever the split).
    if (!pending_coords_.empty()) update_residuals(me.view(), pending_coords_, pending_deltas_);
    me.sums.assign(coords.size(), ExactSum{});
    push_gradients(me.view(), coords, me.sums);
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
    pending_deltas_.assign(size, 0);
    shift_deltas_.assign(size, 0);
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
        reduce(total_);
        run_pull(pull, cost);
    } else {
        // Every rank has every total; each pulls its share of the round (split over its workers)
        // and applies the other ranks' changes: no rank pulls the whole round.
        run_pull([&](Worker& me) { combine_range(me, size); }, cost);
        reduce(total_);
        const auto [first, last] =
            share(size, comm_.rank(), static_cast<std::size_t>(comm_.size()));
        run_pull(
            [&](Worker& me) {
                const auto [lo, hi] = share(last - first, me.index, workers_.size());
                me.pull =
                    pull_range(pv, options_.lambda, q_sum, pending_coords_, total_, first + lo,
                               first + hi, coefs_, pending_deltas_, shift_deltas_);
            },
            (last - first) * kPullEntries);
        exchange_pulled(first, last);
    }
    finish_pull(coords, pending_deltas_);
}

void Trainer::exchange_pulled(std::size_t first, std::size_t last) {
    // One int64 allreduce of the δ's bit patterns, each rank's share in place and zeros
    // elsewhere: an integer sum with one non-zero term is that term, bit for bit, and one
    // collective of a fixed size is cheaper than a variable-size allgather (three collectives).
    const std::size_t size = pending_coords_.size();
    exchange_.assign(size, 0);
    for (std::size_t t = first; t < last; ++t)
        exchange_[t] = std::bit_cast<std::int64_t>(pending_deltas_[t]);
    comm_.allreduce_sum(exchange_);
    for (std::size_t t = 0; t < size; ++t)  // this rank's share comes back unchanged
        pending_deltas_[t] = std::bit_cast<double>(exchange_[t]);
    const ProblemView pv = problem();
    for (const auto& [lo, hi] : {std::pair{std::size_t{0}, first}, std::pair{last, size}}) {
        const PullStats s =
            apply_pulled(pv, pending_coords_, lo, hi, pending_deltas_, coefs_, shift_deltas_);
        remote_pull_.changed += s.changed;
        remote_pull_.largest = std::max(remote_pull_.largest, s.largest);
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

std::vector<std::uint32_t> Trainer::working_set() const {
    const std::uint32_t p = features();
    std::vector<std::uint32_t> set;
    if (!options_.active_set || !gradient_fresh_) {
        set.resize(p);
        for (std::uint32_t j = 0; j < p; ++j) set[j] = j;
        return set;
    }
    // KKT: b_j = 0 is optimal while |g_j| <= λ̃. After a change of λ, the sequential strong rule
    // (Tibshirani et al., JRSS B 2012): keep j when |g_j(λ_old)| >= 2λ̃ − λ̃_old. The same test
    // with λ_old = λ. Coordinates it misses show in the next evaluation (gap, gradients).
    const double threshold = 2 * options_.lambda / standardization_.y_scale - gradient_lambda_;
    for (std::uint32_t j = 0; j < p; ++j) {
        if (coefs_.b[j] != 0 || std::fabs(gradient_[j]) > threshold) set.push_back(j);
    }
    return set;
}

void Trainer::keep_nonzero(std::vector<std::uint32_t>& set) const {
    std::erase_if(set, [&](std::uint32_t j) { return coefs_.b[j] == 0; });
}

void Trainer::iterate_cyclic() {
    const std::vector<std::uint32_t> first = working_set();
    sweep(first);
    if (!options_.active_set) return;
    std::vector<std::uint32_t> active = first;
    for (int s = 0; s < kMaxActiveSweeps; ++s) {
        keep_nonzero(active);
        if (active.empty() || sweep(active) <= std::max(inner_tol_, kInnerTolFloor)) break;
    }
}

std::vector<std::uint32_t> Trainer::strads_schedule(Rng& rng, PrioritySampler& sampler,
                                                    std::span<const std::uint32_t> set,
                                                    std::uint32_t& rejected) {
    std::vector<std::uint32_t> candidates = sampler.draw(rng, options_.strads.candidates);
    if (!set.empty()) {
        for (std::uint32_t& c : candidates) c = set[c];
    }
    Selection s;
    if (comm_.size() == 1) {
        // Every row is here: only the pairs the greedy scan reaches, each the exact total over
        // the parts, on this thread (a pair is a dot of two short columns).
        s = select_uncorrelated(problem(), candidates, options_.strads,
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
                    me.sums.assign(c.missing.size(), ExactSum{});
                    push_pair_dots(me.view(), c.missing, me.sums, me.scratch);
                },
                entries);
            combine(total_, c.missing.size());
            reduce(total_);
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
            problem(), candidates, options_.strads, [&](std::uint32_t a, std::uint32_t b) {
                const std::size_t pa = position(a), pb = position(b);
                return c.dots[pair_index(std::min(pa, pb), std::max(pa, pb), candidates.size())];
            });
    }
    rejected += s.rejected;
    return std::move(s.kept);
}

double Trainer::parallel_pass(std::span<const std::uint32_t> set, std::uint32_t& rejected,
                              std::uint64_t& rounds) {
    const auto n = static_cast<std::uint32_t>(set.size());
    const bool all = n == features();  // the identity: the draws are the coordinates
    const std::uint32_t l = std::max<std::uint32_t>(1, std::min(options_.strads.parallel, n));
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
    // the region's workers draw the rounds ahead, each a share.
    const auto shotgun_draw = [&, n, l, all](std::uint64_t round) {
        Rng rng = Rng::from({options_.seed, kScheduleStream, round});
        std::vector<std::uint32_t> coords = schedule_shotgun(rng, n, l);
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
        count > 0 && (all ? slice_entries_ : entries_of(set)) * l / n >= options_.inline_entries) {
        const std::uint64_t first = rounds_done_ + rounds;
        region_rounds(
            count, [&](std::uint64_t k) { return shotgun_draw(first + k); }, done);
        return largest;
    }
    for (std::uint64_t k = 0; k < count; ++k) {
        const std::vector<std::uint32_t> coords = schedule();
        round(coords);
        done(coords, pending_deltas_);
    }
    return largest;
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
        deltas[k & 1].assign(size, 0);
        shift_deltas_.assign(size, 0);
        total_.resize(size);
        q_sum = residual_sum(pv, coefs_);
    };
    sched::WorkerBarrier barrier(static_cast<int>(workers));
    runtime_.run_workers([&](int w) {
        Worker& me = *workers_[static_cast<std::size_t>(w)];
        sched::WorkerClock& clock = clocks_.clock(w);
        const auto meet = [&] {
            const sched::PhaseTimer timer(clock, sched::Phase::kWait);
            return barrier.arrive_and_wait();
        };
        try {
            {
                const sched::PhaseTimer timer(clock, sched::Phase::kCompute);
                for (auto k = static_cast<std::uint64_t>(w); k < count; k += workers)
                    coords[k] = draw(k);
            }
            if (!meet()) return;  // every draw is out
            for (std::uint64_t k = 0; k < count; ++k) {
                const std::span<const std::uint32_t> now = coords[k];
                {
                    const sched::PhaseTimer timer(clock, sched::Phase::kCompute);
                    update_residuals(me.view(), k == 0 ? before : coords[k - 1],
                                     deltas[(k - 1) & 1]);
                    me.sums.assign(now.size(), ExactSum{});
                    push_gradients(me.view(), now, me.sums);
                    if (w == 0) serial(k);
                }
                if (!meet()) return;  // every push is in, and round k's buffers are ready
                {
                    const sched::PhaseTimer timer(clock, sched::Phase::kCompute);
                    combine_range(me, now.size());
                    const auto [lo, hi] = share(now.size(), me.index, workers);
                    me.pull = pull_range(pv, options_.lambda, q_sum, now, total_, lo, hi, coefs_,
                                         deltas[k & 1], shift_deltas_);
                }
                if (!meet()) return;  // every change is out
            }
        } catch (...) {
            barrier.break_barrier();
            throw;
        }
    });
    ++handoffs_;
    barrier_sleeps_ += barrier.sleeps();
    std::vector<double>& last = deltas[(count - 1) & 1];
    finish_pull(coords[count - 1], last);
    done(coords[count - 1], last);
    pending_coords_ = std::move(coords[count - 1]);
    pending_deltas_ = std::move(last);
    pending_entries_ = entries_of(pending_coords_);
}

void Trainer::iterate_parallel(std::uint32_t& rejected, std::uint64_t& rounds) {
    const std::uint64_t start = total_updates_;
    const std::vector<std::uint32_t> first = working_set();
    parallel_pass(first, rejected, rounds);
    if (!options_.active_set) return;
    std::vector<std::uint32_t> active = first;
    // At most p updates an iteration, as without active sets: parallel updates of correlated
    // columns settle slowly, and the evaluation (which tightens the inner tolerance) should come.
    for (int s = 0; s < kMaxActiveSweeps && total_updates_ - start < features(); ++s) {
        keep_nonzero(active);
        if (active.empty()) break;
        const double largest = parallel_pass(active, rejected, rounds);
        // Not finite: the updates diverged, which the next evaluation reports.
        if (!std::isfinite(largest) || largest <= std::max(inner_tol_, kInnerTolFloor)) break;
    }
}

double Trainer::pair_dot(std::uint32_t a, std::uint32_t b) {
    if (const double* d = pair_cache_.find(a, b)) return *d;
    // Scatter the shorter column, walk the longer (the same terms either way).
    const CoordinatePair pair =
        column_entries_[a] <= column_entries_[b] ? CoordinatePair{a, b} : CoordinatePair{b, a};
    ExactSum total;
    for (auto& w : workers_) {
        ExactSum part;
        push_pair_dots(w->view(), {&pair, 1}, {&part, 1}, w->scratch);
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
    changed_ = 0;
    std::uint32_t rejected = 0;
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
    if (options_.schedule == Schedule::kStrads) {
        r.set("rejected", rejected);
        const double looked = double(pair_cache_.hits() + pair_cache_.misses());
        r.set("pair_cache_hit_rate", looked > 0 ? double(pair_cache_.hits()) / looked : 0.0);
    }
    r.set("updates_total", static_cast<double>(total_updates_));
    return r;
}

Evaluation Trainer::evaluate_all() {
    const std::uint32_t p = features();
    run(
        [&](Worker& me) {
            me.eval.xq.assign(p, ExactSum{});
            me.eval.q_sum = me.eval.rr = me.eval.ry = ExactSum{};
            push_evaluation(me.view(), coefs_.offset, me.eval);
        },
        slice_entries_);
    // The xq sums, then q_sum, rr and ry, as one vector for the allreduce; the workers add
    // their shares of the columns, and compute the gradients and the coordinates' terms.
    total_.resize(std::size_t{p} + 3);
    ExactSum q_sum, rr, ry;
    for (const auto& w : workers_) {
        q_sum.add(w->eval.q_sum);
        rr.add(w->eval.rr);
        ry.add(w->eval.ry);
    }
    total_[p] = q_sum;
    total_[p + 1] = rr;
    total_[p + 2] = ry;
    gradient_.resize(p);
    const ProblemView pv = problem();
    const auto add_columns = [&](Worker& me) {
        const auto [lo, hi] = share(p, me.index, workers_.size());
        for (std::size_t j = lo; j < hi; ++j) {
            ExactSum s;
            for (const auto& w : workers_) s.add(w->eval.xq[j]);
            total_[j] = s;
        }
    };
    const auto stats = [&](Worker& me) {
        const auto [lo, hi] = share(p, me.index, workers_.size());
        me.stats =
            coordinate_stats(pv, options_.lambda, coefs_, static_cast<std::uint32_t>(lo),
                             std::span<const ExactSum>(total_).subspan(lo, hi - lo),
                             total_[p].value(), std::span<double>(gradient_).subspan(lo, hi - lo));
    };
    if (comm_.size() == 1) {
        run(
            [&](Worker& me) {
                add_columns(me);
                stats(me);
            },
            slice_entries_);
    } else {
        run(add_columns, slice_entries_);
        reduce(total_);
        run(stats, slice_entries_);
    }
    CoordinateStats all;
    for (const auto& w : workers_) all.add(w->stats);
    return finish_evaluation(pv, options_.lambda, all, total_[p + 1], total_[p + 2]);
}

void Trainer::evaluate_record(train::Record& r) {
    last_ = evaluate_all();
    gradient_lambda_ = options_.lambda / standardization_.y_scale;
    gradient_fresh_ = true;
    r.set("objective", last_.objective);
    r.set("objective_paper", last_.objective_paper);
    r.set("gap", last_.gap);
    r.set("relative_gap", last_.relative_gap);
    r.set("kkt", last_.kkt_violation);
    r.set("nonzeros", last_.nonzeros);
    r.set("l1_norm", last_.l1_norm);
    if (!std::isfinite(last_.objective))
        throw ConfigError(options_.schedule == Schedule::kCyclic ? "--lambda" : "--parallel",
                          fmt::format("the objective diverged by iteration {}: coordinates "
                                      "updated in one round were too correlated; lower "
                                      "--parallel (or --rho), or use --schedule cyclic",
                                      iterations_done_));
    const double measure = options_.stop == StopRule::kGap
                               ? last_.relative_gap
                               : last_.kkt_violation / standardization_.y_scale;
    converged_ = measure < options_.tol;
    // The active sweeps stopped too early for the stopping rule: settle them further next time.
    if (!converged_) inner_tol_ *= 0.1;
}

TrainerState Trainer::gather_state() {
    flush_residuals();
    TrainerState s{coefs_.b,         coefs_.last_delta, coefs_.offset,   {},
                   gradient_,        gradient_lambda_,  gradient_fresh_, inner_tol_,
                   iterations_done_, rounds_done_,      total_updates_,  last_,
                   converged_};
    std::vector<double> mine;
    for (const auto& w : workers_)
        mine.insert(mine.end(), w->residuals.begin(), w->residuals.end());
    if (comm_.size() == 1) {
        s.residuals = std::move(mine);
        return s;
    }
    const auto parts = comm_.gather(std::as_bytes(std::span<const double>(mine)), 0);
    for (const auto& part : parts) {
        const std::size_t n = part.size() / sizeof(double);
        const std::size_t at = s.residuals.size();
        s.residuals.resize(at + n);
        std::memcpy(s.residuals.data() + at, part.data(), n * sizeof(double));
    }
    return s;
}

void Trainer::restore(const TrainerState& state, std::uint32_t first_row) {
    const std::uint32_t p = features();
    std::size_t rows = 0;
    for (const auto& w : workers_) rows += w->residuals.size();
    if (state.b.size() != p || state.last_delta.size() != p || state.gradient.size() != p ||
        state.residuals.size() != samples_ || std::size_t{first_row} + rows > samples_)
        throw InputError("checkpoint", "the state's shapes disagree with the data");
    coefs_.b = state.b;
    coefs_.last_delta = state.last_delta;
    coefs_.offset = state.offset;
    std::size_t at = first_row;
    for (auto& w : workers_) {
        std::copy_n(state.residuals.begin() + static_cast<std::ptrdiff_t>(at), w->residuals.size(),
                    w->residuals.begin());
        at += w->residuals.size();
    }
    if (sampler_)
        sampler_ = std::make_unique<PrioritySampler>(coefs_.last_delta, options_.strads.eta);
    pending_coords_.clear();
    pending_deltas_.clear();
    pending_entries_ = 0;
    gradient_ = state.gradient;
    gradient_lambda_ = state.gradient_lambda;
    gradient_fresh_ = state.gradient_fresh;
    inner_tol_ = state.inner_tol;
    iterations_done_ = state.iterations_done;
    rounds_done_ = state.rounds_done;
    total_updates_ = state.total_updates;
    last_ = state.last;
    converged_ = state.converged;
}

void Trainer::set_lambda(double lambda) {
    options_.lambda = lambda;
    options_.validate();
    iterations_done_ = 0;
    converged_ = false;
    inner_tol_ = options_.tol;
}

train::RecordSchema record_schema() {
    train::RecordSchema s;
    s.count_key = "updates";
    s.rate_key = "updates_per_s";
    s.rate_unit = "updates/s";
    s.headline_key = "objective";
    s.headline_label = "objective";
    return s;
}

}  // namespace rotor::lasso
