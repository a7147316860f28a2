#include "apps/logreg/train_run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "apps/logreg/checkpoint.h"
#include "apps/logreg/evaluation.h"
#include "apps/logreg/input.h"
#include "apps/logreg/metrics_log.h"
#include "apps/logreg/newton_run.h"
#include "apps/logreg/traffic.h"
#include "comm/agreed.h"
#include "comm/collectives.h"
#include "core/base/error.h"
#include "core/base/timer.h"
#include "core/io/atomic_file.h"
#include "core/logreg/block_groups.h"
#include "core/logreg/examples_binary.h"
#include "train/checkpoint_dir.h"
#include "train/common_flags.h"
#include "train/memory_plan.h"
#include "train/metrics_file.h"
#include "train/reporter.h"
#include "train/resume.h"
#include "train/run_outputs.h"

namespace rotor::logreg {
namespace {

/// How a model file of rotor begins (core::check_output).
constexpr std::string_view kModelMarker = "rotor-logreg-model";

/// What a run sets up before training, on every rank alike (parts only where they apply).
struct TrainSetup {
    comm::KvLayout layout;
    int worker = -1;  ///< index among the workers, or -1
    std::optional<Shard> part;
    std::optional<Examples> test;  // rank 0
    std::uint64_t all_examples = 0;
    std::uint64_t first_example = 0;
    DataFingerprint print;
    std::uint64_t plan = 0;
    std::optional<Checkpoint> resume;
    std::unique_ptr<train::MetricsFile> metrics;      // rank 0
    std::optional<train::TerminalReporter> terminal;  // rank 0 unless --quiet: progress on stdout
    DelayedStart start;
    DelayedMemory memory;  ///< the filters' memory, carried over the calls between evaluations
    std::uint64_t done = 0;
    double time_s = 0;
};

comm::KvLayout layout_of(int servers, int ranks) {
    std::vector<int> all(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) all[static_cast<std::size_t>(r)] = r;
    if (servers == 0) return comm::KvLayout::even(all, all);
    if (servers < 0 || servers >= ranks) {
        throw ConfigError("--servers", fmt::format("0 (every rank both) or 1..{} with {} ranks",
                                                   ranks - 1, ranks));
    }
    return comm::KvLayout::even(std::vector<int>(all.begin(), all.begin() + servers),
                                std::vector<int>(all.begin() + servers, all.end()));
}

CheckpointSettings settings_of(const TrainFlags& f) {
    const DelayedOptions& o = f.options;
    CheckpointSettings s;
    s.lambda = o.prox.lambda;
    s.blocks = o.prox.blocks - (o.prox.groups ? o.prox.groups->groups() : 0);  // the flag's
    s.seed = o.prox.seed;
    s.eta = o.prox.eta;
    s.max_step = o.prox.max_step;
    s.curvature = f.curvature;
    s.delay = f.delay;
    s.intercept = !f.no_intercept;
    s.hashed = f.hash_features;
    if (!f.block_file.empty()) s.block_file = fmt::format("{:016x}", f.block_file_digest);
    s.iterations = o.iterations;
    return s;
}

/// --resume: the run continues with the checkpoint's settings. A model-defining flag given with
/// a different value is refused by name; --iterations (the total to reach) may change.
void apply_checkpoint(TrainFlags& f, const Checkpoint& c, bool iterations_given) {
    const CheckpointSettings theirs = c.settings;
    train::refuse_resume_conflicts(
        resume_settings(settings_of(f), theirs),
        [&f](const std::string& flag) { return flag_given(f, flag); }, f.common.resume);
    DelayedOptions& o = f.options;
    o.prox.lambda = theirs.lambda;
    o.prox.blocks = theirs.blocks;
    o.prox.seed = theirs.seed;
    o.prox.eta = theirs.eta;
    o.prox.max_step = theirs.max_step;
    f.curvature = theirs.curvature;
    f.delay = theirs.delay;
    f.no_intercept = !theirs.intercept;
    f.hash_features = theirs.hashed;
    if (!theirs.block_file.empty() && f.block_file.empty())
        throw ConfigError("--block-file",
                          fmt::format("is required: {} was trained with a block file (digest {})",
                                      f.common.resume, theirs.block_file));
    if (!iterations_given) o.iterations = theirs.iterations;
    train::check_resume_target(c.state.iterations_done, o.iterations, f.common.resume);
}

void validate(TrainFlags& f, int ranks) {
    DelayedOptions& o = f.options;
    if (!(o.prox.lambda > 0)) throw ConfigError("--lambda", "must be > 0");
    if (o.prox.blocks < 1) throw ConfigError("--blocks", "must be >= 1");
    if (!(o.prox.eta > 0 && o.prox.eta <= 1)) throw ConfigError("--eta", "must be in (0, 1]");
    if (!(o.timeout_s > 0)) throw ConfigError("--timeout", "must be > 0");
    o.filters.stack = parse_filters(f.filters);
    o.filters.seed = o.prox.seed;
    if (!(o.prox.max_step >= 0)) throw ConfigError("--max-step", "must be >= 0");
    if (!(f.tol >= 0 && f.tol < 1)) throw ConfigError("--tol", "must be in [0, 1)");
    if (!(f.time_limit >= 0)) throw ConfigError("--time-limit", "must be >= 0");
    o.delay = parse_delay(f.delay);
    o.push_values = f.deterministic ? PushValues::kExact : PushValues::kAuto;
    if (f.curvature.empty()) {  // auto (not given, not resumed): docs/logreg.md, "Defaults"
        f.curvature = o.delay == 0 ? "local" : "bound";
        if (o.delay == 0 && !flag_given(f, "--max-step")) o.prox.max_step = 1;
    }
    o.prox.curvature = f.curvature == "local" ? Curvature::kLocal : Curvature::kBound;
    if (!f.straggler.empty()) {
        parse_straggler(f.straggler, o);
        if (o.straggler_rank >= ranks)
            throw ConfigError("--simulate-straggler",
                              fmt::format("rank {} of {} ranks", o.straggler_rank, ranks));
    }
}

/// --block-file: its groups become blocks 0..G-1, --blocks hash blocks follow them.
void read_groups(TrainFlags& f) {
    if (f.block_file.empty()) return;
    BlockProxOptions& o = f.options.prox;
    auto groups =
        std::make_shared<const BlockGroups>(read_block_file(f.block_file, f.hash_features));
    if (groups->digest() != f.block_file_digest)
        throw InputError(f.block_file, "changed while it was read");
    if (groups->groups() > (1U << 30) - o.blocks)
        throw ConfigError("--block-file", fmt::format("{} groups: too many", groups->groups()));
    o.blocks += groups->groups();
    o.groups = std::move(groups);
}

std::string checkpoint_dir(const TrainFlags& f) {
    return f.common.checkpoint_dir.empty() ? f.common.out + ".checkpoint" : f.common.checkpoint_dir;
}

/// Before any work: --out may be written (core::check_output: new, or an earlier model with
/// --overwrite, or in place by a resumed run, which continues the run that wrote it), and the
/// directories of --metrics, --stats and the checkpoints exist.
void check_outputs(const TrainFlags& f) {
    core::check_output(f.common.out, core::OutputKind::kFile, kModelMarker,
                       f.common.overwrite || !f.common.resume.empty(), "--out");
    if (!f.common.metrics.empty()) core::check_output_parent(f.common.metrics, "--metrics");
    if (!f.stats.empty()) core::check_output_parent(f.stats, "--stats");
    if (f.common.checkpoint_every > 0)
        core::check_output_parent(checkpoint_dir(f), f.common.checkpoint_dir.empty()
                                                         ? "--checkpoint-every"
                                                         : "--checkpoint-dir");
}

/// Phase 1 (local, agreed by the caller): flags, the checkpoint, the layout, the part's count.
PartCount count_phase(TrainFlags& f, comm::Communicator& world, TrainSetup& s,
                      bool iterations_given) {
    if (world.rank() == 0) check_outputs(f);
    if (f.common.resume.empty() && !flag_given(f, "--lambda"))
        throw ConfigError("--lambda", "is required (unless --resume)");
    if (!f.block_file.empty()) f.block_file_digest = block_file_digest(f.block_file);
    if (!f.common.resume.empty()) {
        s.resume = read_checkpoint(f.common.resume);
        apply_checkpoint(f, *s.resume, iterations_given);
    }
    validate(f, world.size());
    read_groups(f);
    s.layout = layout_of(f.servers, world.size());
    const auto it = std::find(s.layout.workers.begin(), s.layout.workers.end(), world.rank());
    if (it != s.layout.workers.end()) s.worker = static_cast<int>(it - s.layout.workers.begin());
    if (f.options.straggler_rank >= 0 &&
        std::find(s.layout.workers.begin(), s.layout.workers.end(), f.options.straggler_rank) ==
            s.layout.workers.end())
        throw ConfigError("--simulate-straggler",
                          fmt::format("rank {} is not a worker", f.options.straggler_rank));
    if (f.common.checkpoint_every > 0 && world.rank() == 0)
        train::remove_stale_temporaries(checkpoint_dir(f));
    if (s.worker < 0) return {};
    return count_part(f.data, static_cast<std::size_t>(s.worker), s.layout.workers.size());
}

/// The defaults that depend on the data (docs/logreg.md, "Defaults"), for flags not given and
/// not taken from a checkpoint: --blocks from the keys, --iterations a cap of kDefaultPasses
/// passes, and with --tol an evaluation every kEvalPasses passes (the rule is tested there).
void auto_settings(TrainFlags& f, std::uint64_t keys, int ranks) {
    DelayedOptions& o = f.options;
    const bool resumed = !f.common.resume.empty();
    if (!resumed && !flag_given(f, "--blocks"))
        o.prox.blocks += auto_blocks(keys, o.threads, ranks) - 1;
    const std::uint64_t pass = o.prox.blocks;
    if (!resumed && !flag_given(f, "--iterations")) o.iterations = kDefaultPasses * pass;
    if (f.tol > 0 && !flag_given(f, "--eval-every")) f.eval_every = kEvalPasses * pass;
}

/// Phases 2 and 3: the memory plan, the part read, the fingerprint, the resumed state.
void load_phase(TrainFlags& f, comm::Communicator& world, TrainSetup& s, const PartCount& mine) {
    const bool groups_hashed = f.hash_features;
    using V = std::vector<std::uint64_t>;
    const auto counts =
        comm::allgather(world,
                        V{mine.newlines, mine.examples, mine.nonzeros, mine.keys,
                          mine.form == ExamplesForm::kBinary ? 1U : 0U, f.block_file_digest},
                        "input counts");
    for (const auto& c : counts)
        if (c[5] != f.block_file_digest)
            throw ConfigError("--block-file",
                              "differs between ranks (every rank reads the same file)");
    PlanInputs plan{mine,
                    0,
                    0,
                    s.layout.servers.size(),
                    false,
                    world.rank() == 0,
                    f.options.prox.blocks,
                    f.options.delay,
                    f.options.threads};
    std::uint64_t first_line = 1, nonzeros = 0, binary_keys = 0;
    for (std::size_t q = 0; q < counts.size(); ++q) {
        if (static_cast<int>(q) < world.rank()) first_line += counts[q][0];
        plan.all_examples += counts[q][1];
        nonzeros += counts[q][2];
        if (counts[q][4] == 1) binary_keys = counts[q][3];
    }
    plan.all_keys = binary_keys > 0 ? binary_keys : nonzeros + 1;
    plan.server = std::find(s.layout.servers.begin(), s.layout.servers.end(), world.rank()) !=
                  s.layout.servers.end();
    bool hashed = false;
    const int host_ranks = train::ranks_on_this_host(world);
    comm::run_agreed(world, [&] {
        // Threads beyond the processors take turns (as LDA's and MF's): said once.
        const std::string warning =
            train::CommonTrainFlags::oversubscription_warning(f.options.threads, host_ranks);
        if (!warning.empty() && world.rank() == 0) fmt::print(stderr, "{}\n", warning);
        s.plan = estimate_memory(plan);
        train::check_memory(s.plan, train::memory_limit(f.common.max_memory, host_ranks),
                            "use more worker ranks (mpiexec) or raise --max-memory",
                            world.size() > 1);
        if (s.worker < 0) return;
        ReadExamplesOptions ro;
        ro.hash_features = f.hash_features;
        const Examples ex = read_part(f.data, mine, static_cast<std::size_t>(s.worker),
                                      s.layout.workers.size(), first_line, ro, hashed);
        // The hash is what a checkpoint records and --resume checks; nothing else reads it.
        const bool hash = f.common.checkpoint_every > 0 || !f.common.resume.empty();
        s.print = hash ? fingerprint(ex) : DataFingerprint{ex.size(), ex.nonzeros(), 0};
        s.part.emplace(ex, !f.no_intercept);
    });
    const auto prints = comm::allgather(world,
                                        V{s.print.examples, s.print.nonzeros, s.print.hash,
                                          hashed ? 1U : 0U, s.part ? s.part->keys().size() : 0U},
                                        "data prints");
    std::uint64_t keys = 0;  // the most keys of a worker: a lower bound of all the keys
    std::vector<DataFingerprint> parts;
    for (std::size_t q = 0; q < prints.size(); ++q) {
        if (static_cast<int>(q) < world.rank()) s.first_example += prints[q][0];
        parts.push_back({prints[q][0], prints[q][1], prints[q][2]});
        if (prints[q][3] == 1) f.hash_features = true;
        keys = std::max(keys, prints[q][4]);
    }
    auto_settings(f, keys, world.size());
    s.print = combine(parts);
    s.all_examples = s.print.examples;
    if (f.options.prox.groups && f.hash_features && !groups_hashed)
        throw ConfigError("--block-file",
                          "the data's features are hashed: give --hash-features so that its keys "
                          "are read as feature names");
}

/// Phase 3 (agreed): the data checked against the checkpoint, the state restored, the test set
/// and the metrics file opened on rank 0.
void restore_phase(const TrainFlags& f, comm::Communicator& world, TrainSetup& s) {
    if (s.all_examples == 0) throw InputError(f.data, "no examples");
    train::check_work_per_rank(s.all_examples, s.layout.workers.size(),
                               "examples (among the workers)");
    if (s.resume) {
        const Checkpoint& c = *s.resume;
        check_same_data(c.data, s.print, f.common.resume, f.data);
        const CheckpointState& st = c.state;
        restore_state(st, s.part ? &*s.part : nullptr, s.first_example, s.start);
        s.done = st.iterations_done;
        s.time_s = st.time_s;
    }
    if (world.rank() != 0) return;
    if (!f.test.empty()) {
        ReadExamplesOptions ro;
        ro.hash_features = f.hash_features;
        if (examples_form(f.test) == ExamplesForm::kBinary) {
            s.test.emplace(std::move(read_examples_binary(f.test).examples));
        } else {
            s.test.emplace(read_examples(f.test, ro));
        }
    }
    if (!f.common.metrics.empty())  // a resumed run keeps the records up to its checkpoint
        s.metrics = std::make_unique<train::MetricsFile>(
            f.common.metrics, s.resume ? std::optional<std::uint64_t>(s.done) : std::nullopt);
}

void prepare(TrainFlags& f, comm::Communicator& world, TrainSetup& s, bool iterations_given) {
    PartCount mine;
    comm::run_agreed(world, [&] { mine = count_phase(f, world, s, iterations_given); });
    load_phase(f, world, s, mine);
    comm::run_agreed(world, [&] { restore_phase(f, world, s); });
    s.resume.reset();
}

/// One record of the metrics file.
MetricsRecord record_of(const Evaluation& e, std::uint64_t iteration, double time_s, double eval_s,
                        double examples_per_s, double previous) {
    MetricsRecord r = evaluation_record(e, iteration, time_s, eval_s);
    r.emplace_back("relative_change", std::fabs(previous - e.objective) / std::fabs(e.objective));
    r.emplace_back("examples_per_s", examples_per_s);
    if (e.test) {
        r.emplace_back("test_logloss", e.test->logloss);
        r.emplace_back("test_auc", e.test->auc);
        r.emplace_back("test_accuracy", e.test->accuracy);
    }
    return r;
}

/// Collective: the state gathered on rank 0 and written as a checkpoint.
void checkpoint(const TrainFlags& f, comm::Communicator& world, const TrainSetup& s, const Model& m,
                std::uint64_t done, double time_s) {
    std::vector<double> margins;
    if (s.part) margins.assign(s.part->margins().begin(), s.part->margins().end());
    const auto all = comm::gather(world, margins, 0, "margins");
    CheckpointState st;
    st.iterations_done = done;
    st.time_s = time_s;
    if (world.rank() == 0) {
        margins.clear();
        for (const auto& v : all) margins.insert(margins.end(), v.begin(), v.end());
        st = checkpoint_state(m, std::move(margins), done, time_s);
    }
    write_checkpoint(checkpoint_dir(f), world, settings_of(f), s.print, st);
}

}  // namespace

bool flag_given(const TrainFlags& f, std::string_view flag) {
    return std::find(f.given.begin(), f.given.end(), flag) != f.given.end();
}

std::string stop_sentence(const std::string& where, const std::string& why, double ratio,
                          double tol) {
    const std::string rule =
        std::isnan(ratio) ? std::string("not evaluated")
                          : fmt::format("min-norm subgradient {:.3g} of its value at w = 0", ratio);
    if (why.empty()) return fmt::format("converged {}: {} <= --tol {:g}", where, rule, tol);
    return fmt::format("NOT converged: stopped {}, {}: {}{}", where, why, rule,
                       tol > 0 ? fmt::format(" > --tol {:g}", tol) : std::string(" (--tol 0)"));
}

std::uint32_t auto_blocks(std::uint64_t keys, int threads, int ranks) {
    const std::uint64_t most = threads > 1 || ranks > 1 ? 256 : 1024;
    return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(keys / 8, 1, most));
}

