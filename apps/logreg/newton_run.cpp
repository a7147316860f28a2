#include "apps/logreg/newton_run.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <fmt/format.h>

#include "apps/logreg/evaluation.h"
#include "apps/logreg/metrics_log.h"
#include "core/base/error.h"
#include "core/logreg/newton.h"
#include "train/reporter.h"

namespace rotor::logreg {
namespace {

MetricsRecord record_of(const NewtonStatus& st, double tol) {
    Evaluation e;
    e.objective = st.objective;
    e.loss = st.loss;
    e.kkt_violation = st.kkt_violation;
    e.nonzeros = st.nonzeros;
    MetricsRecord r = evaluation_record(e, st.iteration, st.seconds, 0);
    r.emplace_back("subgradient_ratio", st.subgradient / st.zero);
    r.emplace_back("converged", subgradient_converged(st.subgradient, st.zero, tol) ? 1 : 0);
    r.emplace_back("cd_cycles", st.cycles);
    r.emplace_back("working_set", st.working);
    return r;
}

std::string stop_line_of(const TrainFlags& f, NewtonStop stop, const NewtonStatus& st,
                         std::uint64_t cap) {
    std::string why;
    if (stop == NewtonStop::kIterations)
        why = fmt::format("iteration cap --iterations {} reached", cap);
    if (stop == NewtonStop::kTime) why = fmt::format("--time-limit {:g} s reached", f.time_limit);
    if (stop == NewtonStop::kStalled) why = "the line search found no descent (rounding level)";
    return stop_sentence(fmt::format("after {} Newton iterations", st.iteration), why,
                         st.subgradient / st.zero, f.tol);
}

}  // namespace

void reuse_freed_memory() {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
#endif
}

bool use_newton(const TrainFlags& f, int ranks) {
    const char* prox_flag = nullptr;
    for (const char* flag : kProxOnlyFlags)
        if (flag_given(f, flag)) {
            prox_flag = flag;
            break;
        }
    if (f.solver == "prox") return false;
    if (f.solver == "newton") {
        if (ranks > 1)
            throw ConfigError("--solver",
                              "newton runs in one process; under mpiexec use prox "
                              "(the parameter server's block proximal gradient)");
        if (prox_flag != nullptr)
            throw ConfigError(prox_flag, "applies to --solver prox only (not newton)");
        return true;
    }
    if (f.solver != "auto") throw ConfigError("--solver", "auto, newton or prox");
    return ranks == 1 && prox_flag == nullptr;
}

NewtonRun train_newton(const TrainFlags& f, comm::Communicator& world, Shard& part,
                       const Examples* test, const RecordSink& metrics) {
    NewtonOptions o;
    o.lambda = f.options.prox.lambda;
    o.tol = f.tol;
    o.seed = f.options.prox.seed;
    o.time_limit = f.time_limit;
    o.max_iterations =
        flag_given(f, "--iterations") ? f.options.iterations : kDefaultNewtonIterations;
    const std::uint64_t every = flag_given(f, "--eval-every") ? f.eval_every : 1;
    std::optional<NewtonStatus> pending;  // a record is written once the next status shows it
    const auto flush = [&] {              // was not the last
        if (metrics && pending && every > 0 && pending->iteration % every == 0)
            metrics(pending->iteration, metrics_json(record_of(*pending, f.tol)));
    };
    std::optional<train::TerminalReporter> terminal;  // progress on stdout
    if (!f.quiet) terminal.emplace(stdout, progress_schema(true));
    NewtonSolver solver(part, o);
    const NewtonStop stop = solver.run([&](const NewtonStatus& st) {
        flush();
        if (terminal && st.iteration > 0)  // iteration 0: w = 0, before any work
            terminal->on_iteration(progress_record(record_of(st, f.tol), 1,
                                                   st.seconds - (pending ? pending->seconds : 0)),
                                   static_cast<std::uint32_t>(o.max_iterations));
        pending = st;
    });
    const NewtonStatus& st = solver.status();
    NewtonRun run;
    run.iterations = st.iteration;
    run.time_s = st.seconds;
    run.stop_line = stop_line_of(f, stop, st, o.max_iterations);
    run.converged = stop == NewtonStop::kConverged;
    // The model as the block solver's: w over the keys, objective summed exactly.
    DelayedResult r;
    const auto keys = part.keys();
    const auto w = solver.weights();
    for (std::size_t j = 0; j < keys.size(); ++j)
        if (w[j] != 0) r.server_weights.emplace(keys[j], w[j]);
    Evaluation e = evaluate(world, &part, r, f.options.prox, test, false);
    if (metrics) {
        MetricsRecord rec = record_of(st, f.tol);
        rec[3].second = e.objective;  // the exact sums
        rec[4].second = e.loss;
        rec[5].second = e.objective - e.loss;
        if (e.test) {
            rec.emplace_back("test_logloss", e.test->logloss);
            rec.emplace_back("test_auc", e.test->auc);
            rec.emplace_back("test_accuracy", e.test->accuracy);
        }
        metrics(st.iteration, metrics_json(rec));
    }
    run.model = std::move(e.model);
    return run;
}

}  // namespace rotor::logreg
