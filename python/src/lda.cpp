// rotor.LDA's native half: a corpus from arrays or text, lda::Trainer on it (the trainer of
// `rotor lda train`, one process), the model as arrays, save_model/load_model, and fold-in.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "apps/lda/checkpoint.h"
#include "apps/lda/trainer.h"
#include "comm/inprocess_communicator.h"
#include "common.h"
#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/corpus/corpus_arrays.h"
#include "core/corpus/text_corpus.h"
#include "core/io/byte_source.h"
#include "core/io/line_reader.h"
#include "core/lda/coherence.h"
#include "core/lda/fold_in_sampler.h"
#include "core/lda/heldout.h"
#include "core/lda/inference.h"
#include "core/lda/model.h"
#include "sched/runtime.h"
#include "train/memory_plan.h"

namespace rotor::python {
namespace {

/// The parameters of rotor.LDA and the flags of `rotor lda train` they stand for.
constexpr ParamNames kNames = {{"--topics", "n_components"},
                               {"--alpha", "doc_topic_prior"},
                               {"--beta", "topic_word_prior"},
                               {"--iterations", "max_iter"},
                               {"--seed", "random_state"},
                               {"--deterministic", "deterministic"},
                               {"--blocks", "blocks"},
                               {"--sampler", "sampler"},
                               {"--mh-steps", "mh_steps"},
                               {"--init", "init"},
                               {"--init-doc-topics", "init_doc_topics"},
                               {"--init-word-prior", "init_word_prior"},
                               {"--max-memory", "max_memory"},
                               {"--top", "coherence_top"},
                               {"--threads", "n_jobs"},
                               {"--min-len", "min_len"},
                               {"--max-len", "max_len"},
                               {"--min-df", "min_df"},
                               {"--max-df", "max_df"},
                               {"--token-pattern", "token_pattern"}};

/// The documents of fit or transform: a CSR count matrix ("counts": values are the counts) or
/// token lists ("tokens": indices are the word ids in order, values empty). A matrix as scipy
/// holds it (int32 or int64 indices; float64, float32, int64 or int32 counts) is read in place,
/// in one pass that checks and expands it; other dtypes are converted first.
core::Corpus corpus_of(const std::string& kind, const py::array& indptr, const py::array& indices,
                       const py::array& values, std::uint64_t num_words, const std::string& name,
                       const core::ReadLimits& limits) {
    if (kind == "counts") {
        std::optional<core::Corpus> c;
        visit_csr(indptr, indices, values, [&](auto p, auto i, auto v) {
            py::gil_scoped_release release;  // the caller keeps the arrays
            c = core::corpus_from_counts(p, i, v, num_words, name, limits);
        });
        return std::move(*c);
    }
    return core::corpus_from_tokens(view(indptr.cast<Array<std::int64_t>>()),
                                    view(indices.cast<Array<std::int64_t>>()), num_words, name,
                                    limits);
}

template <class T>
py::array_t<T> array_of(const std::vector<T>& v) {
    return to_numpy(v);
}

/// An LdaModel as the dict rotor.LDA keeps (and pickles).
py::dict state_of(const lda::LdaModel& m) {
    py::dict s;
    s["num_topics"] = m.info.num_topics;
    s["alpha"] = array_of(m.info.alpha);
    s["beta"] = m.info.beta;
    s["num_words"] = m.info.num_words;
    s["num_docs"] = m.info.num_docs;
    s["num_tokens"] = m.info.num_tokens;
    s["iterations"] = m.info.iterations;
    s["seed"] = m.info.seed;
    s["corpus"] = m.info.corpus;
    s["init"] = m.info.init;
    s["init_doc_topics"] = m.info.init_doc_topics;
    s["init_word_prior"] = m.info.init_word_prior;
    s["vocab"] = m.vocab;
    s["word_topic_offsets"] = array_of(m.word_topic.offsets);
    s["word_topic_topics"] = array_of(m.word_topic.topics);
    s["word_topic_counts"] = array_of(m.word_topic.counts);
    s["doc_topic_offsets"] = array_of(m.doc_topic.offsets);
    s["doc_topic_topics"] = array_of(m.doc_topic.topics);
    s["doc_topic_counts"] = array_of(m.doc_topic.counts);
    s["doc_labels"] = array_of(m.doc_labels);
    s["doc_names"] = m.doc_names;
    s["topic_totals"] = array_of(m.topic_totals);
    return s;
}

/// The dict back into an LdaModel, checked as load_model checks a directory (InputError naming
/// "model state").
lda::LdaModel model_of(const py::dict& s) {
    lda::LdaModel m;
    m.info.num_topics = s["num_topics"].cast<std::uint32_t>();
    m.info.alpha = vector_of<double>(s["alpha"]);
    m.info.beta = s["beta"].cast<double>();
    m.info.num_words = s["num_words"].cast<std::uint32_t>();
    m.info.num_docs = s["num_docs"].cast<std::uint32_t>();
    m.info.num_tokens = s["num_tokens"].cast<std::uint64_t>();
    m.info.iterations = s["iterations"].cast<std::uint32_t>();
    m.info.seed = s["seed"].cast<std::uint64_t>();
    m.info.corpus = s["corpus"].cast<std::string>();
    m.info.init = s["init"].cast<std::string>();
    m.info.init_doc_topics = s["init_doc_topics"].cast<std::uint32_t>();
    m.info.init_word_prior = s["init_word_prior"].cast<double>();
    m.vocab = s["vocab"].cast<std::vector<std::string>>();
    m.word_topic.offsets = vector_of<std::uint64_t>(s["word_topic_offsets"]);
    m.word_topic.topics = vector_of<TopicId>(s["word_topic_topics"]);
    m.word_topic.counts = vector_of<Count>(s["word_topic_counts"]);
    m.doc_topic.offsets = vector_of<std::uint64_t>(s["doc_topic_offsets"]);
    m.doc_topic.topics = vector_of<TopicId>(s["doc_topic_topics"]);
    m.doc_topic.counts = vector_of<Count>(s["doc_topic_counts"]);
    m.doc_labels = vector_of<std::uint64_t>(s["doc_labels"]);
    m.doc_names = s["doc_names"].cast<std::vector<std::string>>();
    m.topic_totals = vector_of<TotalCount>(s["topic_totals"]);
    const auto rows_ok = [](const lda::SparseCounts& c, std::size_t rows) {
        return c.offsets.size() == rows + 1 && c.offsets.front() == 0 &&
               c.offsets.back() == c.topics.size() && c.topics.size() == c.counts.size() &&
               std::is_sorted(c.offsets.begin(), c.offsets.end());
    };
    const std::uint32_t k = m.info.num_topics;
    const auto topics_ok = [k](const lda::SparseCounts& c) {
        return std::all_of(c.topics.begin(), c.topics.end(), [k](TopicId t) { return t < k; });
    };
    if (m.info.alpha.size() != k || m.topic_totals.size() != k ||
        !rows_ok(m.word_topic, m.info.num_words) || !rows_ok(m.doc_topic, m.info.num_docs) ||
        !topics_ok(m.word_topic) || !topics_ok(m.doc_topic) ||
        m.doc_labels.size() != m.info.num_docs ||
        (!m.vocab.empty() && m.vocab.size() != m.info.num_words))
        throw InputError("model state", "arrays of inconsistent shapes");
    m.info.vocabulary = !m.vocab.empty();
    return m;
}

/// What rotor.LDA.fit passes: its parameters, resolved to the command line's values.
struct FitParams {
    lda::TrainOptions options;
    int threads = 1;
    bool pin = true;
    std::uint32_t optimize_alpha = 0;
    std::size_t coherence_top = 10;
    std::string max_memory;
    bool verbose = false;
};

FitParams fit_params(const py::dict& p) {
    FitParams f;
    lda::TrainOptions& o = f.options;
    o.params.num_topics = p["n_components"].cast<std::uint32_t>();
    const py::object alpha = p["doc_topic_prior"];
    if (!alpha.is_none()) {
        if (py::isinstance<py::float_>(alpha) || py::isinstance<py::int_>(alpha)) {
            o.params.alpha = alpha.cast<double>();
            if (!(o.params.alpha > 0)) throw ConfigError("--alpha", "must be positive");
        } else {
            o.params.alpha_per_topic = alpha.cast<std::vector<double>>();
        }
    }
    o.params.beta = p["topic_word_prior"].cast<double>();
    o.iterations = p["max_iter"].cast<std::uint32_t>();
    o.seed = p["random_state"].cast<std::uint64_t>();
    o.deterministic = p["deterministic"].cast<bool>();
    o.blocks = p["blocks"].cast<int>();
    o.sampler = lda::parse_sampler(p["sampler"].cast<std::string>());
    o.mh_steps = p["mh_steps"].cast<std::uint32_t>();
    o.init.method = lda::parse_init_method(p["init"].cast<std::string>());
    o.init.doc_topics = p["init_doc_topics"].cast<std::uint32_t>();
    o.init.word_prior = p["init_word_prior"].cast<double>();
    o.eval_every = p["evaluate_every"].cast<std::uint32_t>();
    f.threads = resolve_threads(p["n_jobs"].cast<int>());
    f.pin = p["pin"].cast<bool>();
    f.optimize_alpha = p["optimize_alpha"].cast<std::uint32_t>();
    f.coherence_top = p["coherence_top"].cast<std::size_t>();
    f.max_memory = p["max_memory"].cast<std::string>();
    f.verbose = p["verbose"].cast<bool>();
    o.validate();
    return f;
}

/// --resume in Python's terms: the checkpoint at ck.resume read and checked against the fit's
/// parameters (every model-defining one must be the checkpoint's; doc_topic_prior only when given
/// and α is not optimised, since the checkpoint holds the α the run reached) and against the
/// corpus; the run then takes the checkpoint's α and grid, as `lda train --resume` does.
lda::Checkpoint read_resume(const CheckpointParams& ck, FitParams& f, bool alpha_given,
                            const lda::CorpusFingerprint& print, lda::DistributedOptions& dist) {
    lda::Checkpoint c = lda::read_checkpoint(ck.resume);
    lda::TrainOptions recorded = c.options;
    if (!c.init_recorded) recorded.init = f.options.init;  // rotor's first checkpoints
    const bool check_alpha = alpha_given && f.optimize_alpha == 0;
    check_resume(lda::resume_settings(f.options, recorded), c.iterations_done, f.options.iterations,
                 ck.resume, "--iterations", [check_alpha](const std::string& flag) {
                     return flag != "--alpha" || check_alpha;
                 });
    lda::check_same_corpus(c.corpus, print, ck.resume, "X");
    f.options.params = recorded.params;  // α as the run reached it; K and β are the same
    lda::apply_checkpoint_layout(c, dist);
    return c;
}

py::tuple fit(const std::string& kind, const py::array& indptr, const py::array& indices,
              const py::array& values, std::uint64_t num_words, std::vector<std::string> vocab,
              const py::dict& params, const std::optional<py::tuple>& heldout, py::list& sink) {
    py::tuple result;
    std::optional<Records> records;
    run_fit(
        [&] {
            FitParams f = fit_params(params);
            const CheckpointParams ck(params);
            const core::ReadLimits limits = train::corpus_limits(f.max_memory);
            if (!vocab.empty()) {
                if (vocab.size() != num_words)
                    throw InputError("vocabulary", fmt::format("{} words for {} columns",
                                                               vocab.size(), num_words));
                core::Vocabulary::from_words(vocab, "vocabulary");  // distinct, non-empty
            }
            ck.prepare();
            const core::Corpus corpus =
                corpus_of(kind, indptr, indices, values, num_words, "X", limits);
            if (corpus.num_tokens() == 0)
                throw InputError("X", "has no tokens: nothing to train on");
            // The corpus' fingerprint, as `lda train` takes it of the corpus it read: a checkpoint
            // of the command line resumes here on the same documents, and the other way round.
            lda::CorpusFingerprint print;
            if (ck.writes() || !ck.resume.empty()) print = lda::fingerprint(corpus);
            lda::DistributedOptions dist;
            std::optional<lda::Checkpoint> resume;
            if (!ck.resume.empty())
                resume = read_resume(ck, f, !params["doc_topic_prior"].is_none(), print, dist);
            // Document completion of held-out documents (--heldout) at every evaluation; their
            // columns are the training matrix's words.
            std::optional<lda::HeldoutEvaluator> held;
            if (heldout) {
                const py::tuple& h = *heldout;
                held.emplace(corpus_of(h[0].cast<std::string>(), h[1].cast<py::array>(),
                                       h[2].cast<py::array>(), h[3].cast<py::array>(), num_words,
                                       "X_heldout", limits),
                             lda::FoldInOptions{});
            }
            // The memory plan of `lda train` in one process: refused before anything big.
            std::uint64_t text = 0;
            for (const std::string& w : vocab) text += 32 + (w.size() > 15 ? w.size() + 1 : 0);
            const std::uint64_t need =
                lda::Trainer::estimate_memory(corpus, f.options, f.threads) +
                lda::Trainer::estimate_finish_memory(corpus, f.options, 1, f.coherence_top, text);
            train::check_memory(need, train::memory_limit(f.max_memory),
                                "use fewer topics (n_components), a smaller corpus, or raise "
                                "max_memory");
            records.emplace(lda::record_schema(), f.verbose);
            lda::LdaModel model;
            const InterruptWatch watch;
            {
                py::gil_scoped_release release;
                const SignalCheck check;
                sched::Runtime runtime(f.threads, pin_mode(f.pin));
                comm::InProcessGroup one(1);
                lda::Trainer trainer(corpus, f.options, dist, runtime, one.at(0));
                if (resume) {
                    // As `lda train --resume`: the α the run reached, each token's topic back.
                    trainer.set_alpha(resume->alpha);
                    if (resume->ranks != 1)  // written by mpiexec -n P: every part read
                        lda::read_checkpoint_parts(*resume, corpus, trainer.local_docs());
                    trainer.restore(corpus, resume->docs, resume->topics, resume->iterations_done,
                                    resume->timer_budget, resume->part_path);
                    resume->docs = {};
                    resume->topics = {};
                }
                train::Hooks hooks;
                hooks.on_evaluate = [&](train::Record& m) {
                    if (held) {
                        const lda::HeldoutResult r = trainer.evaluate_heldout(*held);
                        m.set("heldout_loglik_per_token", r.loglik_per_token());
                        m.set("heldout_perplexity", r.perplexity());
                    }
                    if (f.coherence_top > 0)
                        m.set(
                            "coherence_umass",
                            lda::umass_coherence(corpus, trainer.top_words(f.coherence_top)).mean);
                };
                // α is re-estimated and checkpoints written on this thread with the sweeps
                // stopped. The sweeps between those iterations and the evaluations run back to
                // back as on the command line (the same model), the thread that ends one seeing
                // a Ctrl-C; only when the watch is off on the main thread is every iteration a
                // sync point whose hook runs here.
                const auto alpha_due = [&f](std::uint32_t iter) {
                    return f.optimize_alpha > 0 && iter % f.optimize_alpha == 0;
                };
                const auto checkpoint_due = [&ck, &f](std::uint32_t iter) {
                    return ck.due(iter, f.options.iterations);
                };
                hooks.after_iteration = [&](const train::Record& r) {
                    if (alpha_due(r.iter)) trainer.optimize_alpha();
                    // Before looking for Ctrl-C: an iteration that asks for a checkpoint has one.
                    if (checkpoint_due(r.iter))
                        lda::write_checkpoint(ck.dir, trainer, f.options, dist, print);
                    watch.poll();
                    check();
                };
                if (!watch.every_iteration())
                    hooks.needs_state = [&](std::uint32_t iter) {
                        return alpha_due(iter) || checkpoint_due(iter);
                    };
                if (trainer.iterations_done() < f.options.iterations)
                    trainer.train(*records, hooks, f.options.iterations);
                model = trainer.gather_model(std::move(vocab), "");
            }
            result = py::make_tuple(state_of(model), resume ? resume->iterations_done : 0U);
        },
        kNames, records, sink);
    return result;
}

void save(const py::dict& state, const std::string& path) {
    translate_errors([&] { lda::save_model(model_of(state), path); }, {{"--out", "path"}});
}

py::dict load(const std::string& path) {
    py::dict s;
    translate_errors([&] { s = state_of(lda::load_model(path)); }, {});
    return s;
}

/// θ of each document by Gibbs fold-in with the model fixed, as `rotor lda infer`: each
/// document's generator seeded from (seed, its label = row + 1), so rows do not depend on the
/// threads. D x K, float64; a row of a document without tokens is the prior's.
py::array_t<double> transform(const py::dict& state, const std::string& kind,
                              const py::array& indptr, const py::array& indices,
                              const py::array& values, std::uint32_t iterations,
                              std::uint32_t burn_in, std::uint64_t seed, int n_jobs) {
    py::array_t<double> out;
    translate_errors(
        [&] {
            const lda::LdaModel model = model_of(state);
            lda::FoldInOptions fold;
            fold.iterations = iterations;
            fold.burn_in = burn_in;
            fold.seed = seed;
            fold.validate();
            const int threads = resolve_threads(n_jobs);
            const core::Corpus corpus = corpus_of(kind, indptr, indices, values,
                                                  model.info.num_words, "X", core::ReadLimits{});
            const std::size_t k_count = model.info.num_topics;
            out = py::array_t<double>(
                {static_cast<py::ssize_t>(corpus.num_docs()), static_cast<py::ssize_t>(k_count)});
            double* theta = out.mutable_data();
            py::gil_scoped_release release;
            sched::Runtime runtime(threads, sched::PinMode::kNone);
            const lda::RangeLoop loop =
                [&runtime](std::int64_t begin, std::int64_t end,
                           const std::function<void(std::int64_t, std::int64_t)>& body) {
                    if (begin < end) runtime.parallel_for(begin, end, body);
                };
            std::vector<WordId> words(corpus.word_ids().begin(), corpus.word_ids().end());
            std::sort(words.begin(), words.end());
            words.erase(std::unique(words.begin(), words.end()), words.end());
            const lda::TopicWordDistribution phi =
                lda::phi_from_counts(model.word_topic, model.topic_totals, model.info.beta, words);
            const lda::FoldInTables tables(phi, model.info.alpha, words, loop);
            const auto labels = corpus.doc_labels();
            loop(0, corpus.num_docs(), [&](std::int64_t lo, std::int64_t hi) {
                lda::FoldInSampler sampler(tables);
                for (auto d = lo; d < hi; ++d) {
                    Rng rng = Rng::from({fold.seed, labels[d]});
                    sampler.infer(corpus.doc(static_cast<DocId>(d)), fold, rng,
                                  std::span<double>(theta + d * k_count, k_count));
                }
            });
        },
        {{"--iterations", "transform_max_iter"},
         {"--burn-in", "burn_in"},
         {"--seed", "random_state"}});
    return out;
}

/// Documents as `rotor corpus build --format text` reads them (one per string; a line break
/// inside one is a space): (offsets, word ids in text order, vocabulary, rows kept). With a
/// fixed vocabulary (transform) tokens are mapped onto it and its bounds are 1..255 bytes, as
/// `lda infer --text`; rows without a token are left out (rows kept says which).
py::tuple tokenize(const std::vector<std::string>& docs, const py::dict& p,
                   const std::optional<std::vector<std::string>>& fixed) {
    py::tuple result;
    translate_errors(
        [&] {
            core::TextOptions opt;
            opt.min_len = p["min_len"].cast<std::uint32_t>();
            opt.max_len = p["max_len"].cast<std::uint32_t>();
            opt.min_df = p["min_df"].cast<std::uint32_t>();
            opt.max_df = p["max_df"].cast<double>();
            opt.max_vocab = p["max_vocab"].cast<std::uint32_t>();
            opt.pattern = core::parse_token_pattern(p["token_pattern"].cast<std::string>());
            core::StopWords own;
            const py::object stop = p["stop_words"];
            if (stop.is_none()) {
                opt.stopwords = nullptr;
            } else if (!py::isinstance<py::str>(stop)) {
                for (const std::string& w : stop.cast<std::vector<std::string>>()) {
                    std::string lower = w;
                    for (char& c : lower) c = static_cast<char>(std::tolower(c));
                    own.insert(lower);
                }
                opt.stopwords = &own;
            }
            std::optional<core::Vocabulary> vocab;
            if (fixed) {
                vocab = core::Vocabulary::from_words(*fixed, "vocabulary");
                opt.fixed_vocab = &*vocab;
                opt.min_len = 1;
                opt.max_len = 255;
            }
            opt.validate();
            std::string text;
            for (const std::string& d : docs) {
                std::string one = d;
                std::replace(one.begin(), one.end(), '\n', ' ');
                std::replace(one.begin(), one.end(), '\r', ' ');
                text += one;
                text += '\n';
            }
            core::Vocabulary built;
            core::Corpus corpus;
            {
                py::gil_scoped_release release;
                core::LineReader reader(core::memory_byte_source("X", text));
                corpus = core::read_text(reader, opt, fixed ? nullptr : &built);
            }
            std::vector<std::int64_t> offsets(corpus.doc_offsets().begin(),
                                              corpus.doc_offsets().end());
            std::vector<std::int64_t> ids(corpus.word_ids().begin(), corpus.word_ids().end());
            std::vector<std::int64_t> rows;
            for (const std::uint64_t label : corpus.doc_labels())
                rows.push_back(static_cast<std::int64_t>(label) - 1);
            std::vector<std::string> words;
            if (!fixed)
                for (WordId w = 0; w < built.size(); ++w) words.push_back(built.word(w));
            result = py::make_tuple(to_numpy(offsets), to_numpy(ids), words, to_numpy(rows));
        },
        kNames);
    return result;
}

}  // namespace

void add_lda(py::module_& m) {
    m.def("lda_fit", &fit);
    m.def("lda_save", &save);
    m.def("lda_load", &load);
    m.def("lda_transform", &transform);
    m.def("lda_tokenize", &tokenize);
}

}  // namespace rotor::python