std::int64_t parse_delay(const std::string& s) { return train::parse_delay(s); }

void parse_straggler(const std::string& text, DelayedOptions& o) {
    std::tie(o.straggler_rank, o.straggler_factor) = train::parse_straggler(text);
}

namespace {

/// The state of the iterations loop.
struct Progress {
    std::uint64_t done = 0;
    double time_s = 0;         ///< training seconds (evaluations and checkpoints excluded)
    double eval_s = 0;         ///< evaluation seconds
    double previous = NAN;     ///< the last evaluation's objective
    std::uint64_t since = 0;   ///< iterations since the last evaluation
    double since_s = 0;        ///< and their seconds
    bool converged = false;    ///< the stopping rule held at the last evaluation
    bool out_of_time = false;  ///< --time-limit passed at the last evaluation
    double zero = 0;           ///< the min-norm subgradient's 1-norm at w = 0
    double ratio = NAN;        ///< the last evaluation's min-norm subgradient over zero
    comm::KvStats stats;       ///< this rank's traffic, summed over the runs (filters' bytes)
};

std::uint64_t next_stop(std::uint64_t done, std::uint64_t every, std::uint64_t last) {
    return every == 0 ? last : std::min(last, (done / every + 1) * every);
}

/// Collective: evaluates, reports (rank 0) and decides --tol (the same on every rank).
Evaluation evaluate_and_report(const TrainFlags& f, comm::Communicator& world, TrainSetup& s,
                               const DelayedResult& r, Progress& p) {
    Stopwatch clock;
    Evaluation e = evaluate(world, s.part ? &*s.part : nullptr, r, f.options.prox,
                            s.test ? &*s.test : nullptr, true);
    p.eval_s += clock.seconds();
    const Traffic traffic = gather_traffic(world, p.stats);  // bytes so far (collective)
    std::uint8_t stop = 0;
    p.ratio = e.subgradient / p.zero;
    const bool converged = subgradient_converged(e.subgradient, p.zero, f.tol);
    if (world.rank() == 0) {
        const double passes = double(p.since) / f.options.prox.blocks;
        const double rate = p.since_s > 0 ? passes * double(s.all_examples) / p.since_s : NAN;
        MetricsRecord record = record_of(e, p.done, p.time_s, p.eval_s, rate, p.previous);
        record.emplace_back("subgradient_ratio", p.ratio);
        record.emplace_back("converged", converged ? 1 : 0);
        record.emplace_back("server_bytes", static_cast<double>(traffic.server_bytes));
        record.emplace_back("worker_bytes", static_cast<double>(traffic.worker_bytes));
        if (s.metrics) s.metrics->append(p.done, metrics_json(record));
        if (s.terminal)
            s.terminal->on_iteration(
                progress_record(record, static_cast<std::uint64_t>(passes * double(s.all_examples)),
                                p.since_s),
                static_cast<std::uint32_t>(f.options.iterations));
        stop = converged ? 1 : f.time_limit > 0 && p.time_s >= f.time_limit ? 2 : 0;
    }
    comm::broadcast(world, stop, 0, "converged");
    p.converged = stop == 1;
    p.out_of_time = stop == 2;
    p.previous = e.objective;
    p.since = 0;
    p.since_s = 0;
    return e;
}

/// Collective, with the KKT filter: every worker's screen reopens the zero weights that rank 0's
/// evaluation found past λ (`violators`, rank 0's). Their ĝ_k is stale (a skipped key is not
/// pushed, so the servers never see its gradient grow), and without this they would wait for the
/// next refresh pass (--kkt-refresh) while the stopping rule reads a small ‖∇^S F‖₁: on
/// sotu-bigrams at B = 1,024 the run stopped 1.4e-4 from F* with a KKT violation of 0.28.
void reopen_violators(comm::Communicator& world, TrainSetup& s,
                      std::vector<std::uint64_t> violators) {
    comm::broadcast(world, violators, 0, "kkt violators");
    if (s.memory.screen) s.memory.screen->reopen(violators);
}

/// Runs the iterations in segments between evaluations and checkpoints; the last evaluation's
/// model (rank 0).
Model train_segments(TrainFlags& f, comm::Communicator& world, TrainSetup& s, Progress& p) {
    DelayedResult r;  // as the servers hold it when no iteration is left to run
    const auto self = std::find(s.layout.servers.begin(), s.layout.servers.end(), world.rank());
    for (const auto& [k, w] : s.start.server_weights)
        if (self != s.layout.servers.end() &&
            s.layout.server_of(k) == static_cast<std::size_t>(self - s.layout.servers.begin()))
            r.server_weights.emplace(k, w);
    std::optional<Evaluation> last;
    const std::uint64_t end = f.options.iterations;
    p.zero = subgradient_at_zero(world, s.part ? &*s.part : nullptr, f.options.prox.lambda);
    if (p.done > 0 && f.tol > 0 && f.eval_every > 0 && p.done % f.eval_every == 0) {
        // Resumed at an evaluation's iteration: the run killed after that checkpoint tested the
        // rule there, and ended if it held; so does this one (tested, not recorded again).
        last = evaluate(world, s.part ? &*s.part : nullptr, r, f.options.prox, nullptr, true);
        std::uint8_t held = subgradient_converged(last->subgradient, p.zero, f.tol) ? 1 : 0;
        comm::broadcast(world, held, 0, "converged");
        p.converged = held == 1;
        p.ratio = last->subgradient / p.zero;
        if (!p.converged) last.reset();
    }
    while (p.done < end && !p.converged && !p.out_of_time) {
        DelayedOptions o = f.options;
        o.first = p.done;
        o.iterations = std::min(next_stop(p.done, f.eval_every, end),
                                next_stop(p.done, f.common.checkpoint_every, end));
        Stopwatch clock;
        r = train_delayed(world, s.layout, s.part ? &*s.part : nullptr, o, s.start, &s.memory);
        p.stats.add(r.stats);
        const double seconds = clock.seconds();
        p.time_s += seconds;
        p.since_s += seconds;
        p.since += o.iterations - p.done;
        p.done = o.iterations;
        s.start.server_weights = r.server_weights;
        s.start.worker_weights = r.worker_weights;
        last.reset();
        if ((f.eval_every > 0 && p.done % f.eval_every == 0) || p.done == end) {
            last = evaluate_and_report(f, world, s, r, p);
            if (f.options.filters.has("kkt") && !p.converged && !p.out_of_time && p.done < end)
                reopen_violators(world, s, last->violators);
        }
        const std::uint64_t every = f.common.checkpoint_every;
        if (every > 0 && (p.done % every == 0 || p.done == end || p.converged || p.out_of_time)) {
            if (!last)
                last =
                    evaluate(world, s.part ? &*s.part : nullptr, r, f.options.prox, nullptr, false);
            checkpoint(f, world, s, last->model, p.done, p.time_s);
        }
    }
    if (!last)
        last = evaluate(world, s.part ? &*s.part : nullptr, r, f.options.prox, nullptr, false);
    return std::move(last->model);
}

/// Whether the run converged and why it stopped, said on stdout (docs/logreg.md, "Stopping").
std::string stop_line(const TrainFlags& f, const Progress& p) {
    const double passes = double(p.done) / f.options.prox.blocks;
    const std::string why =
        p.converged ? std::string()
        : p.out_of_time
            ? fmt::format("--time-limit {:g} s reached", f.time_limit)
            : fmt::format("iteration cap --iterations {} reached", f.options.iterations);
    return stop_sentence(fmt::format("after {} iterations ({:.4g} passes)", p.done, passes), why,
                         p.ratio, f.tol);
}

}  // namespace

