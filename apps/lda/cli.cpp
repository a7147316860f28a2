// `rotor lda ...`: the CLI only parses flags into parameter structs and calls the app.
#include "apps/lda/cli.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "apps/lda/checkpoint.h"
#include "apps/lda/distributed_trainer.h"
#include "apps/lda/trainer.h"
#include "apps/lda/use_cli.h"
#include "comm/agreed.h"
#include "comm/collectives.h"
#include "comm/communicator.h"
#include "core/base/error.h"
#include "core/corpus/corpus.h"
#include "core/lda/alpha_optimizer.h"
#include "core/lda/coherence.h"
#include "core/lda/heldout.h"
#include "core/lda/inference.h"
#include "core/lda/model.h"
#include "sched/runtime.h"
#include "train/common_flags.h"
#include "train/memory_plan.h"
#include "train/reporter.h"
#include "train/trace.h"

namespace rotor::apps {
namespace {

struct TrainFlags {
    train::CommonTrainFlags common;  ///< threads, seed, iterations, metrics, checkpoints, ...
    std::string heldout;
    std::string heldout_vocab;
    std::uint32_t optimize_alpha = 0;
    std::size_t coherence_top = 10;
    std::string corpus;
    std::string vocab;
    std::string alpha;
    lda::TrainOptions options;
    lda::DistributedOptions dist;  ///< only with more than one MPI rank
    std::string straggler;
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
    f.options.record_schedule = !f.common.trace.empty();
}

void run_train(TrainFlags& f) {
    apply_common(f);
    if (!f.alpha.empty()) parse_alpha(f.alpha, f.options.params);
    const int threads = f.common.resolved_threads();

    std::optional<lda::Checkpoint> resume;
    if (!f.common.resume.empty()) {
        // The run's settings come from the checkpoint; only --iterations (the total) may change.
        resume = lda::read_checkpoint(f.common.resume);
        const std::uint32_t target =
            f.common.iterations_set ? f.options.iterations : resume->options.iterations;
        f.options = resume->options;
        f.options.iterations = target;
    }
    f.options.record_schedule = !f.common.trace.empty();
    f.options.validate();
    const std::string checkpoint_dir = f.common.resolved_checkpoint_dir();
    if (f.common.checkpoint_every > 0) lda::remove_stale_temporaries(checkpoint_dir);

    core::LoadedCorpus loaded = core::load_corpus(f.corpus, f.vocab);
    const lda::CorpusFingerprint print = lda::fingerprint(loaded.corpus);
    if (resume && !(resume->corpus == print))
        throw ConfigError("--resume", fmt::format("{} was made on another corpus than {}",
                                                  f.common.resume, f.corpus));

    // Memory plan: refuse before allocating rather than fail (or swap) half-way.
    const std::uint64_t need = lda::Trainer::estimate_memory(loaded.corpus, f.options, threads);
    train::check_memory(need, train::memory_limit(f.common.max_memory),
                        "use fewer topics (--topics), a smaller corpus, or raise --max-memory");

    std::unique_ptr<train::JsonLinesReporter> metrics;
    if (!f.common.metrics.empty())
        metrics =
            std::make_unique<train::JsonLinesReporter>(f.common.metrics, lda::record_schema());

    sched::Runtime runtime(threads, f.common.pin_mode());
    lda::Trainer trainer(loaded.corpus, f.options, runtime);
    if (resume) {
        trainer.set_alpha(resume->alpha);
        trainer.restore(resume->block_topics, resume->iterations_done, f.common.resume);
    }
    train::TerminalReporter terminal(stdout, lda::record_schema());
    train::TeeReporter tee;
    if (!f.common.quiet) tee.add(terminal);
    if (metrics) tee.add(*metrics);
    train::Hooks hooks;
    // Held-out document completion at every evaluation (docs/evaluation.md), on the training
    // vocabulary; parallel over documents, the same at any thread count.
    std::optional<lda::HeldoutEvaluator> heldout;
    if (!f.heldout.empty()) {
        core::LoadedCorpus h = core::load_corpus(f.heldout, f.heldout_vocab);
        lda::MappedCorpus mapped = lda::map_to_model(h.corpus, h.vocab ? &*h.vocab : nullptr,
                                                     loaded.vocab ? &*loaded.vocab : nullptr,
                                                     loaded.corpus.num_words(), f.heldout);
        heldout.emplace(std::move(mapped.corpus), lda::FoldInOptions{});
    }
    const lda::RangeLoop parallel = [&runtime](
                                        std::int64_t b, std::int64_t e,
                                        const std::function<void(std::int64_t, std::int64_t)>& fn) {
        runtime.parallel_for(b, e, fn);
    };
    hooks.on_evaluate = [&](train::Record& m) {
        if (heldout) {
            lda::LdaParams p = f.options.params;
            p.alpha_per_topic = trainer.alpha();
            const lda::HeldoutResult r =
                heldout->evaluate(trainer.word_topic(), trainer.topic_totals(), p, parallel);
            m.set("heldout_loglik_per_token", r.loglik_per_token());
            m.set("heldout_perplexity", r.perplexity());
        }
        if (f.coherence_top > 0) {
            const lda::LdaModel snapshot = trainer.to_model({}, f.corpus);
            std::vector<std::vector<WordId>> top;
            for (const auto& t : lda::top_words(snapshot, f.coherence_top)) {
                top.emplace_back();
                for (const auto& [w, p] : t.words) top.back().push_back(w);
            }
            m.set("coherence_umass", lda::umass_coherence(loaded.corpus, top).mean);
        }
    };
    hooks.after_iteration = [&](const train::Record& m) {
        // Minka's fixed-point update of an asymmetric α every N sweeps, as Mallet does.
        if (f.optimize_alpha > 0 && m.iter % f.optimize_alpha == 0) {
            const auto r = lda::optimize_alpha(lda::doc_topic_histograms(trainer.doc_topic()),
                                               trainer.alpha());
            if (r.updated) trainer.set_alpha(r.alpha);
        }
        if (f.common.checkpoint_every > 0 && m.iter % f.common.checkpoint_every == 0 &&
            m.iter < f.options.iterations)
            lda::write_checkpoint(checkpoint_dir, trainer, f.options, print);
    };
    // Sweeps run back to back, without a barrier, except before the iterations whose hook reads
    // or changes the state.
    hooks.needs_state = [&](std::uint32_t iter) {
        return (f.optimize_alpha > 0 && iter % f.optimize_alpha == 0) ||
               (f.common.checkpoint_every > 0 && iter % f.common.checkpoint_every == 0);
    };
    if (trainer.iterations_done() < f.options.iterations)
        trainer.train(tee, hooks, f.options.iterations);

    std::vector<std::string> vocab;
    if (loaded.vocab) {
        for (WordId w = 0; w < loaded.vocab->size(); ++w) vocab.emplace_back(loaded.vocab->word(w));
    }
    lda::save_model(trainer.to_model(std::move(vocab), f.corpus), f.common.out);
    if (metrics) metrics->commit();
    if (!f.common.trace.empty())
        train::write_chrome_trace(f.common.trace, trainer.schedule(), threads, "rotor lda train");
    if (!f.common.quiet) fmt::print("rotor: model written to {}\n", f.common.out);
}

/// `mpiexec -n P rotor lda train ...` with P > 1 (docs/distributed.md). Failures before and after
/// training are agreed by all ranks (comm::AgreedError); one during training ends the job in main.
void run_train_distributed(TrainFlags& f, comm::Communicator& world) {
    apply_common(f);
    const std::string checkpoint_dir = f.common.resolved_checkpoint_dir();
    std::optional<core::LoadedCorpus> loaded;
    std::optional<sched::Runtime> runtime;
    std::unique_ptr<train::JsonLinesReporter> metrics;
    // Every rank holds the held-out corpus; rank 0 evaluates it (DistributedTrainer).
    std::optional<lda::HeldoutEvaluator> heldout;
    // --resume: every rank reads the shared state and its own part (apps/lda/checkpoint.h).
    std::optional<lda::DistributedCheckpoint> resume;
    lda::CorpusFingerprint print;
    // Ranks sharing this host share its memory: the default --max-memory is their share of it.
    const int host_ranks = train::ranks_on_this_host(world);
    comm::run_agreed(world, [&] {
        if (!f.alpha.empty()) parse_alpha(f.alpha, f.options.params);
        if (!f.straggler.empty()) lda::parse_straggler(f.straggler, f.dist);
        if (!f.common.resume.empty()) {
            // As with one process, the run's settings come from the checkpoint (the grid's
            // columns per slice and the timer's too, so that every rank's blocks are the ones
            // saved); only --iterations (the total) may change.
            resume = lda::read_distributed_checkpoint(f.common.resume, world.rank(), world.size());
            const std::uint32_t target =
                f.common.iterations_set ? f.options.iterations : resume->options.iterations;
            f.options = resume->options;
            f.options.iterations = target;
            f.dist.columns_per_slice = resume->columns_per_slice;
            f.dist.timer = resume->timer;
            f.dist.rebalance = resume->rebalance;
            f.dist.rebalance_tolerance = resume->rebalance_tolerance;
            if (resume->timer) {
                f.dist.timer_params.low = resume->timer_low;
                f.dist.timer_params.high = resume->timer_high;
                f.dist.timer_params.initial_s = resume->timer_budget;
            }
        }
        f.options.record_schedule = !f.common.trace.empty();
        f.options.validate();
        f.dist.validate(world.size());
        // Rank 0 alone builds checkpoint directories, so it alone clears what killed runs left.
        if (f.common.checkpoint_every > 0 && world.rank() == 0)
            lda::remove_stale_temporaries(checkpoint_dir);
        loaded.emplace(core::load_corpus(f.corpus, f.vocab));
        if (f.common.checkpoint_every > 0 || resume) print = lda::fingerprint(loaded->corpus);
        if (resume && !(resume->corpus == print))
            throw ConfigError("--resume", fmt::format("{} was made on another corpus than {}",
                                                      f.common.resume, f.corpus));
        if (!f.heldout.empty()) {
            core::LoadedCorpus h = core::load_corpus(f.heldout, f.heldout_vocab);
            lda::MappedCorpus mapped = lda::map_to_model(h.corpus, h.vocab ? &*h.vocab : nullptr,
                                                         loaded->vocab ? &*loaded->vocab : nullptr,
                                                         loaded->corpus.num_words(), f.heldout);
            heldout.emplace(std::move(mapped.corpus), lda::FoldInOptions{});
        }
        // Default: each host's cores shared out among the ranks on it.
        const int threads = f.common.resolved_threads(host_ranks);
        // Memory plan per rank (every rank computes the same): refuse before allocating, and
        // let rebalancing give no rank more tokens than the limit allows.
        const core::Corpus& corpus = loaded->corpus;
        std::uint64_t longest = 0;
        for (DocId d = 0; d < corpus.num_docs(); ++d)
            longest = std::max<std::uint64_t>(longest, corpus.doc_length(d));
        const std::uint64_t share = corpus.num_tokens() / world.size() + longest;
        const auto estimate = [&](std::uint64_t tokens) {
            return lda::DistributedTrainer::estimate_memory(corpus, f.options, world.size(),
                                                            threads, tokens);
        };
        const std::uint64_t need = estimate(share);
        const std::uint64_t limit = train::memory_limit(f.common.max_memory, host_ranks);
        train::check_memory(need, limit,
                            "use more ranks, fewer topics (--topics), or raise --max-memory (per "
                            "rank under mpiexec)",
                            true);
        if (limit > 0 && corpus.num_tokens() > 0) {
            const std::uint64_t base = estimate(0);
            const double per_token = static_cast<double>(estimate(corpus.num_tokens()) - base) /
                                     static_cast<double>(corpus.num_tokens());
            if (per_token > 0)
                f.dist.max_rank_tokens = std::max<std::uint64_t>(
                    share,
                    static_cast<std::uint64_t>(static_cast<double>(limit - base) / per_token));
        }
        runtime.emplace(threads, f.common.pin_mode());
        if (world.rank() == 0 && !f.common.metrics.empty())
            metrics =
                std::make_unique<train::JsonLinesReporter>(f.common.metrics, lda::record_schema());
    });
    std::unique_ptr<lda::DistributedTrainer> trainer;
    comm::run_agreed(world, [&] {
        trainer = std::make_unique<lda::DistributedTrainer>(loaded->corpus, f.options, f.dist,
                                                            *runtime, world);
        if (resume) trainer->set_alpha(resume->alpha);  // the same values on every rank
        // Written by another number of ranks: this rank takes the documents of its static split
        // from whichever parts hold them.
        if (resume && resume->ranks != world.size())
            lda::read_distributed_parts(*resume, loaded->corpus, trainer->local_docs());
    });
    if (resume) {
        trainer->restore(loaded->corpus, resume->docs, resume->topics, resume->iterations_done,
                         resume->timer_budget, resume->part_path);  // agreed on failure
        resume->docs = {};
        resume->topics = {};
        if (!f.common.quiet) {
            // The restored state's log-likelihood: the one the run recorded at that iteration.
            const lda::LogLikelihood ll = trainer->evaluate();
            if (world.rank() == 0)
                fmt::print("rotor: resumed {} at iteration {} (loglik {:.17g}){}\n",
                           f.common.resume, trainer->iterations_done(), ll.loglik,
                           resume->ranks != world.size()
                               ? fmt::format(", written by {} ranks, now on {}", resume->ranks,
                                             world.size())
                               : "");
        }
    }
    train::TerminalReporter terminal(stdout, lda::record_schema());
    train::TeeReporter tee;
    if (!f.common.quiet && world.rank() == 0) tee.add(terminal);
    if (metrics) tee.add(*metrics);
    // The hooks run on every rank in the same order (train::run_iterations), so their collectives
    // match.
    train::Hooks hooks;
    hooks.on_evaluate = [&](train::Record& m) {
        if (heldout) {
            const lda::HeldoutResult r = trainer->evaluate_heldout(*heldout);
            m.set("heldout_loglik_per_token", r.loglik_per_token());
            m.set("heldout_perplexity", r.perplexity());
        }
        if (f.coherence_top > 0) {
            // The top words come to rank 0, which has the corpus; the other ranks go on.
            const auto top = trainer->top_words(f.coherence_top);
            if (world.rank() == 0)
                m.set("coherence_umass", lda::umass_coherence(loaded->corpus, top).mean);
        }
    };
    hooks.after_iteration = [&](const train::Record& m) {
        // Minka's update every N sweeps from all ranks' histograms; the same α on every rank.
        if (f.optimize_alpha > 0 && m.iter % f.optimize_alpha == 0) trainer->optimize_alpha();
        // Every rank writes its part; a failure on any rank is agreed (AgreedError everywhere).
        if (f.common.checkpoint_every > 0 && m.iter % f.common.checkpoint_every == 0 &&
            m.iter < f.options.iterations)
            lda::write_distributed_checkpoint(checkpoint_dir, *trainer, f.options, f.dist, print,
                                              world);
    };
    if (trainer->iterations_done() < f.options.iterations)
        trainer->train(tee, hooks, f.options.iterations);

    std::vector<std::string> vocab;
    if (loaded->vocab && world.rank() == 0) {
        for (WordId w = 0; w < loaded->vocab->size(); ++w)
            vocab.emplace_back(loaded->vocab->word(w));
    }
    lda::LdaModel model = trainer->gather_model(std::move(vocab), f.corpus);
    std::vector<std::vector<train::BlockRun>> timeline;
    if (!f.common.trace.empty()) timeline = trainer->gather_schedule();
    comm::run_agreed(world, [&] {
        if (world.rank() != 0) return;
        lda::save_model(model, f.common.out);
        if (metrics) metrics->commit();
        if (!f.common.trace.empty())
            train::write_chrome_trace_ranks(f.common.trace, timeline, runtime->threads());
    });
    if (!f.common.quiet && world.rank() == 0)
        fmt::print("rotor: model written to {}\n", f.common.out);
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
    c->add_option("--blocks", f->options.blocks,
                  "Grid side L (default: ceil(sqrt(2)*threads); 16 with --deterministic)");
    c->add_flag("--deterministic", f->options.deterministic,
                "Diagonal sweeps: the same seed gives the same model at any thread count");
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
    c->add_option("--coherence-top", f->coherence_top,
                  "Words per topic for the UMass coherence metric (0: do not compute)")
        ->capture_default_str();
    c->add_flag("--timer,!--no-timer", f->dist.timer,
                "MPI only: stop each round's compute after a tuned time budget (default on)");
    c->add_option("--timer-init", f->dist.timer_params.initial_s,
                  "MPI only: first round's time budget, seconds")
        ->capture_default_str();
    c->add_option("--timer-low", f->dist.timer_params.low,
                  "MPI only: the budget doubles when a round processed less than this ratio")
        ->capture_default_str();
    c->add_option("--timer-high", f->dist.timer_params.high,
                  "MPI only: the budget halves when a round processed more than this ratio")
        ->capture_default_str();
    c->add_flag("--rebalance,!--no-rebalance", f->dist.rebalance,
                "MPI only: move documents between ranks to follow their measured speeds (default "
                "on)");
    c->add_option("--rebalance-tolerance", f->dist.rebalance_tolerance,
                  "MPI only: move documents once a rank holds more than 1 + this of its share")
        ->capture_default_str();
    c->add_option("--simulate-straggler", f->straggler,
                  "MPI only: RANK:FACTOR makes one rank's sampling FACTOR times slower");
    c->callback([f, world] {
        if (world != nullptr && world->size() > 1) {
            run_train_distributed(*f, *world);
        } else {
            run_train(*f);
        }
    });
}

void add_export(CLI::App& lda) {
    struct Flags {
        std::string model, out, format = "tsv";
    };
    auto f = std::make_shared<Flags>();
    auto* c = lda.add_subcommand("export", "Export a model's counts as text");
    c->add_option("--model", f->model, "Model directory")->required();
    c->add_option("--out", f->out, "Output directory")->required();
    c->add_option("--format", f->format, "Output format")
        ->check(CLI::IsMember({"tsv"}))
        ->capture_default_str();
    c->callback([f] { lda::export_tsv(lda::load_model(f->model), f->out); });
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
        // UMass coherence needs the training corpus: the one named, or the model's own.
        std::optional<lda::Coherence> coherence;
        const std::string corpus_path = !f->corpus.empty()                       ? f->corpus
                                        : std::filesystem::exists(m.info.corpus) ? m.info.corpus
                                                                                 : std::string();
        if (!corpus_path.empty()) {
            const core::LoadedCorpus train = core::load_corpus(corpus_path, f->vocab);
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
