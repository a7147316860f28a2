#include "apps/mf/ccd_parallel.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "core/base/error.h"
#include "core/base/timer.h"

namespace rotor::mf {

/// One worker's share: its rows (a rebased CSR view and the matching slices of the residuals,
/// of u and of b) and its columns for the pull.
struct ParallelCcd::Worker {
    int index = 0;
    SparseView ratings;
    std::uint32_t row_lo = 0;
    std::span<float> residuals;
    std::span<float> u;
    std::span<float> row_bias;
    std::uint32_t col_lo = 0;
    std::uint32_t cols = 0;
    std::uint32_t own_lo = 0;  ///< ranks > 1: the worker's share of the rank's pulled columns
    std::uint32_t own_cols = 0;
    sched::WorkerClock* clock = nullptr;
};

std::vector<std::uint32_t> split_rows_by_ratings(std::span<const std::uint64_t> offsets,
                                                 int parts) {
    ROTOR_ASSERT(parts >= 1 && !offsets.empty(), "split_rows_by_ratings: no parts or no offsets");
    const auto rows = static_cast<std::uint32_t>(offsets.size() - 1);
    const std::uint64_t nnz = offsets.back();
    std::vector<std::uint32_t> begin(static_cast<std::size_t>(parts) + 1, rows);
    begin[0] = 0;
    for (int q = 1; q < parts; ++q) {
        // floor(nnz * q / parts) without overflow
        const auto qq = static_cast<std::uint64_t>(q), pp = static_cast<std::uint64_t>(parts);
        const std::uint64_t target = nnz / pp * qq + nnz % pp * qq / pp;
        const auto it = std::lower_bound(offsets.begin(), offsets.end() - 1, target);
        begin[q] = std::max(begin[q - 1], static_cast<std::uint32_t>(it - offsets.begin()));
    }
    return begin;
}

ParallelCcd::ParallelCcd(CcdRankState& state, const CcdParams& params, sched::Runtime& runtime,
                         comm::Communicator& comm)
    : state_(state),
      params_(params),
      comm_(comm),
      threads_(runtime.threads()),
      team_(runtime),
      clocks_(runtime.threads()) {
    params_.validate();
    const SparseView& r = state_.ratings;
    r.check_shape();
    const std::uint32_t rows = r.outer_size();
    const std::uint32_t m = state_.h.rows();
    ROTOR_ASSERT(state_.w.rows() == rows && state_.w.k() == state_.h.k() &&
                     state_.residuals.size() == r.nnz() && state_.col_counts.size() == m,
                 "ParallelCcd: W, residuals and column counts must match the ratings and H");
    ROTOR_ASSERT(
        !params_.objective.bias || (state_.row_bias.size() == rows && state_.col_bias.size() == m),
        "ParallelCcd: one bias per row and per column");
    row_begin_ = split_rows_by_ratings(r.offsets, threads_);
    col_begin_.resize(static_cast<std::size_t>(threads_) + 1);
    for (int q = 0; q <= threads_; ++q) {
        col_begin_[q] = static_cast<std::uint32_t>(std::uint64_t{m} * static_cast<unsigned>(q) /
                                                   static_cast<unsigned>(threads_));
    }
    for (int q = 0; q < threads_; ++q) {
        const std::uint64_t base = r.offsets[row_begin_[q]];
        std::vector<std::uint64_t>& o = offsets_.emplace_back();
        for (std::uint32_t i = row_begin_[q]; i <= row_begin_[q + 1]; ++i) {
            o.push_back(r.offsets[i] - base);
        }
        pushed_.emplace_back(m);
        totals_.emplace_back(col_begin_[q + 1] - col_begin_[q]);
    }
    if (comm_.size() > 1) plan_exchange();
    u_.assign(rows, 0.0f);
    for (std::vector<float>& v : v_) v.assign(m, 0.0f);
    ones_cols_.assign(m, 1.0f);
}

ParallelCcd::~ParallelCcd() = default;

void ParallelCcd::plan_exchange() {
    const std::uint32_t m = state_.h.rows();
    const auto ranks = static_cast<std::size_t>(comm_.size());
    rank_ = comm_.rank();
    // Even bounds: rank q's pulled values fill whole int64 slots of gathered_.
    const std::uint64_t pairs = (std::uint64_t{m} + 1) / 2;
    own_begin_.resize(ranks + 1);
    for (std::size_t q = 0; q <= ranks; ++q) {
        own_begin_[q] =
            static_cast<std::uint32_t>(std::min<std::uint64_t>(m, 2 * (pairs * q / ranks)));
    }
    std::size_t narrow = 0, gathered = 0;
    for (std::size_t q = 0; q < ranks; ++q) {
        const std::size_t cols = own_begin_[q + 1] - own_begin_[q];
        narrow_first_.push_back(narrow);
        narrow_counts_.push_back(1 + kNarrowPerColumn * cols);
        narrow += narrow_counts_.back();
        wide_counts_.push_back(kLimbsPerColumn * cols);
        gathered_first_.push_back(gathered);
        gathered_counts_.push_back(1 + (cols + 1) / 2);
        gathered += gathered_counts_.back();
    }
    narrow_.assign(narrow, 0);
    narrow_mine_.assign(narrow_counts_[static_cast<std::size_t>(rank_)], 0);
    gathered_.assign(gathered, 0);
    failures_.assign(static_cast<std::size_t>(threads_), std::vector<std::uint64_t>(ranks, 0));
    // The workers' shares of this rank's columns, in pairs (two floats of one slot are written
    // by one worker).
    const std::uint32_t lo = own_begin_[static_cast<std::size_t>(rank_)];
    const std::uint32_t hi = own_begin_[static_cast<std::size_t>(rank_) + 1];
    const std::uint64_t own_pairs = (std::uint64_t{hi - lo} + 1) / 2;
    for (int w = 0; w <= threads_; ++w) {
        const std::uint64_t at =
            2 * (own_pairs * static_cast<unsigned>(w) / static_cast<unsigned>(threads_));
        own_split_.push_back(static_cast<std::uint32_t>(std::min<std::uint64_t>(hi, lo + at)));
    }
    for (int w = 0; w < threads_; ++w)
        owned_totals_.emplace_back(own_split_[w + 1] - own_split_[w]);
}

std::size_t ParallelCcd::largest_message_bytes() const {
    // The wide limbs exist only after a pull went wide; their size counts from the start.
    const std::size_t wide = own_begin_.empty() ? 0 : kLimbsPerColumn * own_begin_.back();
    return sizeof(std::int64_t) * std::max({narrow_.size(), gathered_.size(), wide});
}

ParallelCcd::Worker ParallelCcd::make_worker(int w) {
    Worker me;
    me.index = w;
    const std::uint32_t lo = row_begin_[w];
    const std::uint32_t rows = row_begin_[w + 1] - lo;
    const std::uint64_t e0 = state_.ratings.offsets[lo];
    const std::uint64_t n = state_.ratings.offsets[lo + rows] - e0;
    me.ratings = SparseView{offsets_[w], state_.ratings.ids.subspan(e0, n),
                            state_.ratings.values.subspan(e0, n)};
    me.row_lo = lo;
    me.residuals = std::span<float>(state_.residuals).subspan(e0, n);
    me.u = std::span<float>(u_).subspan(lo, rows);
    if (params_.objective.bias) me.row_bias = std::span<float>(state_.row_bias).subspan(lo, rows);
    me.col_lo = col_begin_[w];
    me.cols = col_begin_[w + 1] - col_begin_[w];
    if (!own_split_.empty()) {
        me.own_lo = own_split_[w];
        me.own_cols = own_split_[w + 1] - own_split_[w];
    }
    me.clock = &clocks_.clock(w);
    return me;
}

void ParallelCcd::push(Worker& me, std::span<const float> u) {
    push_column_sums(me.ratings, u, me.residuals, pushed_[me.index]);
}

void ParallelCcd::combine(Worker& me) {
    ColumnSums& total = totals_[me.index];
    for (std::uint32_t c = 0; c < me.cols; ++c) {
        const std::uint32_t j = me.col_lo + c;
        ColumnSum s;
        for (ColumnSums& part : pushed_) {
            s.num.add(part.sums[j].num);
            s.den.add(part.sums[j].den);
            part.sums[j] = ColumnSum{};  // consumed: the next push starts from zero
        }
        total.sums[c] = s;
    }
    if (comm_.size() > 1) narrow_limbs(me);
}

void ParallelCcd::narrow_limbs(Worker& me) {
    // Each of the worker's combined columns into its owner's block of narrow_; a sum that does
    // not fit counts in failures_ (the block's slot, filled by reduce()).
    const ColumnSums& total = totals_[me.index];
    std::vector<std::uint64_t>& failed = failures_[static_cast<std::size_t>(me.index)];
    for (std::size_t q = 0; q + 1 < own_begin_.size(); ++q) {
        failed[q] = 0;
        const std::uint32_t lo = std::max(me.col_lo, own_begin_[q]);
        const std::uint32_t hi = std::min(me.col_lo + me.cols, own_begin_[q + 1]);
        for (std::uint32_t j = lo; j < hi; ++j) {
            std::int64_t* out = narrow_.data() + narrow_first_[q] + 1 +
                                std::size_t{j - own_begin_[q]} * kNarrowPerColumn;
            const ColumnSum& s = total.sums[j - me.col_lo];
            const bool num = s.num.to_narrow_limbs(out);
            const bool den = s.den.to_narrow_limbs(out + core::ExactSum::kNarrowLimbs);
            if (!num || !den) ++failed[q];
        }
    }
}

void ParallelCcd::wide_limbs(Worker& me) {
    const ColumnSums& total = totals_[me.index];
    for (std::uint32_t c = 0; c < me.cols; ++c) {
        const auto num = total.sums[c].num.to_limbs();
        const auto den = total.sums[c].den.to_limbs();
        std::int64_t* out = limbs_.data() + (me.col_lo + std::size_t{c}) * kLimbsPerColumn;
        std::copy(num.begin(), num.end(), out);
        std::copy(den.begin(), den.end(), out + core::ExactSum::kLimbs);
    }
}

void ParallelCcd::pull(Worker& me, double lambda, std::span<float> v) {
    pull_columns(totals_[me.index],
                 std::span<const std::uint64_t>(state_.col_counts).subspan(me.col_lo, me.cols),
                 lambda, params_.objective.form, v.subspan(me.col_lo, me.cols));
}

void ParallelCcd::pull_owned(Worker& me, double lambda, std::span<float> v, bool wide) {
    if (!wide && narrow_mine_[0] != 0) return;  // some sum did not fit: the pull goes wide
    ColumnSums& total = owned_totals_[static_cast<std::size_t>(me.index)];
    const std::uint32_t first = own_begin_[static_cast<std::size_t>(rank_)];
    for (std::uint32_t c = 0; c < me.own_cols; ++c) {
        const std::size_t at = me.own_lo - first + std::size_t{c};
        if (wide) {
            const std::int64_t* in = wide_mine_.data() + at * kLimbsPerColumn;
            std::array<std::int64_t, core::ExactSum::kLimbs> num{}, den{};
            std::copy_n(in, core::ExactSum::kLimbs, num.begin());
            std::copy_n(in + core::ExactSum::kLimbs, core::ExactSum::kLimbs, den.begin());
            total.sums[c].num = core::ExactSum::from_limbs(num);
            total.sums[c].den = core::ExactSum::from_limbs(den);
        } else {
            const std::int64_t* in = narrow_mine_.data() + 1 + at * kNarrowPerColumn;
            total.sums[c].num = core::ExactSum::from_narrow_limbs(in[0], in[1]);
            total.sums[c].den = core::ExactSum::from_narrow_limbs(in[2], in[3]);
        }
    }
    pull_columns(total,
                 std::span<const std::uint64_t>(state_.col_counts).subspan(me.own_lo, me.own_cols),
                 lambda, params_.objective.form, v.subspan(me.own_lo, me.own_cols));
    // The values into this rank's block of gathered_, two a slot (the worker's share starts at
    // an even column of the block).
    auto* out = reinterpret_cast<std::byte*>(gathered_.data() +
                                             gathered_first_[static_cast<std::size_t>(rank_)] + 1);
    std::memcpy(out + std::size_t{me.own_lo - first} * sizeof(float), v.data() + me.own_lo,
                std::size_t{me.own_cols} * sizeof(float));
}

void ParallelCcd::reduce(bool wide) {
    const Stopwatch clock;
    if (wide) {
        comm_.reduce_scatter_sum(limbs_, wide_counts_, wide_mine_);
    } else {
        for (std::size_t q = 0; q < narrow_first_.size(); ++q) {
            std::uint64_t failed = 0;
            for (const std::vector<std::uint64_t>& f : failures_) failed += f[q];
            narrow_[narrow_first_[q]] = static_cast<std::int64_t>(failed);
        }
        comm_.reduce_scatter_sum(narrow_, narrow_counts_, narrow_mine_);
    }
    comm_s_ += clock.seconds();
}

bool ParallelCcd::gather(std::span<float> v, bool wide) {
    const Stopwatch clock;
    const auto me = static_cast<std::size_t>(rank_);
    gathered_[gathered_first_[me]] = !wide && narrow_mine_[0] != 0 ? 1 : 0;
    comm_.allgather_blocks(gathered_, gathered_counts_);
    bool pulled = true;
    for (const std::size_t first : gathered_first_) pulled = pulled && gathered_[first] == 0;
    for (std::size_t q = 0; pulled && q < gathered_first_.size(); ++q) {
        std::memcpy(v.data() + own_begin_[q], gathered_.data() + gathered_first_[q] + 1,
                    std::size_t{own_begin_[q + 1] - own_begin_[q]} * sizeof(float));
    }
    comm_s_ += clock.seconds();
    return pulled;
}

void ParallelCcd::load(Worker& me, std::uint32_t k) {
    float* v = v_[k % 2].data();
    for (std::uint32_t c = 0; c < me.cols; ++c) v[me.col_lo + c] = state_.h.at(me.col_lo + c, k);
    for (std::size_t i = 0; i < me.u.size(); ++i) {
        me.u[i] = state_.w.at(me.row_lo + static_cast<std::uint32_t>(i), k);
    }
}

void ParallelCcd::finish_biases(Worker& me) {
    const double lambda = params_.objective.lambda_bias;
    const std::span<const float> c = v_[kBiasBuffer];
    subtract_rank_one(me.ratings, me.u, c, me.residuals);
    // Nobody reads the old c after the push: each worker stores its columns.
    std::copy_n(c.begin() + me.col_lo, me.cols, state_.col_bias.begin() + me.col_lo);
    // b: the column side fixed at 1, local to the worker's rows.
    add_rank_one(me.ratings, me.row_bias, ones_cols_, me.residuals);
    update_rows(me.ratings, ones_cols_, me.residuals, lambda, params_.objective.form, me.row_bias);
    subtract_rank_one(me.ratings, me.row_bias, ones_cols_, me.residuals);
}

void ParallelCcd::finish_rank_one(Worker& me, std::uint32_t k) {
    const std::span<const float> v = v_[k % 2];
    subtract_rank_one(me.ratings, me.u, v, me.residuals);
    for (std::size_t i = 0; i < me.u.size(); ++i) {
        state_.w.at(me.row_lo + static_cast<std::uint32_t>(i), k) = me.u[i];
    }
    for (std::uint32_t c = 0; c < me.cols; ++c) state_.h.at(me.col_lo + c, k) = v[me.col_lo + c];
}

double ParallelCcd::lambda_of(const Step& step) const {
    return step.k == kBiasStep ? params_.objective.lambda_bias : params_.objective.lambda;
}

std::span<float> ParallelCcd::v_of(const Step& step) {
    return v_[step.k == kBiasStep ? kBiasBuffer : step.k % 2];
}

void ParallelCcd::run_step(Worker& me, const Step& step) {
    const bool bias = step.k == kBiasStep;
    const double lambda = lambda_of(step);
    const std::span<float> v = v_of(step);
    switch (step.kind) {
        case StepKind::kBiasPush:  // c: the row side fixed at 1
            std::fill(me.u.begin(), me.u.end(), 1.0f);
            add_rank_one(me.ratings, me.u, state_.col_bias, me.residuals);
            push(me, me.u);
            break;
        case StepKind::kLoad:
            load(me, 0);
            break;
        case StepKind::kAddPush:  // (a), then the first push of (b)
            add_rank_one(me.ratings, me.u, v, me.residuals);
            push(me, me.u);
            break;
        case StepKind::kCombine:
            combine(me);
            if (comm_.size() == 1) pull(me, lambda, v);
            break;
        case StepKind::kPull:
            pull_owned(me, lambda, v, false);
            break;
        case StepKind::kWideLimbs:
            wide_limbs(me);
            break;
        case StepKind::kWidePull:
            pull_owned(me, lambda, v, true);
            break;
        case StepKind::kRows:  // (c), then the next push, or (d)
            if (bias) {
                finish_biases(me);
            } else {
                update_rows(me.ratings, v, me.residuals, lambda, params_.objective.form, me.u);
                if (!step.last) {
                    push(me, me.u);
                    break;
                }
                finish_rank_one(me, step.k);
            }
            // v_ of the next factor is the other buffer: nobody reads it any more.
            if (const std::uint32_t next = bias ? 0 : step.k + 1; next < state_.h.k()) {
                load(me, next);
            }
            break;
    }
}

std::vector<ParallelCcd::Step> ParallelCcd::plan() const {
    // Consecutive steps are separated by a barrier (one process) or are separate run_workers
    // calls with the reduce-scatter after each kCombine and the allgather after each kPull
    // (several ranks).
    std::vector<Step> steps;
    const auto pull_steps = [&](std::uint32_t k) {
        steps.push_back({StepKind::kCombine, k, false});
        if (comm_.size() > 1) steps.push_back({StepKind::kPull, k, false});
    };
    if (params_.objective.bias) {
        steps.push_back({StepKind::kBiasPush, kBiasStep, false});
        pull_steps(kBiasStep);
        steps.push_back({StepKind::kRows, kBiasStep, true});
    } else {
        steps.push_back({StepKind::kLoad, 0, false});
    }
    for (std::uint32_t k = 0; k < state_.h.k(); ++k) {
        steps.push_back({StepKind::kAddPush, k, false});
        for (std::uint32_t s = 0; s < params_.inner; ++s) {
            pull_steps(k);
            steps.push_back({StepKind::kRows, k, s + 1 == params_.inner});
        }
    }
    return steps;
}

sched::IterationTimes ParallelCcd::iterate() {
    const std::vector<Step> steps = plan();
    clocks_.begin_iteration();
    comm_s_ = 0;
    std::vector<Worker> workers;
    for (int w = 0; w < threads_; ++w) workers.push_back(make_worker(w));
    // A share's step touches only its own rows, columns and sums, whichever worker runs it.
    const auto run = [&](std::size_t i, int share) {
        Worker& me = workers[static_cast<std::size_t>(share)];
        const sched::PhaseTimer timer(*me.clock, sched::Phase::kCompute);
        run_step(me, steps[i]);
    };
    const auto add_waits = [&](const sched::TeamRun& r) {
        for (int w = 0; w < threads_; ++w)
            clocks_.clock(w).add(sched::Phase::kWait, r.wait_s[static_cast<std::size_t>(w)]);
    };
    if (comm_.size() == 1) {
        // The whole iteration in one team call: its steps follow each other without a hand-off.
        add_waits(team_.run_steps(steps.size(), run));
    } else {
        // One call per step, the collectives after a combine and after a pull on this thread (a
        // worker never waits for another rank: in-process ranks share oneTBB's threads, and MPI
        // may be initialised FUNNELED); with one worker, a call runs up to the next collective.
        const auto exchanges = [](const Step& s) {
            return s.kind == StepKind::kCombine || s.kind == StepKind::kPull;
        };
        const auto run_one = [&](const Step& s) {
            add_waits(team_.run([&](int share) {
                Worker& me = workers[static_cast<std::size_t>(share)];
                const sched::PhaseTimer timer(*me.clock, sched::Phase::kCompute);
                run_step(me, s);
            }));
        };
        for (std::size_t i = 0; i < steps.size();) {
            std::size_t end = i + 1;
            while (threads_ == 1 && end < steps.size() && !exchanges(steps[end - 1])) ++end;
            add_waits(team_.run([&](int share) {
                for (std::size_t j = i; j < end; ++j) run(j, share);
            }));
            const Step& last = steps[end - 1];
            if (last.kind == StepKind::kCombine) reduce(false);
            if (last.kind == StepKind::kPull && !gather(v_of(last), false)) {
                // A sum did not fit the narrow limbs: the same pull from the wide ones.
                if (limbs_.empty()) {
                    limbs_.assign(kLimbsPerColumn * state_.h.rows(), 0);
                    wide_mine_.assign(wide_counts_[static_cast<std::size_t>(rank_)], 0);
                }
                run_one({StepKind::kWideLimbs, last.k, false});
                reduce(true);
                run_one({StepKind::kWidePull, last.k, false});
                const bool pulled = gather(v_of(last), true);
                ROTOR_ASSERT(pulled, "ParallelCcd: a wide pull did not complete");
            }
            i = end;
        }
    }
    return clocks_.end_iteration();
}

}  // namespace rotor::mf
