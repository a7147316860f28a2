// `rotor rica train` behind its flags (docs/rica.md, "Command line"): the data read by every
// worker, the layout, the memory plan, the trainer run in segments between evaluations and
// checkpoints, the stopping rule, the metrics file, --resume, and the model written by rank 0.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "apps/rica/checkpoint.h"
#include "apps/rica/cli.h"
#include "comm/agreed.h"
#include "comm/collectives.h"
#include "core/base/error.h"
#include "core/base/timer.h"
#include "core/io/atomic_file.h"
#include "core/rica/model_file.h"
#include "train/common_flags.h"
#include "train/memory_plan.h"
#include "train/metrics_file.h"
#include "train/record.h"

namespace rotor::rica {
namespace {

comm::KvLayout layout_of(int servers, int ranks) {
    std::vector<int> all(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) all[static_cast<std::size_t>(r)] = r;
    if (servers == 0) return comm::KvLayout::even(all, all);
    if (servers < 0 || servers >= ranks)
        throw ConfigError("--servers", fmt::format("0 (every rank both) or 1..{} with {} ranks",
                                                   ranks - 1, ranks));
    return comm::KvLayout::even(std::vector<int>(all.begin(), all.begin() + servers),
                                std::vector<int>(all.begin() + servers, all.end()));
}

/// Steps of the first segment of a run that rebalances: the speeds it measures move the rows early.
constexpr std::uint64_t kFirstMeasure = 2;

std::string checkpoint_path(const TrainFlags& f) { return f.out + ".checkpoint"; }

void validate(TrainFlags& f, int ranks) {
    TrainerOptions& o = f.options;
    if (o.components < 1 || o.components > (1U << 20))
        throw ConfigError("--components", "must be in 1..2^20");
    if (!(o.lambda > 0) || !std::isfinite(o.lambda)) throw ConfigError("--lambda", "must be > 0");
    if (!(o.eta > 0) || !std::isfinite(o.eta)) throw ConfigError("--eta", "must be > 0");
    if (o.admm_iterations < 1) throw ConfigError("--admm-iterations", "must be >= 1");
    if (!(o.rho > 0) || !std::isfinite(o.rho)) throw ConfigError("--rho", "must be > 0");
    if (o.inner_iterations < 1) throw ConfigError("--inner-iterations", "must be >= 1");
    if (f.solver != "auto" && f.solver != "prox" && f.solver != "admm")
        throw ConfigError("--solver", "must be auto, prox or admm");
    if (o.block_rows < 1) throw ConfigError("--block-rows", "must be >= 1");
    if (o.threads < 1) throw ConfigError("--threads", "must be >= 1");
    if (!(o.timeout_s > 0)) throw ConfigError("--timeout", "must be > 0");
    if (!(f.tol >= 0)) throw ConfigError("--tol", "must be >= 0");
    if (f.eval_every < 1) throw ConfigError("--eval-every", "must be >= 1");
    o.delay = train::parse_delay(f.delay);
    if (!f.straggler.empty()) {
        std::tie(o.straggler_rank, o.straggler_factor) = train::parse_straggler(f.straggler);
        if (o.straggler_rank >= ranks)
            throw ConfigError("--simulate-straggler",
                              fmt::format("rank {} of {} ranks", o.straggler_rank, ranks));
    }
}

/// What a run sets up before training, on every rank alike (the data and rows on workers).
struct Setup {
    comm::KvLayout layout;
    int worker = -1;  ///< index among the workers, or -1
    Dense data;
    std::vector<double> c;
    Spectrum spectrum;
    std::size_t p = 0, n = 0;
    std::optional<Model> resumed;
    std::unique_ptr<RowWorker> rows;
    std::vector<std::size_t> bounds;  ///< the workers' first blocks, then the block count
    std::uint64_t max_rows = 0;       ///< the most rows a worker may hold (--max-memory; 0: any)
    std::unique_ptr<train::MetricsFile> metrics;  // rank 0
};

void prepare(TrainFlags& f, comm::Communicator& world, Setup& s) {
    comm::run_agreed(world, [&] {
        validate(f, world.size());
        if (world.rank() == 0) {
            core::check_output(f.out, core::OutputKind::kFile, kModelMagic,
                               f.overwrite || !f.resume.empty(), "--out");
            if (!f.metrics.empty()) core::check_output_parent(f.metrics, "--metrics");
        }
        s.layout = layout_of(f.servers, world.size());
        const auto it = std::find(s.layout.workers.begin(), s.layout.workers.end(), world.rank());
        if (it != s.layout.workers.end())
            s.worker = static_cast<int>(it - s.layout.workers.begin());
        const bool one_worker = s.layout.workers.size() == 1;
        if (f.solver == "admm" && !one_worker)
            throw ConfigError("--solver",
                              "admm needs every row on one worker (one worker rank); "
                              "prox is the distributed solver");
        f.options.solver = f.solver == "prox" || !one_worker ? Solver::kProx : Solver::kAdmm;
        if (f.options.straggler_rank >= 0 &&
            std::find(s.layout.workers.begin(), s.layout.workers.end(), f.options.straggler_rank) ==
                s.layout.workers.end())
            throw ConfigError("--simulate-straggler",
                              fmt::format("rank {} is not a worker", f.options.straggler_rank));
        if (!f.resume.empty())
            s.resumed =
                read_checkpoint(f.resume, f.options.components, f.options.lambda, f.iterations);
        if (s.worker >= 0) s.data = read_observations(f.data);
    });
    // Every worker read the same file: its shape, told to the servers too.
    using V = std::vector<std::uint64_t>;
    const auto shapes = comm::allgather(world, V{s.data.n, s.data.p}, "data shape");
    for (const auto& v : shapes)
        if (v[1] > 0) {
            s.n = v[0];
            s.p = v[1];
        }
    const int host_ranks = train::ranks_on_this_host(world);  // collective: outside the step
    comm::run_agreed(world, [&] {
        for (const auto& v : shapes)
            if (v[1] > 0 && (v[0] != s.n || v[1] != s.p))
                throw InputError(f.data, "differs between the workers' ranks");
        if (s.resumed) check_dimension(*s.resumed, f.resume, f.data, s.p);
        const TrainerOptions& o = f.options;
        const auto [b0, b1] = worker_blocks(o.components, o.block_rows, std::max(s.worker, 0),
                                            s.layout.workers.size());
        const std::size_t r0 = std::min(b0 * o.block_rows, o.components),
                          r1 = std::min(b1 * o.block_rows, o.components);
        const std::uint64_t plan = s.worker < 0 ? 0 : estimate_memory(s.n, s.p, r1 - r0, o);
        const std::uint64_t limit = train::memory_limit(f.max_memory, host_ranks);
        train::check_memory(plan, limit,
                            "use fewer components per worker (more worker ranks) or raise "
                            "--max-memory",
                            world.size() > 1);
        // Rebalancing moves rows between workers: none takes more than the limit allows.
        const std::uint64_t base = estimate_memory(s.n, s.p, 0, o),
                            per_row = estimate_memory(s.n, s.p, 1, o) - base;
        if (limit > 0 && per_row > 0) s.max_rows = limit > base ? (limit - base) / per_row : 1;
        for (std::size_t q = 0; q < s.layout.workers.size(); ++q)
            s.bounds.push_back(
                worker_blocks(o.components, o.block_rows, q, s.layout.workers.size()).first);
        s.bounds.push_back((o.components + o.block_rows - 1) / o.block_rows);
        if (s.worker < 0) return;
        s.c = gram(s.data);
        s.spectrum = Spectrum::of(s.c, s.p);
        std::vector<double> w, metric;
        if (s.resumed) {
            w.assign(s.resumed->w.begin() + static_cast<std::ptrdiff_t>(r0 * s.p),
                     s.resumed->w.begin() + static_cast<std::ptrdiff_t>(r1 * s.p));
            metric.assign(s.resumed->metric.begin() + static_cast<std::ptrdiff_t>(r0),
                          s.resumed->metric.begin() + static_cast<std::ptrdiff_t>(r1));
        } else {
            w = initial_rows(o.seed, r0, r1 - r0, s.p, o.components);
        }
        s.rows = std::make_unique<RowWorker>(s.data, s.c, s.spectrum, o, b0, b1, std::move(w),
                                             std::move(metric));
    });
    comm::run_agreed(world, [&] {
        if (world.rank() == 0 && !f.metrics.empty())
            s.metrics = std::make_unique<train::MetricsFile>(
                f.metrics,
                s.resumed ? std::optional<std::uint64_t>(s.resumed->iterations) : std::nullopt);
    });
}

/// The objective of the rows as the last pull saw them: objective, reconstruction, L1 total
/// (computed on the first worker, sent to every rank).
std::vector<double> evaluate(comm::Communicator& world, const Setup& s, const SegmentResult& r,
                             double lambda) {
    std::vector<double> e(3, 0.0);
    if (s.worker == 0) {
        const double smooth = smooth_terms(s_of(r.pulled, s.p), s.c, s.p, false).value;
        const double l1 = r.pulled.back();
        e = {smooth + lambda * l1, smooth, l1};
    }
    comm::broadcast(world, e, s.layout.workers.front(), "objective");
    return e;
}

/// Collective: W (and with `metric` the AdaGrad factors) gathered on rank 0, rows in order.
Model gather_model(comm::Communicator& world, const Setup& s, const TrainFlags& f, bool metric) {
    std::vector<double> mine, h;
    if (s.rows) {
        mine = s.rows->w();
        if (metric) h = s.rows->metric();
    }
    const auto ws = comm::gather(world, mine, 0, "rows of W");
    const auto hs = comm::gather(world, h, 0, "metric");
    Model m;
    m.components = f.options.components;
    m.dimension = s.p;
    m.lambda = f.options.lambda;
    for (const auto& v : ws) m.w.insert(m.w.end(), v.begin(), v.end());
    for (const auto& v : hs) m.metric.insert(m.metric.end(), v.begin(), v.end());
    return m;
}

}  // namespace

void run_train(TrainFlags& f, comm::Communicator& world) {
    Setup s;
    prepare(f, world, s);
    const TrainerOptions& o = f.options;
    const bool talk = !f.quiet && world.rank() == 0;
    std::uint64_t done = s.resumed ? s.resumed->iterations : 0;
    double time_s = s.resumed ? s.resumed->time_s : 0;
    if (talk) {
        fmt::print(
            "rotor: rica train: {} observations of dimension {}; {} components, lambda {}, "
            "delay {}; {} server{}, {} worker{} x {} thread{}\n",
            s.n, s.p, o.components, o.lambda, f.delay, s.layout.servers.size(),
            s.layout.servers.size() == 1 ? "" : "s", s.layout.workers.size(),
            s.layout.workers.size() == 1 ? "" : "s", o.threads, o.threads == 1 ? "" : "s");
        if (done > 0) fmt::print("rotor: resumed {} at iteration {}\n", f.resume, done);
        std::fflush(stdout);
    }
    const train::RecordSchema schema = record_schema();
    double previous = NAN;
    bool converged = false;
    std::vector<double> last;
    // Row blocks follow the workers' speeds (docs/rica.md, "Rebalancing"): measured over a first
    // short segment, then over each segment.
    const bool rebalance = o.rebalance && o.solver == Solver::kProx && s.layout.workers.size() > 1;
    bool measured = false;
    while (!converged) {
        std::uint64_t steps = std::min(f.eval_every - done % f.eval_every, f.iterations - done);
        if (f.checkpoint_every > 0)
            steps = std::min(steps, f.checkpoint_every - done % f.checkpoint_every);
        if (rebalance && !measured) steps = std::min<std::uint64_t>(steps, kFirstMeasure);
        if (done >= f.iterations) steps = 0;
        Stopwatch clock;
        const SegmentResult r = run_segment(world, s.layout, s.rows.get(), s.p, steps, o);
        if (rebalance && steps > 0 && done + steps < f.iterations) {
            measured = true;
            const std::size_t moved =
                rebalance_blocks(world, s.layout, s.rows, s.bounds, steps, r.compute_s, s.data, s.c,
                                 s.spectrum, o, s.max_rows);
            if (moved > 0 && talk) {
                std::string rows;
                for (std::size_t q = 0; q + 1 < s.bounds.size(); ++q)
                    rows += fmt::format("{}{}", q > 0 ? ", " : "",
                                        std::min(s.bounds[q + 1] * o.block_rows, o.components) -
                                            s.bounds[q] * o.block_rows);
                fmt::print(
                    "rotor: rebalanced after iteration {}: {} rows moved; rows per worker {}\n",
                    done + steps, moved, rows);
                std::fflush(stdout);
            }
        }
        const double seconds = clock.seconds();
        time_s += seconds;
        done += steps;
        last = evaluate(world, s, r, o.lambda);
        std::uint8_t stop = done >= f.iterations ? 1 : 0;
        if (world.rank() == 0) {
            if (steps > 0 && (done % f.eval_every == 0 || stop)) {
                const train::Record rec = evaluation_record(done, steps, seconds, time_s, s.n,
                                                            last[0], last[1], last[2], previous);
                const double change = *rec.get("relative_change");
                if (s.metrics) s.metrics->append(done, train::record_json(rec, schema));
                if (talk) {
                    fmt::print("{}", progress_line(rec, f.iterations));
                    std::fflush(stdout);
                }
                if (f.tol > 0 && change >= 0 && change < f.tol) stop = 2;
                previous = last[0];
            }
        }
        comm::broadcast(world, stop, 0, "stop");
        converged = stop != 0;
        if (f.checkpoint_every > 0 && (done % f.checkpoint_every == 0 || converged)) {
            Model m = gather_model(world, s, f, true);
            comm::run_agreed(world, [&] {
                if (world.rank() != 0) return;
                m.iterations = done;
                m.objective = last[0];
                m.time_s = time_s;
                write_model(checkpoint_path(f), m);
            });
        }
        if (stop == 2 && talk)
            fmt::print("rotor: converged: the objective fell by less than --tol {} x itself\n",
                       f.tol);
    }
    Model m = gather_model(world, s, f, false);
    comm::run_agreed(world, [&] {
        if (world.rank() != 0) return;
        m.iterations = done;
        m.objective = last[0];
        m.time_s = time_s;
        write_model(f.out, m);
        if (s.metrics) s.metrics->commit();
        if (talk)
            fmt::print(
                "rotor: objective {:.10g} after {} iterations, {:.3f} s; model written to {}\n",
                m.objective, done, time_s, f.out);
    });
}

}  // namespace rotor::rica
