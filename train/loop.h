// The iteration loop every trainer runs: iterate, evaluate at the evaluation iterations, report,
// run the caller's hooks, stop at the last iteration or when a driver with a stopping rule has
// converged; with the sweeps between two sync points run back to back when the driver can. Knows
// no model: a driver is anything with the members named below.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>

#include "core/base/timer.h"
#include "train/record.h"
#include "train/reporter.h"

namespace rotor::train {

/// Optional steps the caller adds to training.
struct Hooks {
    /// On every iteration, before it is reported: may add values (the λ of a path, ...). Runs
    /// after the evaluation, if any, on the thread that reports (see after_iteration).
    std::function<void(Record&)> before_report;
    /// On evaluation iterations, after the driver's own evaluation: may add values. Runs on the
    /// training thread with every sweep finished.
    std::function<void(Record&)> on_evaluate;
    /// After every iteration has been reported (checkpoints, α optimisation, ...). On the
    /// iterations for which needs_state returns true (all of them when needs_state is empty) it
    /// runs on the training thread with that sweep finished and the next not begun, so it may
    /// read and change the driver; on the others it may run on a worker thread while the next
    /// sweep runs (one call at a time, in order) and must not touch the driver.
    std::function<void(const Record&)> after_iteration;
    /// Whether after_iteration at this iteration reads or changes the driver's state.
    std::function<bool(std::uint32_t)> needs_state;
};

/// What run_iterations needs of a driver: the iterations done, one iteration, and its
/// evaluation added to a record (collective under MPI: every rank calls it at the same point).
template <class T>
concept Driver = requires(T& t, Record& r) {
    { t.iterations_done() } -> std::convertible_to<std::uint32_t>;
    { t.iterate() } -> std::same_as<Record>;
    t.evaluate_record(r);
};

/// A driver that can run several sweeps back to back: iterate_span(n, on_sweep) returns the last
/// sweep's record and hands the others to on_sweep as each completes (possibly from a worker).
template <class T>
concept SpanDriver = Driver<T> && requires(T& t, const std::function<void(Record&)>& f) {
    { t.iterate_span(std::uint32_t{1}, f) } -> std::same_as<Record>;
};

/// A driver with a stopping rule: after an iteration and its evaluation, converged() true ends
/// the loop before `last` (collective under MPI: every rank must answer the same, e.g. from a
/// replicated evaluation). Its iterations are not spanned: the rule is looked at after each.
template <class T>
concept StoppingDriver = Driver<T> && requires(const T& t) {
    { t.converged() } -> std::convertible_to<bool>;
};

/// How run_iterations runs.
struct LoopOptions {
    std::uint32_t last = 0;        ///< run until iterations_done() reaches this
    std::uint32_t eval_every = 0;  ///< evaluate every N iterations (0: only at `last`)
    bool report = true;            ///< call the reporter (false on MPI ranks other than 0)
};

/// The first iteration after `done` that needs every sweep finished: the last one, an evaluation
/// iteration, or one whose after_iteration hook needs the state.
inline std::uint32_t next_sync_point(std::uint32_t done, std::uint32_t last,
                                     std::uint32_t eval_every, const Hooks& hooks) {
    for (std::uint32_t i = done + 1; i < last; ++i) {
        if (eval_every > 0 && i % eval_every == 0) return i;
        if (hooks.after_iteration && (!hooks.needs_state || hooks.needs_state(i))) return i;
    }
    return last;
}

/// Iterates until driver.iterations_done() reaches options.last or a StoppingDriver has
/// converged; evaluates every eval_every iterations and at the last one
/// (driver.evaluate_record, then hooks.on_evaluate), runs hooks.before_report, reports each
/// iteration when options.report, then runs hooks.after_iteration. time_s leaves evaluation,
/// reporting and the hooks out: it measures training, not monitoring. Returns the last
/// iteration's record (empty when there was none to run).
template <Driver T>
Record run_iterations(T& driver, const LoopOptions& options, Reporter& reporter,
                      const Hooks& hooks) {
    Stopwatch clock;
    double monitoring_s = 0;
    const auto stopped = [&] {
        if constexpr (StoppingDriver<T>) {
            return driver.converged();
        } else {
            return false;
        }
    };
    Record r;
    while (driver.iterations_done() < options.last && !stopped()) {
        if constexpr (SpanDriver<T> && !StoppingDriver<T>) {
            const std::uint32_t done = driver.iterations_done();
            const std::uint32_t sync =
                next_sync_point(done, options.last, options.eval_every, hooks);
            // Sweeps before the sync point are reported as they complete, from a worker.
            r = driver.iterate_span(sync - done, [&](Record& early) {
                early.time_s = clock.seconds() - monitoring_s;
                if (hooks.before_report) hooks.before_report(early);
                if (options.report) reporter.on_iteration(early, options.last);
                if (hooks.after_iteration) hooks.after_iteration(early);
            });
        } else {
            r = driver.iterate();
        }
        r.time_s = clock.seconds() - monitoring_s;
        const bool eval =
            r.iter == options.last || (options.eval_every > 0 && r.iter % options.eval_every == 0);
        Stopwatch monitoring;
        if (eval) {
            driver.evaluate_record(r);
            if (hooks.on_evaluate) hooks.on_evaluate(r);
        }
        if (hooks.before_report) hooks.before_report(r);
        if (options.report) reporter.on_iteration(r, options.last);
        if (hooks.after_iteration) hooks.after_iteration(r);
        monitoring_s += monitoring.seconds();
    }
    return r;
}

}  // namespace rotor::train
