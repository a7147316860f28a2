// The trainer's evaluations and its state (apps/lasso/trainer.h): evaluate_all, the record's
// objective and stopping test, checkpoints' gather_state and restore, set_lambda.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "apps/lasso/trainer_internal.h"
#include "core/base/error.h"
#include "core/base/timer.h"
#include "train/loop.h"

namespace rotor::lasso {
namespace {

/// An evaluation above the saved one by more than this share of it is a rise (divergence): F is
/// computed from exact sums and rounded residuals, a few units of the last place at most.
constexpr double kRiseTolerance = 1e-12;

}  // namespace

using detail::share;

template <class Total>
CoordinateStats Trainer::chunked_stats(std::size_t lo, std::size_t hi, double q_total,
                                       const Total& total) {
    // The totals a chunk at a time, the chunk's terms while it is in cache (exact sums, maxima
    // and counts: the same terms as one range).
    const ProblemView pv = problem();
    std::array<core::ExactSum, 2048> chunk;
    CoordinateStats stats;
    for (std::size_t a = lo; a < hi; a += chunk.size()) {
        const std::size_t n = std::min(chunk.size(), hi - a);
        for (std::size_t t = 0; t < n; ++t) chunk[t] = total(a + t);
        stats.add(coordinate_stats(pv, options_.lambda, coefs_, static_cast<std::uint32_t>(a),
                                   std::span<const core::ExactSum>(chunk.data(), n), q_total,
                                   std::span<double>(gradient_).subspan(a, n)));
    }
    return stats;
}

Evaluation Trainer::evaluate_all() {
    const std::uint32_t p = features();
    run(
        [&](Worker& me) {
            me.eval.xq.resize(p);  // overwritten: no clearing
            me.eval.q_sum = me.eval.rr = me.eval.ry = core::ExactSum{};
            for (std::size_t t = 0; t < me.tiles.size(); ++t) {
                push_columns(me.view(t), me.eval.xq, t > 0);  // the first tile overwrites
                push_row_sums(me.view(t), coefs_.offset, me.eval);
            }
        },
        slice_entries_);
    // The xq sums, then q_sum, rr and ry; the workers add their shares of the columns, and
    // compute the gradients and the coordinates' terms. No p-long buffer of totals: the
    // evaluation's buffers keep their sizes from one evaluation to the next, and a round's
    // (total_, rank_sums_, exchange_) keep theirs.
    EvalTails tails;
    for (const auto& w : workers_) {
        tails[0].add(w->eval.q_sum);
        tails[1].add(w->eval.rr);
        tails[2].add(w->eval.ry);
    }
    gradient_.resize(p);
    if (comm_.size() > 1) return evaluate_ranks(tails);
    const ProblemView pv = problem();
    const double q_total = tails[0].value();
    run(
        [&](Worker& me) {
            const auto [lo, hi] = share(p, me.index, workers_.size());
            if (workers_.size() == 1) {  // the one worker's sums are the totals
                me.stats = coordinate_stats(
                    pv, options_.lambda, coefs_, lo,
                    std::span<const core::ExactSum>(me.eval.xq).subspan(lo, hi - lo), q_total,
                    std::span<double>(gradient_).subspan(lo, hi - lo));
                return;
            }
            me.stats =
                chunked_stats(lo, hi, q_total, [&](std::size_t j) { return column_total(j); });
        },
        slice_entries_);
    CoordinateStats all;
    for (const auto& w : workers_) all.add(w->stats);
    return finish_evaluation(pv, options_.lambda, all, tails[1], tails[2]);
}

Evaluation Trainer::evaluate_ranks(EvalTails& tails) {
    // Each rank receives the totals of its share of the columns and the three sums (one
    // reduce-scatter), computes its columns' gradients and terms over its workers, and the ranks
    // exchange those (one allgather): no rank adds, converts or evaluates every column.
    const std::uint32_t p = features();
    const auto column = [&](std::size_t j) { return column_total(j); };
    const auto tail = [&](std::size_t t) { return tails[t]; };
    eval_sums_.reset(p, tails.size(), comm_);
    run(
        [&](Worker& me) {
            const auto [lo, hi] = share(p, me.index, workers_.size());
            me.misfits = eval_sums_.encode(lo, hi, column);
        },
        slice_entries_);
    std::uint64_t misfits = 0;
    for (const auto& w : workers_) misfits += w->misfits;
    for (std::size_t t = 0; t < tails.size(); ++t) misfits += eval_sums_.encode_tail(t, tail(t));
    {
        const detail::CommClock clock(eval_comm_s_);
        eval_sums_.reduce(comm_, misfits, column, tail);
    }
    for (std::size_t t = 0; t < tails.size(); ++t) tails[t] = eval_sums_.tail_total(t);
    const std::size_t first = eval_sums_.first(), last = eval_sums_.last();
    const ProblemView pv = problem();
    const double q_total = tails[0].value();
    run(
        [&](Worker& me) {
            const auto [lo, hi] = share(last - first, me.index, workers_.size());
            me.stats = chunked_stats(first + lo, first + hi, q_total,
                                     [&](std::size_t j) { return eval_sums_.total(j); });
        },
        slice_entries_);
    CoordinateStats mine;
    for (const auto& w : workers_) mine.add(w->stats);
    return finish_evaluation(pv, options_.lambda, share_gradients(mine, first, last), tails[1],
                             tails[2]);
}

CoordinateStats Trainer::share_gradients(const CoordinateStats& mine, std::size_t first,
                                         std::size_t last) {
    // One allgather_blocks: rank q's block is its terms (the l1 sum's four limbs, the two
    // maxima, the count), then its gradients (RankSums' block q), bit for bit.
    constexpr std::size_t kHead = core::ExactSum::kLimbs + 3;
    const std::size_t p = features(), ranks = static_cast<std::size_t>(comm_.size());
    exchange_counts_.resize(ranks);
    for (std::size_t q = 0; q < ranks; ++q)
        exchange_counts_[q] = kHead + p * (q + 1) / ranks - p * q / ranks;
    const std::size_t at = kHead * static_cast<std::size_t>(comm_.rank()) + first;
    eval_exchange_.resize(kHead * ranks + p);
    const auto l1 = mine.l1.to_limbs();
    std::copy(l1.begin(), l1.end(), eval_exchange_.begin() + static_cast<std::ptrdiff_t>(at));
    eval_exchange_[at + core::ExactSum::kLimbs] = std::bit_cast<std::int64_t>(mine.dual_norm);
    eval_exchange_[at + core::ExactSum::kLimbs + 1] = std::bit_cast<std::int64_t>(mine.kkt);
    eval_exchange_[at + core::ExactSum::kLimbs + 2] = mine.nonzeros;
    std::memcpy(eval_exchange_.data() + at + kHead, gradient_.data() + first,
                (last - first) * sizeof(double));
    {
        const detail::CommClock clock(eval_comm_s_);
        comm_.allgather_blocks(eval_exchange_, exchange_counts_);
    }
    CoordinateStats total;
    for (std::size_t q = 0; q < ranks; ++q) {
        const std::size_t lo = p * q / ranks, hi = p * (q + 1) / ranks;
        const std::int64_t* block = eval_exchange_.data() + kHead * q + lo;
        CoordinateStats s;
        std::array<std::int64_t, core::ExactSum::kLimbs> l{};
        std::copy_n(block, l.size(), l.begin());
        s.l1 = core::ExactSum::from_limbs(l);
        s.dual_norm = std::bit_cast<double>(block[core::ExactSum::kLimbs]);
        s.kkt = std::bit_cast<double>(block[core::ExactSum::kLimbs + 1]);
        s.nonzeros = static_cast<std::uint32_t>(block[core::ExactSum::kLimbs + 2]);
        total.add(s);
        std::memcpy(gradient_.data() + lo, block + kHead, (hi - lo) * sizeof(double));
    }
    return total;
}

void Trainer::evaluate_record(train::Record& r) {
    eval_comm_s_ = 0;
    last_ = evaluate_all();
    if (comm_.size() > 1) r.set("eval_comm_s", eval_comm_s_);
    gradient_lambda_ = options_.lambda / standardization_.y_scale;
    gradient_fresh_ = true;
    const bool parallel_rounds = options_.schedule != Schedule::kCyclic;
    // Rounds whose parallel updates cannot raise f (strads' bound, kRowSumBound, or L = 1) leave
    // F at most where it was, up to the rounding of the evaluation's last digits: a rise beyond
    // that means the updates of some round were too correlated.
    const bool rose =
        !std::isfinite(last_.objective) ||
        last_.objective > saved_.eval.objective + kRiseTolerance * std::fabs(saved_.eval.objective);
    bool rolled_back = false;
    if (parallel_rounds && rose && strads_.parallel > 1) {
        roll_back();  // last_ = the saved evaluation, L halved
        rolled_back = true;
    } else if (!std::isfinite(last_.objective)) {
        throw ConfigError(
            options_.schedule == Schedule::kCyclic ? "--lambda" : "--parallel",
            fmt::format("the objective is not finite at iteration {}", iterations_done_));
    }
    r.set("objective", last_.objective);
    r.set("objective_paper", last_.objective_paper);
    r.set("gap", last_.gap);
    r.set("relative_gap", last_.relative_gap);
    r.set("kkt", last_.kkt_violation);
    r.set("nonzeros", last_.nonzeros);
    r.set("l1_norm", last_.l1_norm);
    if (parallel_rounds) {
        r.set("parallel", strads_.parallel);
        r.set("rollback", rolled_back ? 1 : 0);
    }
    if (rolled_back) return;  // the saved state did not meet the rule; its inner tolerance back
    const double measure = options_.stop == StopRule::kGap
                               ? last_.relative_gap
                               : last_.kkt_violation / standardization_.y_scale;
    converged_ = measure < options_.tol;
    // The active sweeps stopped too early for the stopping rule: settle them further next time.
    if (!converged_) inner_tol_ *= 0.1;
    save_state(last_);
}

void Trainer::save_state(const Evaluation& e) {
    if (options_.schedule == Schedule::kCyclic) return;
    ROTOR_ASSERT(pending_coords_.empty(), "save_state with residual updates pending");
    saved_.b.assign(coefs_.b.begin(), coefs_.b.end());
    saved_.last_delta.assign(coefs_.last_delta.begin(), coefs_.last_delta.end());
    saved_.offset = coefs_.offset;
    saved_.gradient_lambda = gradient_lambda_;
    saved_.inner_tol = inner_tol_;
    saved_.eval = e;
    run([&](Worker& me) { me.saved_residuals.assign(me.residuals.begin(), me.residuals.end()); },
        slice_entries_);
}

void Trainer::roll_back() {
    // Every rank decides alike (the evaluation is replicated), and the state returns to bits
    // every rank holds: the run stays the same bits on any ranks x threads.
    flush_residuals();
    coefs_.b.assign(saved_.b.begin(), saved_.b.end());
    coefs_.last_delta.assign(saved_.last_delta.begin(), saved_.last_delta.end());
    coefs_.offset = saved_.offset;
    run(
        [&](Worker& me) {
            me.residuals.assign(me.saved_residuals.begin(), me.saved_residuals.end());
        },
        slice_entries_);
    if (sampler_) sampler_ = std::make_unique<PrioritySampler>(coefs_.last_delta, strads_.eta);
    // The gradients of the diverged evaluation are not the saved state's: the next iteration
    // sweeps (or draws from) every coordinate.
    gradient_lambda_ = saved_.gradient_lambda;
    gradient_fresh_ = false;
    inner_tol_ = saved_.inner_tol;
    last_ = saved_.eval;
    converged_ = false;
    strads_.parallel = std::max<std::uint32_t>(1, strads_.parallel / 2);
    ++rollbacks_;
}

TrainerState Trainer::gather_state() {
    flush_residuals();
    TrainerState s{{coefs_.b.begin(), coefs_.b.end()},
                   {coefs_.last_delta.begin(), coefs_.last_delta.end()},
                   coefs_.offset,
                   {},
                   {gradient_.begin(), gradient_.end()},
                   gradient_lambda_,
                   gradient_fresh_,
                   inner_tol_,
                   iterations_done_,
                   rounds_done_,
                   total_updates_,
                   last_,
                   converged_,
                   strads_.parallel,
                   rollbacks_};
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
    coefs_.b.assign(state.b.begin(), state.b.end());
    coefs_.last_delta.assign(state.last_delta.begin(), state.last_delta.end());
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
    gradient_.assign(state.gradient.begin(), state.gradient.end());
    gradient_lambda_ = state.gradient_lambda;
    gradient_fresh_ = state.gradient_fresh;
    inner_tol_ = state.inner_tol;
    iterations_done_ = state.iterations_done;
    rounds_done_ = state.rounds_done;
    total_updates_ = state.total_updates;
    last_ = state.last;
    converged_ = state.converged;
    strads_.parallel = state.parallel > 0 ? state.parallel : options_.strads.parallel;
    rollbacks_ = state.rollbacks;
    // The checkpoint was written after an accepted evaluation (state.last) or a rollback to it.
    save_state(last_);
}

void Trainer::set_lambda(double lambda) {
    // A fit ends on an evaluation, so the saved state is the current one; its objective at the
    // new λ: F changes by (λ_new − λ_old) ‖β_std‖₁.
    saved_.eval.objective += (lambda - options_.lambda) * saved_.eval.l1_norm;
    options_.lambda = lambda;
    options_.validate();
    iterations_done_ = 0;
    converged_ = false;
    inner_tol_ = options_.tol;
}

}  // namespace rotor::lasso

