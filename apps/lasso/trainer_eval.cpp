// The trainer's evaluations and its state (apps/lasso/trainer.h): evaluate_all, the record's
// objective and stopping test, checkpoints' gather_state and restore, set_lambda.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "apps/lasso/trainer_internal.h"
#include "core/base/error.h"

namespace rotor::lasso {

using detail::share;

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

}  // namespace rotor::lasso
