// `rotor mf train`: the CLI parses flags into mf::TrainOptions and drives an mf::Trainer on
// train::run_iterations, in one process or as one rank of `mpiexec -n P`.
#include "apps/mf/cli.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <fmt/format.h>

#include "apps/mf/checkpoint.h"
#include "apps/mf/trainer.h"
#include "apps/mf/use_cli.h"
#include "comm/agreed.h"
#include "comm/communicator.h"
#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "core/mf/model_file.h"
#include "core/mf/ratings_load.h"
#include "sched/runtime.h"
#include "train/checkpoint_dir.h"
#include "train/common_flags.h"
#include "train/loop.h"
#include "train/memory_plan.h"
#include "train/reporter.h"
#include "train/resume.h"
#include "train/run_outputs.h"
#include "train/trace.h"

namespace rotor::apps {
namespace {

/// Every allocation of 128 KiB or more gets its own mapping, returned to the system when freed.
/// glibc raises that threshold to the size of each large block freed, so the blocks allocated
/// after the reader freed its triples came from the heap, where freed pages stay resident: a
/// phase's peak was stacked on memory the last phase had freed (10 MiB on 3.9M ratings).
void map_large_allocations() {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

struct TrainFlags {
    train::CommonTrainFlags common;
    std::string train;
    std::string test;
    std::string solver = "sgd";
    std::string lambda_form = "weighted";
    bool no_bias = false;
    bool implicit = false;
    mf::TrainOptions options;
    /// The model-defining flags given on the command line (with --resume they must agree with
    /// the checkpoint).
    std::vector<std::string> given;
};

/// What `mf train` sets up before training, on every rank alike.
struct TrainSetup {
    std::optional<mf::RatingsFile> train;
    std::optional<mf::TestRatings> test_ratings;
    /// sgd: the training matrix's CSR offsets and items (the model's seen items), kept when the
    /// rest of the ratings is released after the trainer is built (it keeps its own copy).
    std::optional<std::pair<std::vector<std::uint64_t>, std::vector<std::uint32_t>>> seen;
    std::optional<mf::Checkpoint> resume;
    mf::RatingsFingerprint print;
    std::optional<sched::Runtime> runtime;
    std::unique_ptr<train::JsonLinesReporter> metrics;  // rank 0 only
    std::string checkpoint_dir;
    std::uint64_t plan = 0;
};

/// --implicit's defaults where the flag is not given (docs/mf.md, "Implicit feedback").
constexpr double kImplicitLambda = 10;
constexpr std::uint32_t kImplicitIterations = 15;

bool given(const TrainFlags& f, std::string_view flag) {
    return std::find(f.given.begin(), f.given.end(), flag) != f.given.end();
}

/// The flags into the options (before --resume replaces them).
void apply_flags(TrainFlags& f) {
    mf::TrainOptions& o = f.options;
    o.implicit = f.implicit;
    // --implicit picks als (the only solver of its objective) unless --solver says otherwise,
    // which validate() then refuses by name.
    o.solver = mf::parse_solver(f.implicit && !given(f, "--solver") ? "als" : f.solver);
    if (f.implicit) {
        for (const char* flag : {"--lambda-form", "--lambda-bias"})
            if (given(f, flag))
                throw ConfigError(flag, "--implicit has no biases and a plain lambda");
        f.lambda_form = "plain";
        f.no_bias = true;
        if (!given(f, "--lambda")) o.objective.lambda = kImplicitLambda;
        if (!f.common.iterations_set) f.common.iterations = kImplicitIterations;
    } else {
        for (const char* flag : {"--alpha", "--cg-steps", "--ranking"})
            if (given(f, flag)) throw ConfigError(flag, "only with --implicit");
    }
    if (f.lambda_form != "plain" && f.lambda_form != "weighted")
        throw ConfigError("--lambda-form", "must be plain or weighted");
    o.objective.form =
        f.lambda_form == "plain" ? mf::LambdaForm::kPlain : mf::LambdaForm::kWeighted;
    o.objective.bias = !f.no_bias;
    o.iterations = f.common.iterations;
    o.seed = f.common.seed;
    o.eval_every = f.common.eval_every;
    o.record_schedule = !f.common.trace.empty();
}

/// --resume: the run continues with the checkpoint's options. A model-defining flag given with a
/// different value is refused by name (silently keeping the checkpoint's would hide the user's
/// intent); --iterations (the total to reach) and --eval-every may change.
void apply_checkpoint(TrainFlags& f, const mf::Checkpoint& c) {
    train::refuse_resume_conflicts(
        mf::resume_settings(f.options, c.options),
        [&f](const std::string& flag) {
            return std::find(f.given.begin(), f.given.end(), flag) != f.given.end();
        },
        f.common.resume);
    const std::uint32_t target =
        f.common.iterations_set ? f.options.iterations : c.options.iterations;
    train::check_resume_target(c.state.iterations_done, target, f.common.resume);
    f.options.iterations = target;
    f.options = mf::resumed_options(f.options, c);
}

void read_inputs(TrainFlags& f, TrainSetup& s, int host_ranks) {
    // The memory limit bounds the ratings as they are read (text), before the plan.
    mf::ReadRatingsOptions read;
    read.limits = train::corpus_limits(f.common.max_memory, host_ranks);
    if (f.options.implicit) read.nonnegative = "--implicit takes confidences: values >= 0";
    s.train.emplace(mf::load_ratings(f.train, read));
    if (s.train->ratings.nnz() == 0) throw InputError(f.train, "no ratings");
    if (f.common.checkpoint_every > 0 || s.resume) s.print = mf::fingerprint(*s.train);
    if (s.resume) mf::check_same_ratings(s.resume->ratings, s.print, f.common.resume, f.train);
    if (!f.test.empty()) {
        mf::ReadRatingsOptions ro;
        ro.users = &s.train->users;
        ro.items = &s.train->items;
        s.test_ratings.emplace(mf::TestRatings::from(mf::load_ratings(f.test, ro).ratings));
    }
}

/// Everything before the trainer, agreed by every rank: flags, the checkpoint, the ratings, the
/// memory plan, the runtime and the metrics file.
void prepare_train(TrainFlags& f, comm::Communicator& world, TrainSetup& s) {
    s.checkpoint_dir = f.common.resolved_checkpoint_dir();
    const int host_ranks = train::ranks_on_this_host(world);
    comm::run_agreed(world, [&] {
        if (world.rank() == 0) f.common.check_outputs(core::OutputKind::kDirectory, "params.json");
        apply_flags(f);
        if (!f.common.resume.empty()) {
            s.resume = mf::read_checkpoint(f.common.resume);
            apply_checkpoint(f, *s.resume);
        }
        f.options.validate(world.size());
        if (f.common.checkpoint_every > 0 && world.rank() == 0)
            train::remove_stale_temporaries(s.checkpoint_dir);
        read_inputs(f, s, host_ranks);
        train::check_work_per_rank(s.train->ratings.num_users(), world.size(), "users");
        train::check_work_per_rank(s.train->ratings.num_items(), world.size(), "items");
        const int threads = f.common.resolved_threads(host_ranks);
        const std::string warning =
            train::CommonTrainFlags::oversubscription_warning(threads, host_ranks);
        if (!warning.empty() && world.rank() == 0) fmt::print(stderr, "{}\n", warning);
        const mf::RatingsFile& t = *s.train;
        // The id maps, held from reading to the end (the model written by rank 0 takes them and
        // each user's items over, not copies), and the test ratings (12 bytes each).
        s.plan = mf::estimate_memory(t.ratings, f.options, world.size(), threads) +
                 t.users.memory_bytes() + t.items.memory_bytes() +
                 (s.test_ratings ? 12 * s.test_ratings->size() : 0);
        if (f.common.checkpoint_every > 0 || s.resume)
            s.plan += mf::checkpoint_memory(t.ratings, f.options);
        train::check_memory(s.plan, train::memory_limit(f.common.max_memory, host_ranks),
                            "use a smaller --rank, more ranks, or raise --max-memory",
                            world.size() > 1);
        s.runtime.emplace(threads, f.common.pin_mode());
        if (world.rank() == 0 && !f.common.metrics.empty())  // resumed: kept up to the checkpoint
            s.metrics = std::make_unique<train::JsonLinesReporter>(
                f.common.metrics, mf::record_schema(s.test_ratings.has_value(), f.options.implicit),
                s.resume ? std::optional<std::uint64_t>(s.resume->state.iterations_done)
                         : std::nullopt);
    });
}

std::unique_ptr<mf::Trainer> make_trainer(TrainFlags& f, TrainSetup& s, comm::Communicator& world) {
    std::unique_ptr<mf::Trainer> trainer;
    comm::run_agreed(world, [&] {
        // The CLI reads the matrix's ratings no more once a trainer holds them (but each user's
        // items for the model, when the trainer does not give them back).
        const mf::TrainerInputs in{s.train->ratings,
                                   s.test_ratings ? &*s.test_ratings : nullptr,
                                   f.options,
                                   *s.runtime,
                                   world,
                                   &s.train->ratings};
        trainer = mf::make_trainer(in);
    });
    if (s.resume) {
        comm::run_agreed(world, [&] { trainer->restore(s.resume->state); });
        s.resume->state = {};
        if (!f.common.quiet && world.rank() == 0)
            fmt::print("rotor: resumed {} at iteration {}\n", f.common.resume,
                       trainer->iterations_done());
    }
    // The sgd trainer holds its ratings in its blocks and reads the matrix no more: only
    // what the model keeps (each user's items) stays, and not even that when the trainer gives
    // them back from its blocks at the end (one rank).
    if (f.options.solver == mf::Solver::kSgd) {
        auto items = std::move(s.train->ratings).take_user_items();
        if (!trainer->gives_seen_items()) s.seen = std::move(items);
    }
    return trainer;
}

void print_start(const TrainFlags& f, const TrainSetup& s, comm::Communicator& world) {
    if (f.common.quiet || world.rank() != 0) return;
    const mf::Ratings& a = s.train->ratings;
    fmt::print(
        "rotor: mf train: {} users x {} items, {} ratings; solver {}, rank {}, {} thread{}{}"
        "; memory plan {}{}\n",
        a.num_users(), a.num_items(), a.nnz(), mf::solver_name(f.options.solver), f.options.rank,
        s.runtime->threads(), s.runtime->threads() == 1 ? "" : "s",
        world.size() > 1 ? fmt::format(" x {} ranks", world.size()) : "",
        train::human_bytes(s.plan), world.size() > 1 ? " per rank" : "");
    std::fflush(stdout);
}

/// The model (gathered on rank 0, with the id maps and the items each user rated), the metrics
/// and the timeline, written by rank 0; agreed.
/// `summary` is the progress reporter's closing line ("" when it reported nothing).
void finish_train(TrainFlags& f, TrainSetup& s, mf::Trainer& trainer, comm::Communicator& world,
                  const std::string& summary) {
    // Before the model is gathered: the trainer's ratings go before its factors are copied.
    if (trainer.gives_seen_items() && world.rank() == 0) s.seen = trainer.release_seen_items();
    mf::Model model = trainer.gather_model();
    std::vector<std::vector<train::BlockRun>> timeline;
    if (!f.common.trace.empty()) timeline = trainer.gather_schedule();
    comm::run_agreed(world, [&] {
        if (world.rank() != 0) return;
        // The run reads the ratings no more: the model takes the id maps and each user's items
        // instead of copies (no second copy at the end of the run).
        mf::RatingsFile& t = *s.train;
        model.users = std::move(t.users);
        model.items = std::move(t.items);
        if (!s.seen) s.seen = std::move(t.ratings).take_user_items();
        model.seen_offsets = std::move(s.seen->first);
        model.seen_items = std::move(s.seen->second);
        model.train_path = train::absolute_path(f.train);
        mf::write_model(f.common.out, model);
        // What records the run never costs the model: all tried, failures named after it.
        train::write_run_outputs(f.common.out, {[&] {
                                                    if (s.metrics) s.metrics->commit();
                                                },
                                                [&] {
                                                    if (!f.common.trace.empty())
                                                        train::write_run_trace(
                                                            f.common.trace, timeline,
                                                            s.runtime->threads(), "rotor mf train");
                                                }});
    });
    if (!f.common.quiet && world.rank() == 0)
        fmt::print("rotor: model written to {}{}\n", f.common.out,
                   summary.empty() ? "" : " (" + summary + ")");
}

void run_train(TrainFlags& f, comm::Communicator& world) {
    map_large_allocations();
    TrainSetup s;  // not movable: it holds the runtime
    prepare_train(f, world, s);
    print_start(f, s, world);
    std::unique_ptr<mf::Trainer> trainer = make_trainer(f, s, world);
    train::TerminalReporter terminal(
        stdout, mf::record_schema(s.test_ratings.has_value(), f.options.implicit));
    train::TeeReporter tee;
    if (!f.common.quiet && world.rank() == 0) tee.add(terminal);
    if (s.metrics) tee.add(*s.metrics);
    train::Hooks hooks;
    const std::uint32_t every = f.common.checkpoint_every;
    hooks.after_iteration = [&](const train::Record& r) {
        // The last iteration too, so that a finished run can be continued with --iterations.
        if (train::checkpoint_due(r.iter, every, f.options.iterations))
            mf::write_checkpoint(s.checkpoint_dir, *trainer, f.options, s.print, world);
    };
    hooks.needs_state = [every, &f](std::uint32_t iter) {
        return train::checkpoint_due(iter, every, f.options.iterations);
    };
    train::LoopOptions loop;
    loop.last = f.options.iterations;
    loop.eval_every = f.options.eval_every;
    loop.report = world.rank() == 0;
    train::run_iterations(*trainer, loop, tee, hooks);
    finish_train(f, s, *trainer, world, terminal.summary());
}

void add_train(CLI::App& mf, comm::Communicator* world) {
    auto f = std::make_shared<TrainFlags>();
    mf::TrainOptions& o = f->options;
    auto* c = mf.add_subcommand("train", "Train a matrix factorization model (CCD++ or block SGD)");
    c->add_option("--train", f->train,
                  "Training ratings: user item rating text/CSV[.gz], or "
                  "the binary form of `rotor ratings build`")
        ->required();
    c->add_option("--test", f->test,
                  "Held-out ratings: log their RMSE and MAE at every evaluation");
    c->add_option("--solver", f->solver,
                  "ccd (STRADS coordinate descent), sgd (block SGD), or als (implicit feedback: "
                  "implied by --implicit)")
        ->check(CLI::IsMember({"ccd", "sgd", "als"}))
        ->capture_default_str();
    c->add_option("--rank,-k", o.rank, "Rank K of the factors")->capture_default_str();
    c->add_option("--lambda", o.objective.lambda, "Regularisation of W and H")
        ->capture_default_str();
    c->add_option("--lambda-bias", o.objective.lambda_bias, "Regularisation of the biases")
        ->capture_default_str();
    c->add_option("--lambda-form", f->lambda_form,
                  "weighted (lambda times each row's and column's rating count, as LIBMF and "
                  "ALS-WR) or plain (STRADS, CCD++)")
        ->capture_default_str();
    c->add_flag("--no-bias", f->no_bias,
                "No global mean and no user and item biases (the STRADS objective)");
    c->add_option("--inner", o.inner, "ccd: inner sweeps per rank-one update")
        ->capture_default_str();
    c->add_option("--eta", o.eta, "sgd: initial learning rate (per-row AdaGrad)")
        ->capture_default_str();
    c->add_flag("--deterministic", o.deterministic,
                "sgd: diagonal rounds on a fixed grid, the same model at any thread count (ccd "
                "always is)");
    c->add_option("--blocks", o.blocks,
                  "sgd: grid side L per slice (default max(ceil(sqrt(2)*threads), 8); 16 with "
                  "--deterministic)");
    c->add_flag("--implicit", f->implicit,
                "Implicit feedback: values are confidences (>= 0; c = 1 + alpha r), every "
                "(user, item) pair counts (Hu-Koren-Volinsky), solved by ALS with CG (als); "
                "lambda 10 and 15 iterations unless given");
    c->add_option("--alpha", o.alpha, "implicit: confidence c = 1 + alpha r")
        ->capture_default_str();
    c->add_option("--cg-steps", o.cg_steps, "implicit: CG steps per row and half-step")
        ->capture_default_str();
    c->add_option("--ranking", o.ranking_k,
                  "implicit with --test: k of precision@k, MAP@k and NDCG@k")
        ->capture_default_str();
    train::add_switch(*c, "timer", o.timer,
                      "sgd under MPI: stop each round after a tuned time budget");
    train::add_switch(*c, "timer-always", o.timer_always,
                      "sgd under MPI: the budget cuts every round (HarpLDA+'s rule); off, only "
                      "while the ranks' speeds differ by more than 25%");
    f->common.iterations = o.iterations;
    f->common.seed = o.seed;
    f->common.eval_every = o.eval_every;
    train::add_common_train_flags(*c, f->common, "epochs");
    c->callback([f, world, c] {
        for (const train::ResumeSetting& s : mf::resume_settings(f->options, f->options))
            if (c->count(s.flag) > 0 ||
                (std::string_view(s.flag) == "--timer" && c->count("--no-timer") > 0) ||
                (std::string_view(s.flag) == "--timer-always" && c->count("--no-timer-always") > 0))
                f->given.emplace_back(s.flag);
        if (world != nullptr) {
            run_train(*f, *world);
        } else {
            comm::InProcessGroup one(1);  // one process: a world of one rank
            run_train(*f, one.at(0));
        }
    });
}

}  // namespace

void add_mf_commands(CLI::App& app, comm::Communicator* world) {
    auto* mf = app.add_subcommand("mf", "Matrix factorization: train, predict, recommend, eval");
    mf->require_subcommand(1);
    add_train(*mf, world);
    add_mf_use_commands(*mf);
}

}  // namespace rotor::apps