void run_train(TrainFlags& f, comm::Communicator& world) {
    {  // --threads 0: this host's cores shared among its ranks, as every model's
        train::CommonTrainFlags threads;
        threads.threads = f.options.threads;
        f.options.threads = threads.resolved_threads(train::ranks_on_this_host(world));
    }
    const bool iterations_given = flag_given(f, "--iterations");
    const bool newton = use_newton(f, world.size());
    if (newton) reuse_freed_memory();
    TrainSetup s;
    prepare(f, world, s, iterations_given);
    const bool talk = !f.quiet && world.rank() == 0;
    if (talk && newton) {
        fmt::print(
            "rotor: logreg train: {} examples, {} keys; solver newton (newGLMNET, one "
            "thread{}), --tol {:g}; memory plan {}\n",
            s.all_examples, s.part->keys().size(),
            f.common.threads > 1 ? "; --threads is --solver prox's" : "", f.tol,
            train::human_bytes(s.plan));
        std::fflush(stdout);
    } else if (talk) {
        fmt::print(
            "rotor: logreg train: {} examples; {} blocks, curvature {}{}, delay {}, pushes {}, at "
            "most {} iterations, --tol {:g}; {} server{}, {} worker{}; memory plan {}{}\n",
            s.all_examples, f.options.prox.blocks, f.curvature,
            f.options.prox.max_step > 0 ? fmt::format(" (max-step {:g})", f.options.prox.max_step)
                                        : std::string(),
            f.delay, f.options.exact_pushes() ? "exact" : "float32", f.options.iterations, f.tol,
            s.layout.servers.size(), s.layout.servers.size() == 1 ? "" : "s",
            s.layout.workers.size(), s.layout.workers.size() == 1 ? "" : "s",
            train::human_bytes(s.plan), world.size() > 1 ? " on rank 0" : "");
        if (s.done > 0) fmt::print("rotor: resumed {} at iteration {}\n", f.common.resume, s.done);
        std::fflush(stdout);
        s.terminal.emplace(stdout, progress_schema(false));
    }
    Progress p;
    p.done = s.done;
    p.time_s = s.time_s;
    Model m;
    std::string stop;
    if (newton) {
        RecordSink sink;
        if (s.metrics)
            sink = [&s](std::uint64_t iter, const std::string& json) {
                s.metrics->append(iter, json);
            };
        NewtonRun run = train_newton(f, world, *s.part, s.test ? &*s.test : nullptr, sink);
        m = std::move(run.model);
        p.done = run.iterations;
        p.time_s = run.time_s;
        stop = std::move(run.stop_line);
    } else {
        m = train_segments(f, world, s, p);
        stop = stop_line(f, p);
    }
    const Traffic traffic = gather_traffic(world, p.stats);  // filters: bytes (collective)
    comm::run_agreed(world, [&] {
        if (world.rank() != 0) return;
        m.hashed = f.hash_features;
        m.iterations = p.done;
        write_model(f.common.out, m);
        train::write_run_outputs(f.common.out, {[&] {
                                                    if (!f.stats.empty())
                                                        core::write_file_atomically(
                                                            f.stats, traffic_json(traffic));
                                                },
                                                [&] {
                                                    if (s.metrics) s.metrics->commit();
                                                }});
        if (!talk) return;
        fmt::print("rotor: {}\n", stop);
        fmt::print(
            "rotor: objective {:.10g}, {} nonzero weights and {}, {:.3f} s; model "
            "written to {}\n",
            m.objective, m.keys.size(), m.intercept != 0 ? "an intercept" : "no intercept",
            p.time_s, f.common.out);
        if (!newton) fmt::print("rotor: {}\n", traffic_line(traffic));
    });
}

}  // namespace rotor::logreg
