// `rotor lda ...`: the CLI only parses flags into parameter structs and calls the app.
#include "apps/lda/cli.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "apps/lda/checkpoint.h"
#include "apps/lda/trainer.h"
#include "apps/lda/use_cli.h"
#include "comm/agreed.h"
#include "comm/collectives.h"
#include "comm/communicator.h"
#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "core/base/plural.h"
#include "core/corpus/corpus.h"
#include "core/lda/alpha_optimizer.h"
#include "core/lda/coherence.h"
#include "core/lda/heldout.h"
#include "core/lda/inference.h"
#include "core/lda/model.h"
#include "sched/runtime.h"
#include "train/checkpoint_dir.h"
#include "train/common_flags.h"
#include "train/memory_plan.h"
#include "train/reporter.h"
#include "train/resume.h"
#include "train/run_outputs.h"
#include "train/trace.h"

namespace rotor::apps {
namespace {

struct TrainFlags {
    train::CommonTrainFlags common;  ///< threads, seed, iterations, metrics, checkpoints, ...
    std::string heldout;
    std::string heldout_vocab;
    std::uint32_t optimize_alpha = 0;
    std::size_t coherence_top = 10;
    std::string doc_topics;  ///< --doc-topics: the wide doc × topic table of the training docs
    std::string corpus;
    std::string vocab;
    std::string alpha;
    lda::TrainOptions options;
    lda::DistributedOptions dist;  ///< only with more than one MPI rank
    std::string straggler;
    std::string sampler;  ///< --sampler, parsed into options.sampler
    bool sampler_given = false;
    bool mh_steps_given = false;
    std::string init = "sequential";  ///< --init, parsed into options.init.method
    std::vector<std::string> given;   ///< the model-defining flags given on the command line
};

void parse_alpha(const std::string& text, lda::LdaParams& p) {
    // One value, or a comma-separated list of K values (asymmetric prior).
    std::vector<double> values;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t comma = text.find(',', pos);
        const std::string item =
            text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        std::size_t used = 0;
        double v = 0;
        try {
            v = std::stod(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size())
            throw ConfigError("--alpha", fmt::format("'{}' is not a number", item));
        values.push_back(v);
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    if (values.size() == 1) {
        p.alpha = values[0];
        if (!(p.alpha > 0)) throw ConfigError("--alpha", "must be positive");
    } else {
        p.alpha_per_topic = values;
    }
}

/// The common flags' values that live in the trainer's options.
void apply_common(TrainFlags& f) {
    f.options.iterations = f.common.iterations;
    f.options.seed = f.common.seed;
    f.options.eval_every = f.common.eval_every;
}

/// What `lda train` sets up before training, on every rank alike.
struct TrainSetup {
    std::optional<core::LoadedCorpus> loaded;
    std::optional<sched::Runtime> runtime;
    std::unique_ptr<train::JsonLinesReporter> metrics;  // rank 0 only
    std::optional<lda::HeldoutEvaluator> heldout;       // every rank holds it
    std::optional<lda::Checkpoint> resume;              // --resume: the state and this rank's part
    lda::CorpusFingerprint print;
    std::string checkpoint_dir;
};

/// --resume: the run's settings come from the checkpoint (the grid's columns per slice and the
/// timer's too, so that every rank's blocks are the ones saved); only --iterations (the total)
/// may change, and not below what is done, and --eval-every (monitoring). A model-defining flag
/// given with another value than the checkpoint's is refused by name.
void apply_checkpoint(TrainFlags& f, const lda::Checkpoint& c) {
    const auto given = [&f](const std::string& flag) {
        return std::find(f.given.begin(), f.given.end(), flag) != f.given.end();
    };
    // A checkpoint of rotor before --init was recorded started random (then the only start)
    // unless the flags say.
    lda::TrainOptions recorded = c.options;
    if (!c.init_recorded) recorded.init = given("--init") ? f.options.init : lda::InitOptions{};
    train::refuse_resume_conflicts(lda::resume_settings(f.options, recorded), given,
                                   f.common.resume);
    const std::uint32_t target =
        f.common.iterations_set ? f.options.iterations : c.options.iterations;
    train::check_resume_target(c.iterations_done, target, f.common.resume);
    const std::uint32_t eval_every = f.options.eval_every;
    // The kernel is a run setting, not part of the model: a resumed run may change it.
    const lda::SamplerKind sampler = f.options.sampler;
    const std::uint32_t mh_steps = f.options.mh_steps;
    f.options = recorded;
    f.options.iterations = target;
    if (given("--eval-every")) f.options.eval_every = eval_every;  // monitoring only
    if (f.sampler_given) f.options.sampler = sampler;
    if (f.mh_steps_given) f.options.mh_steps = mh_steps;
    lda::apply_checkpoint_layout(c, f.dist);
}

/// The bytes of the strings the model copies from the corpus: its vocabulary and document names
/// (a std::string's 32 bytes, and its heap buffer past 15 characters).
std::uint64_t text_bytes(const core::LoadedCorpus& loaded) {
    const auto bytes = [](const std::string& t) {
        return std::uint64_t{32} + (t.size() > 15 ? t.size() + 1 : 0);
    };
    std::uint64_t n = 0;
    if (loaded.vocab)
        for (WordId w = 0; w < loaded.vocab->size(); ++w) n += bytes(loaded.vocab->word(w));
    for (const std::string& name : loaded.doc_names) n += bytes(name);
    return n;
}

/// The memory plan (every rank computes the same): refuse before allocating, and under MPI let
/// rebalancing give no rank more tokens than the limit allows. The sweeps' tables stay while
/// the coherence is computed and the model is saved: their peak is planned on top.
void plan_memory(TrainFlags& f, const core::LoadedCorpus& loaded, int ranks, int host_ranks,
                 int threads) {
    const core::Corpus& corpus = loaded.corpus;
    const std::uint64_t limit = train::memory_limit(f.common.max_memory, host_ranks);
    const std::uint64_t finish = lda::Trainer::estimate_finish_memory(
        corpus, f.options, ranks, f.coherence_top, text_bytes(loaded));
    if (ranks == 1) {
        train::check_memory(lda::Trainer::estimate_memory(corpus, f.options, threads) + finish,
                            limit,
                            "use fewer topics (--topics), a smaller corpus, or raise --max-memory");
        return;
    }
    std::uint64_t longest = 0;
    for (DocId d = 0; d < corpus.num_docs(); ++d)
        longest = std::max<std::uint64_t>(longest, corpus.doc_length(d));
    const std::uint64_t share = corpus.num_tokens() / ranks + longest;
    const auto estimate = [&](std::uint64_t tokens) {
        return lda::Trainer::estimate_memory(corpus, f.options, ranks, threads, tokens) + finish;
    };
    train::check_memory(estimate(share), limit,
                        "use more ranks, fewer topics (--topics), or raise --max-memory (per "
                        "rank under mpiexec)",
                        true);
    if (limit > 0 && corpus.num_tokens() > 0) {
        const std::uint64_t base = estimate(0);
        const double per_token = static_cast<double>(estimate(corpus.num_tokens()) - base) /
                                 static_cast<double>(corpus.num_tokens());
        if (per_token > 0)
            f.dist.max_rank_tokens = std::max<std::uint64_t>(
                share, static_cast<std::uint64_t>(static_cast<double>(limit - base) / per_token));
    }
}

/// Everything before the trainer, agreed by every rank: flags, the checkpoint, the corpora, the
/// memory plan, the runtime and the metrics file.
void prepare_train(TrainFlags& f, comm::Communicator& world, TrainSetup& s) {
    apply_common(f);
    s.checkpoint_dir = f.common.resolved_checkpoint_dir();
    // Ranks sharing this host share its cores and memory.
    const int host_ranks = train::ranks_on_this_host(world);
    comm::run_agreed(world, [&] {
        if (world.rank() == 0) f.common.check_outputs(core::OutputKind::kDirectory, "params.json");
        if (!f.alpha.empty()) parse_alpha(f.alpha, f.options.params);
        if (!f.straggler.empty()) lda::parse_straggler(f.straggler, f.dist);
        if (!f.sampler.empty()) f.options.sampler = lda::parse_sampler(f.sampler);
        if (!f.common.resume.empty()) {
            s.resume = lda::read_checkpoint(f.common.resume, world.rank(), world.size());
            apply_checkpoint(f, *s.resume);
        }
        f.options.record_schedule = !f.common.trace.empty();
        f.options.validate();
        f.dist.validate(world.size());
        // Rank 0 alone builds checkpoint directories, so it alone clears what killed runs left.
        if (f.common.checkpoint_every > 0 && world.rank() == 0)
            train::remove_stale_temporaries(s.checkpoint_dir);
        // The memory limit bounds the corpus as it is read, before its tokens are allocated.
        const core::ReadLimits limits = train::corpus_limits(f.common.max_memory, host_ranks);
        s.loaded.emplace(core::load_corpus(f.corpus, f.vocab, limits));
        train::check_work_per_rank(s.loaded->corpus.num_docs(), world.size(), "documents");
        if (f.common.checkpoint_every > 0 || s.resume) s.print = lda::fingerprint(s.loaded->corpus);
        if (s.resume) lda::check_same_corpus(s.resume->corpus, s.print, f.common.resume, f.corpus);
        if (!f.heldout.empty()) {
            // Document completion on the training vocabulary (docs/evaluation.md).
            core::LoadedCorpus h = core::load_corpus(f.heldout, f.heldout_vocab, limits);
            lda::MappedCorpus mapped =
                lda::map_to_model(h.corpus, h.vocab ? &*h.vocab : nullptr,
                                  s.loaded->vocab ? &*s.loaded->vocab : nullptr,
                                  s.loaded->corpus.num_words(), f.heldout);
            s.heldout.emplace(std::move(mapped.corpus), lda::FoldInOptions{});
        }
        const int threads = f.common.resolved_threads(host_ranks);
        const std::string warning =
            train::CommonTrainFlags::oversubscription_warning(threads, host_ranks);
        if (!warning.empty() && world.rank() == 0) fmt::print(stderr, "{}\n", warning);
        plan_memory(f, *s.loaded, world.size(), host_ranks, threads);
        s.runtime.emplace(threads, f.common.pin_mode());
        if (world.rank() == 0 && !f.common.metrics.empty())  // resumed: kept up to the checkpoint
            s.metrics = std::make_unique<train::JsonLinesReporter>(
                f.common.metrics, lda::record_schema(),
                s.resume ? std::optional<std::uint64_t>(s.resume->iterations_done) : std::nullopt);
    });
}

/// The trainer, restored from the checkpoint with --resume (on any number of ranks: each takes
/// its documents from whichever parts hold them). Collective; failures are agreed.
std::unique_ptr<lda::Trainer> make_trainer(TrainFlags& f, TrainSetup& s,
                                           comm::Communicator& world) {
    std::unique_ptr<lda::Trainer> trainer;
    comm::run_agreed(world, [&] {
        trainer =
            std::make_unique<lda::Trainer>(s.loaded->corpus, f.options, f.dist, *s.runtime, world);
        if (s.resume) trainer->set_alpha(s.resume->alpha);  // the same values on every rank
        if (s.resume && s.resume->ranks != world.size())
            lda::read_checkpoint_parts(*s.resume, s.loaded->corpus, trainer->local_docs());
    });
    if (!s.resume) return trainer;
    lda::Checkpoint& c = *s.resume;
    trainer->restore(s.loaded->corpus, c.docs, c.topics, c.iterations_done, c.timer_budget,
                     c.part_path);  // agreed on failure
    c.docs = {};
    c.topics = {};
    if (!f.common.quiet) {
        // The restored state's log-likelihood: the one the run recorded at that iteration.
        const lda::LogLikelihood ll = trainer->evaluate();
        if (world.rank() == 0)
            fmt::print("rotor: resumed {} at iteration {} (loglik {:.17g}){}\n", f.common.resume,
                       trainer->iterations_done(), ll.loglik,
                       c.ranks != world.size()
                           ? fmt::format(", written by {} rank{}, now on {}", c.ranks,
                                         c.ranks == 1 ? "" : "s", world.size())
                           : "");
    }
    return trainer;
}

/// Whether iteration `iter` is followed by a checkpoint: every --checkpoint-every, and the last
/// (so that a finished run can be continued with --resume and a larger --iterations).
bool checkpoint_after(const TrainFlags& f, std::uint32_t iter) {
    return train::checkpoint_due(iter, f.common.checkpoint_every, f.options.iterations);
}

/// Held-out perplexity and coherence at every evaluation; α optimisation and checkpoints after
/// the iterations that ask for them. The hooks run on every rank in the same order
/// (train::run_iterations), so their collectives match.
train::Hooks train_hooks(TrainFlags& f, TrainSetup& s, lda::Trainer& trainer) {
    train::Hooks hooks;
    hooks.on_evaluate = [&f, &s, &trainer](train::Record& m) {
        if (s.heldout) {
            const lda::HeldoutResult r = trainer.evaluate_heldout(*s.heldout);
            m.set("heldout_loglik_per_token", r.loglik_per_token());
            m.set("heldout_perplexity", r.perplexity());
        }
        if (f.coherence_top > 0) {
            // The top words come to rank 0, which has the corpus; the other ranks go on.
            const auto top = trainer.top_words(f.coherence_top);
            if (trainer.rank() == 0)
                m.set("coherence_umass", lda::umass_coherence(s.loaded->corpus, top).mean);
        }
    };
    hooks.after_iteration = [&f, &s, &trainer](const train::Record& m) {
        // Minka's fixed-point update of an asymmetric α every N sweeps, as Mallet does, from
        // every rank's histograms: the same α on every rank.
        if (f.optimize_alpha > 0 && m.iter % f.optimize_alpha == 0) trainer.optimize_alpha();
        // Every rank writes its part; a failure on any rank is agreed (AgreedError everywhere).
        if (checkpoint_after(f, m.iter))
            lda::write_checkpoint(s.checkpoint_dir, trainer, f.options, f.dist, s.print);
    };
    // Sweeps run back to back, without a barrier, except before the iterations whose hook reads
    // or changes the state.
    hooks.needs_state = [&f](std::uint32_t iter) {
        return (f.optimize_alpha > 0 && iter % f.optimize_alpha == 0) || checkpoint_after(f, iter);
    };
    return hooks;
}

/// The model (gathered on rank 0), the metrics and the timeline, written by rank 0; agreed.
/// `summary` is the progress reporter's closing line ("" when it reported nothing).
void finish_train(TrainFlags& f, TrainSetup& s, lda::Trainer& trainer, comm::Communicator& world,
                  const std::string& summary) {
    std::vector<std::string> vocab;
    if (s.loaded->vocab && world.rank() == 0) {
        for (WordId w = 0; w < s.loaded->vocab->size(); ++w)
            vocab.emplace_back(s.loaded->vocab->word(w));
    }
    // The corpus as an absolute path: `lda topics` run from another directory still finds it.
    lda::LdaModel model = trainer.gather_model(std::move(vocab), train::absolute_path(f.corpus));
    // Documents in corpus order: a folder's file names name the model's documents too.
    if (world.rank() == 0) model.doc_names = s.loaded->doc_names;
    std::vector<std::vector<train::BlockRun>> timeline;
    if (!f.common.trace.empty()) timeline = trainer.gather_schedule();
    comm::run_agreed(world, [&] {
        if (world.rank() != 0) return;
        lda::save_model(model, f.common.out);
        // What records the run never costs the model: all tried, failures named after it.
        train::write_run_outputs(
            f.common.out, {[&] {
                               if (!f.doc_topics.empty())
                                   lda::write_doc_topics(model, f.doc_topics);
                           },
                           [&] {
                               if (s.metrics) s.metrics->commit();
                           },
                           [&] {
                               if (!f.common.trace.empty())
                                   train::write_run_trace(f.common.trace, timeline,
                                                          s.runtime->threads(), "rotor lda train");
                           }});
    });
    if (!f.common.quiet && world.rank() == 0)
        fmt::print("rotor: model written to {}{}\n", f.common.out,
                   summary.empty() ? "" : " (" + summary + ")");
}

/// `rotor lda train`, in one process (a communicator of one rank) or as one rank of
/// `mpiexec -n P` (docs/distributed.md). Failures before and after training are agreed by all
/// ranks (comm::AgreedError); one during training ends the job in main.
void run_train(TrainFlags& f, comm::Communicator& world) {
    TrainSetup s;  // not movable: it holds the runtime
    prepare_train(f, world, s);
    std::unique_ptr<lda::Trainer> trainer = make_trainer(f, s, world);
    train::TerminalReporter terminal(stdout, lda::record_schema());
    train::TeeReporter tee;
    if (!f.common.quiet && world.rank() == 0) tee.add(terminal);
    if (s.metrics) tee.add(*s.metrics);
    const train::Hooks hooks = train_hooks(f, s, *trainer);
    if (trainer->iterations_done() < f.options.iterations)
        trainer->train(tee, hooks, f.options.iterations);
    finish_train(f, s, *trainer, world, terminal.summary());
}

void add_train(CLI::App& lda, comm::Communicator* world) {
    auto f = std::make_shared<TrainFlags>();
    auto* c = lda.add_subcommand("train", "Train an LDA model by collapsed Gibbs sampling");
    c->add_option("--corpus", f->corpus,
                  "Training corpus: rotor binary corpus, or UCI docword.txt[.gz]")
        ->required();
    c->add_option("--vocab", f->vocab, "Vocabulary file (default: beside the corpus, if any)");
    c->add_option("--topics,-k", f->options.params.num_topics, "Number of topics K")
        ->capture_default_str();
    c->add_option("--alpha", f->alpha,
                  "Doc-topic prior: one value (default 50/K) or K comma-separated values");
    c->add_option("--beta", f->options.params.beta, "Topic-word prior")->capture_default_str();
    c->add_option(
        "--blocks", f->options.blocks,
        "Grid side L (default: ceil(sqrt(2)*threads), at least 4 with 2 or more threads; 16 with "
        "--deterministic)");
    c->add_flag("--deterministic", f->options.deterministic,
                "Diagonal sweeps: the same seed gives the same model at any thread count");
    c->add_option("--sampler", f->sampler,
                  "Gibbs kernel: sparse (SparseLDA), mh (Metropolis-Hastings, O(1) per "
                  "proposal), auto (mh while the model is dense, then sparse) [default: sparse]");
    c->add_option("--mh-steps", f->options.mh_steps,
                  "mh: cycles of a doc and a word proposal per token")
        ->capture_default_str();
    c->add_option("--init", f->init,
                  "First topics: sequential (the first sweep draws each token from the counts of "
                  "those drawn before it), random (uniform per token) or sparse (each document "
                  "draws --init-doc-topics topics, its tokens choose among them)")
        ->capture_default_str();
    c->add_option("--init-doc-topics", f->options.init.doc_topics,
                  "Topics per document of --init sparse")
        ->capture_default_str();
    c->add_option("--init-word-prior", f->options.init.word_prior,
                  "--init sequential: pseudo-counts of a word's row in the first sweep, over K "
                  "topics (that sweep draws with beta' = max(beta, prior / K)); 0: min(30, the "
                  "corpus' mean document length)")
        ->capture_default_str();
    f->common.iterations = f->options.iterations;
    f->common.seed = f->options.seed;
    f->common.eval_every = f->options.eval_every;
    train::add_common_train_flags(*c, f->common, "Gibbs sweeps");
    c->add_option("--heldout", f->heldout,
                  "Held-out corpus: log its document-completion perplexity at every evaluation");
    c->add_option("--heldout-vocab", f->heldout_vocab,
                  "Vocabulary of the held-out corpus (default: beside it)");
    c->add_option("--optimize-alpha", f->optimize_alpha,
                  "Re-estimate an asymmetric alpha every N iterations (Minka; 0: never)")
        ->capture_default_str();
    c->add_option("--top", f->coherence_top,
                  "Words per topic for the UMass coherence metric, as lda topics --top (0: do "
                  "not compute)")
        ->capture_default_str();
    // The old name, kept for scripts; not shown in --help.
    c->add_option("--coherence-top", f->coherence_top)->group("");
    c->add_option("--doc-topics", f->doc_topics,
                  "Also write the training documents' topic proportions here: a TSV with a "
                  "header, one row per document (its name, then K proportions)");
    train::add_switch(*c, "timer", f->dist.timer,
                      "MPI only: stop each round's compute after a tuned time budget");
    train::add_switch(*c, "timer-always", f->dist.timer_always,
                      "MPI only: the budget cuts every round (HarpLDA+'s rule); off, only while "
                      "the ranks' speeds differ by more than --rebalance-tolerance");
    c->add_option("--timer-init", f->dist.timer_params.initial_s,
                  "MPI only: first round's time budget, seconds")
        ->capture_default_str();
    c->add_option("--timer-low", f->dist.timer_params.low,
                  "MPI only: the budget doubles when a round processed less than this ratio")
        ->capture_default_str();
    c->add_option("--timer-high", f->dist.timer_params.high,
                  "MPI only: the budget halves when a round processed more than this ratio")
        ->capture_default_str();
    train::add_switch(*c, "rebalance", f->dist.rebalance,
                      "MPI only: move documents between ranks to follow their measured speeds");
    c->add_option("--rebalance-tolerance", f->dist.rebalance_tolerance,
                  "MPI only: move documents once a rank holds more than 1 + this of its share")
        ->capture_default_str();
    c->add_option("--simulate-straggler", f->straggler,
                  "MPI only: RANK:FACTOR makes one rank's sampling FACTOR times slower");
    c->callback([f, world, c] {
        f->options.init.method = lda::parse_init_method(f->init);
        for (const train::ResumeSetting& s : lda::resume_settings(f->options, f->options))
            if (c->count(s.flag) > 0) f->given.push_back(s.flag);
        if (c->count("--eval-every") > 0) f->given.emplace_back("--eval-every");
        f->sampler_given = c->count("--sampler") > 0;
        f->mh_steps_given = c->count("--mh-steps") > 0;
        if (world != nullptr) {
            run_train(*f, *world);
        } else {
            comm::InProcessGroup one(1);  // one process: a world of one rank
            run_train(*f, one.at(0));
        }
    });
}

void add_export(CLI::App& lda) {
    struct Flags {
        std::string model, out, format = "tsv";
        bool normalize = false;
        bool overwrite = false;
    };
    auto f = std::make_shared<Flags>();
    auto* c = lda.add_subcommand("export", "Export a model's counts as text");
    c->add_option("--model", f->model, "Model directory")->required();
    c->add_option("--out", f->out, "Output directory (new, or --overwrite)")->required();
    train::add_overwrite_flag(*c, f->overwrite);
    c->add_option("--format", f->format, "Output format")
        ->check(CLI::IsMember({"tsv"}))
        ->capture_default_str();
    c->add_flag("--normalize", f->normalize,
                "Probabilities instead of counts: phi for word_topic.tsv, every topic's theta "
                "for doc_topic.tsv");
    c->callback([f] {
        core::check_output(f->out, core::OutputKind::kDirectory, "word_topic.tsv", f->overwrite,
                           "--out");
        lda::export_tsv(lda::load_model(f->model), f->out, f->normalize);
    });
}

void add_topics(CLI::App& lda) {
    struct Flags {
        std::string model, format = "text", corpus, vocab;
        std::size_t top = 10;
    };
    auto f = std::make_shared<Flags>();
    auto* c = lda.add_subcommand("topics", "Print the top words of every topic");
    c->add_option("--model", f->model, "Model directory")->required();
    c->add_option("--top", f->top, "Words per topic")->capture_default_str();
    c->add_option("--corpus", f->corpus,
                  "Training corpus, for UMass coherence per topic (default: the model's own, if "
                  "it is still there)");
    c->add_option("--vocab", f->vocab, "Vocabulary of --corpus (default: beside it)");
    c->add_option("--format", f->format,
                  "text or tsv (topic, share, coherence, rank, word, probability)")
        ->check(CLI::IsMember({"text", "tsv"}))
        ->capture_default_str();
    c->callback([f] {
        const lda::LdaModel m = lda::load_model(f->model);
        auto name = [&](WordId w) {
            return w < m.vocab.size() ? m.vocab[w] : fmt::format("#{}", w);
        };
        const auto topics = lda::top_words(m, f->top);
        // UMass coherence needs the training corpus: the one named, or the model's own; when
        // that one has moved, the column is left out and the user told so.
        std::optional<lda::Coherence> coherence;
        const std::string corpus_path = !f->corpus.empty()                       ? f->corpus
                                        : std::filesystem::exists(m.info.corpus) ? m.info.corpus
                                                                                 : std::string();
        if (corpus_path.empty())
            fmt::print(stderr,
                       "rotor: lda topics: no coherence: the training corpus {} is not found "
                       "(give --corpus)\n",
                       m.info.corpus.empty() ? std::string("(not recorded)") : m.info.corpus);
        if (!corpus_path.empty()) {
            const core::LoadedCorpus train =
                core::load_corpus(corpus_path, f->vocab, rotor::train::corpus_limits(""));
            if (train.corpus.num_words() != m.info.num_words ||
                train.corpus.num_tokens() != m.info.num_tokens)
                throw ConfigError("--corpus", fmt::format("{} is not the corpus the model was "
                                                          "trained on",
                                                          corpus_path));
            std::vector<std::vector<WordId>> lists;
            for (const auto& t : topics) {
                lists.emplace_back();
                for (const auto& [w, p] : t.words) lists.back().push_back(w);
            }
            coherence = lda::umass_coherence(train.corpus, lists);
        }
        auto coh = [&](TopicId k) {
            return coherence ? fmt::format("{:.1f}", coherence->per_topic[k]) : std::string("-");
        };
        if (f->format == "tsv") {
            fmt::print("topic\tshare\tcoherence\trank\tword\tprobability\n");
            for (const auto& t : topics)
                for (std::size_t i = 0; i < t.words.size(); ++i)
                    fmt::print("{}\t{:.6f}\t{}\t{}\t{}\t{:.6g}\n", t.topic, t.share, coh(t.topic),
                               i + 1, name(t.words[i].first), t.words[i].second);
            return;
        }
        // The header names the columns of the rows below it (same widths).
        fmt::print("{:<9} {:>6} {}  top {}\n", "topic", "share", coherence ? "  umass " : "",
                   plural(f->top, "word"));
        for (const auto& t : topics) {
            std::string line = fmt::format("topic {:>3} {:5.2f}% ", t.topic, 100 * t.share);
            if (coherence) line += fmt::format("{:>7} ", coh(t.topic));
            for (const auto& [w, p] : t.words) line += ' ' + name(w);
            fmt::print("{}\n", line);
        }
        if (coherence)
            fmt::print("mean UMass coherence of the top {} words: {:.2f}\n", f->top,
                       coherence->mean);
    });
}

}  // namespace

void add_lda_commands(CLI::App& app, comm::Communicator* world) {
    auto* lda =
        app.add_subcommand("lda", "Latent Dirichlet allocation by collapsed Gibbs sampling");
    lda->require_subcommand(1);
    add_train(*lda, world);
    add_export(*lda);
    add_topics(*lda);
    add_lda_use_commands(*lda);
}

}  // namespace rotor::apps