namespace rotor::lasso {

namespace {

/// The Trainer as the loop's driver, its evaluation through the caller's `evaluate`.
class FitDriver {
  public:
    FitDriver(Trainer& t, const std::function<void(train::Record&)>& evaluate)
        : t_(t), evaluate_(evaluate) {}
    std::uint32_t iterations_done() const { return t_.iterations_done(); }
    train::Record iterate() { return t_.iterate(); }
    void evaluate_record(train::Record& r) {
        Stopwatch clock;
        evaluate_(r);
        eval_s_ += clock.seconds();
    }
    bool converged() const { return t_.converged(); }
    double eval_s() const { return eval_s_; }

  private:
    Trainer& t_;
    const std::function<void(train::Record&)>& evaluate_;
    double eval_s_ = 0;
};

class NoReporter final : public train::Reporter {
  public:
    void on_iteration(const train::Record&, std::uint32_t) override {}
};

}  // namespace

train::Record fit(Trainer& t, train::Reporter* reporter,
                  const std::function<void(train::Record&)>& evaluate, std::optional<double> lambda,
                  const std::function<void()>& after_iteration) {
    FitDriver driver(t, evaluate);
    train::Hooks hooks;
    hooks.before_report = [&](train::Record& r) {
        r.set("eval_s", driver.eval_s());  // evaluations so far (time_s leaves them out)
        if (lambda) r.set("lambda", *lambda);
    };
    if (after_iteration) hooks.after_iteration = [&](const train::Record&) { after_iteration(); };
    NoReporter none;
    const train::LoopOptions loop{.last = t.options().max_iterations,
                                  .eval_every = t.options().eval_every,
                                  .report = reporter != nullptr};
    train::Record r =
        train::run_iterations(driver, loop, reporter != nullptr ? *reporter : none, hooks);
    if (!r.has("objective")) evaluate(r);
    return r;
}

}  // namespace rotor::lasso
