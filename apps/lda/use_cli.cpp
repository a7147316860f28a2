// `rotor lda infer | eval | coherence`: flags -> structs -> the core kernels, run over documents
// with sched::Runtime::parallel_for.
#include "apps/lda/use_cli.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/plural.h"
#include "core/corpus/corpus.h"
#include "core/corpus/doc_names.h"
#include "core/corpus/text_corpus.h"
#include "core/corpus/vocabulary.h"
#include "core/io/atomic_file.h"
#include "core/lda/coherence.h"
#include "core/lda/fold_in_sampler.h"
#include "core/lda/model.h"
#include "sched/runtime.h"
#include "train/memory_plan.h"

namespace rotor::apps {
namespace {

int resolve_threads(int threads) {
    if (threads < 0) throw ConfigError("--threads", "must be at least 1 (0: all cores)");
    return threads > 0 ? threads
                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

/// The RangeLoop of a runtime: core kernels see a loop, not a threads library.
lda::RangeLoop loop_of(sched::Runtime& runtime) {
    return [&runtime](std::int64_t begin, std::int64_t end,
                      const std::function<void(std::int64_t, std::int64_t)>& body) {
        if (begin < end) runtime.parallel_for(begin, end, body);
    };
}

/// The model's vocabulary as a lookup table (none when the model was saved without one).
std::optional<core::Vocabulary> model_vocabulary(const lda::LdaModel& model,
                                                 const std::string& dir) {
    if (model.vocab.empty()) return std::nullopt;
    return core::Vocabulary::from_words(model.vocab, dir + "/vocab.txt");
}

/// The share of `m`'s input tokens skipped as unknown (0 for no tokens).
double skipped_share(const lda::MappedCorpus& m) {
    return m.input_tokens == 0
               ? 0.0
               : static_cast<double>(m.skipped_tokens) / static_cast<double>(m.input_tokens);
}

/// eval and infer --corpus: a corpus whose words the model mostly does not know (another
/// vocabulary, a wrong --vocab) gives a perplexity of the few tokens left that looks far better
/// than the model is, and proportions of a handful of words; above the threshold it is refused
/// unless the user allows it.
void check_skipped_share(bool allow_oov, const std::string& corpus, const lda::MappedCorpus& m) {
    const double share = skipped_share(m);
    if (allow_oov || share <= EvalFlags::kMaxSkippedShare) return;
    throw InputError(corpus,
                     fmt::format("{:.1f}% of its tokens ({} of {}, {} distinct words) are of words "
                                 "the model does not know, more than {:.0f}%: a corpus of another "
                                 "vocabulary (or the wrong --vocab)? Give --allow-oov to use the "
                                 "rest anyway",
                                 100 * share, m.skipped_tokens, m.input_tokens, m.unknown_words,
                                 100 * EvalFlags::kMaxSkippedShare));
}

void print_skipped(const char* command, const lda::MappedCorpus& m) {
    std::fprintf(stderr, "rotor: lda %s: skipped %llu tokens of %llu unknown words\n", command,
                 static_cast<unsigned long long>(m.skipped_tokens),
                 static_cast<unsigned long long>(m.unknown_words));
}

/// The distinct words of a corpus, ascending.
std::vector<WordId> distinct_words(const core::Corpus& corpus) {
    std::vector<std::uint8_t> used(corpus.num_words(), 0);
    for (const WordId w : corpus.word_ids()) used[w] = 1;
    std::vector<WordId> out;
    for (WordId w = 0; w < used.size(); ++w)
        if (used[w] != 0) out.push_back(w);
    return out;
}

}  // namespace

namespace {

/// Infer's documents in the model's word ids, their names (empty: by label) and how they mapped.
struct InferInput {
    core::Corpus corpus;
    std::vector<std::string> names;
    InferSummary summary;
};

/// --text: a file (one document per line) or a folder of .txt files, tokenized as corpus build
/// does, onto the model's vocabulary.
InferInput read_infer_text(const InferFlags& flags, const core::Vocabulary* model_vocab) {
    if (model_vocab == nullptr)
        throw InputError(flags.model, "has no vocabulary: --text needs the model's words");
    core::TextOptions opt;
    opt.min_len = 1;  // every vocabulary word can match: the build's bounds made the vocabulary
    opt.max_len = 255;
    opt.pattern = core::parse_token_pattern(flags.token_pattern);
    opt.fixed_vocab = model_vocab;
    core::TextReport report;
    InferInput in;
    std::error_code ec;
    if (std::filesystem::is_directory(flags.text, ec)) {
        const std::vector<std::string> files = core::list_text_files(flags.text);
        in.corpus = core::read_text_files(files, opt, nullptr, &report);
        for (const std::uint64_t label : in.corpus.doc_labels())
            in.names.push_back(
                core::clean_doc_name(std::filesystem::path(files[label - 1]).filename().string()));
    } else {
        in.corpus = core::read_text(flags.text, opt, nullptr, &report);
    }
    in.summary.input_tokens = report.tokens_read;
    in.summary.skipped_tokens = report.tokens_read - in.corpus.num_tokens();
    in.summary.empty_docs = report.docs_emptied;
    return in;
}

/// --corpus: a binary corpus or UCI docword, mapped onto the model's vocabulary by string.
InferInput read_infer_corpus(const InferFlags& flags, const lda::LdaModel& model,
                             const core::Vocabulary* model_vocab) {
    core::LoadedCorpus loaded =
        core::load_corpus(flags.corpus, flags.vocab, train::corpus_limits(""));
    lda::MappedCorpus mapped =
        lda::map_to_model(loaded.corpus, loaded.vocab ? &*loaded.vocab : nullptr, model_vocab,
                          model.info.num_words, flags.corpus);
    check_skipped_share(flags.allow_oov, flags.corpus, mapped);
    InferInput in;
    for (DocId d = 0; d < mapped.corpus.num_docs(); ++d)
        if (mapped.corpus.doc_length(d) == 0 && loaded.corpus.doc_length(d) > 0)
            ++in.summary.empty_docs;
    in.corpus = std::move(mapped.corpus);
    in.names = std::move(loaded.doc_names);
    in.summary.input_tokens = mapped.input_tokens;
    in.summary.skipped_tokens = mapped.skipped_tokens;
    in.summary.unknown_words = mapped.unknown_words;
    return in;
}

void warn_infer_input(const InferFlags& flags, const InferSummary& s) {
    if (flags.text.empty()) {
        fmt::print(stderr, "rotor: lda infer: skipped {} tokens of {} unknown words\n",
                   s.skipped_tokens, s.unknown_words);
    } else if (s.skipped_tokens > 0) {
        fmt::print(stderr, "rotor: lda infer: skipped {} of {} not in the model's vocabulary\n",
                   plural(s.skipped_tokens, "token"), s.input_tokens);
    }
    if (s.empty_docs > 0)
        fmt::print(stderr, "rotor: lda infer: warning: {} no word of the model's vocabulary{}\n",
                   plural(s.empty_docs, "document has", "documents have"),
                   flags.text.empty() ? ": their proportions are the prior's"
                                      : ": left out of the output");
}

void check_infer_flags(const InferFlags& flags) {
    if (flags.corpus.empty() == flags.text.empty())
        throw ConfigError("--corpus", "give exactly one of --corpus and --text");
    if (!flags.text.empty() && !flags.vocab.empty())
        throw ConfigError("--vocab", "goes with --corpus; --text uses the model's vocabulary");
    if (flags.out.empty() && flags.doc_topics.empty())
        throw ConfigError("--out", "give --out, --doc-topics or both");
    core::parse_token_pattern(flags.token_pattern);
    flags.fold_in.validate();
}

}  // namespace

InferSummary run_infer(const InferFlags& flags) {
    check_infer_flags(flags);
    const int threads = resolve_threads(flags.threads);
    const lda::LdaModel model = lda::load_model(flags.model);
    const auto model_vocab = model_vocabulary(model, flags.model);
    const core::Vocabulary* vocab = model_vocab ? &*model_vocab : nullptr;
    InferInput in =
        flags.text.empty() ? read_infer_corpus(flags, model, vocab) : read_infer_text(flags, vocab);
    warn_infer_input(flags, in.summary);

    const std::vector<double>& alpha = model.info.alpha;
    const std::size_t k_count = model.info.num_topics;
    const core::Corpus& corpus = in.corpus;
    const auto labels = corpus.doc_labels();
    if (model.word_topic.rows() != model.info.num_words)
        throw InputError(flags.model, "word-topic rows do not match V in params.json");

    // Inference is embarrassingly parallel over documents: no pinning needed.
    sched::Runtime runtime(threads, sched::PinMode::kNone);
    const lda::RangeLoop loop = loop_of(runtime);

    // φ rows and the sparse fold-in tables only for the words the input uses: memory follows
    // the input, not the model's V.
    const std::vector<WordId> words = distinct_words(corpus);
    const lda::TopicWordDistribution phi =
        lda::phi_from_counts(model.word_topic, model.topic_totals, model.info.beta, words);
    const lda::FoldInTables tables(phi, alpha, words, loop);

    // Documents in chunks, so memory is O(chunk · K) whatever D is; each chunk is inferred in
    // parallel and then written in document order.
    constexpr DocId kChunk = 4096;
    std::vector<double> theta(static_cast<std::size_t>(kChunk) * k_count);
    std::optional<core::AtomicFile> out;
    std::optional<core::AtomicFile> wide;
    if (!flags.out.empty()) out.emplace(flags.out);
    if (!flags.doc_topics.empty()) {
        wide.emplace(flags.doc_topics);
        wide->write(lda::doc_topics_header(model.info.num_topics));
    }
    fmt::memory_buffer buf;
    std::string rows;
    for (DocId first = 0; first < corpus.num_docs(); first += kChunk) {
        const DocId n = std::min<DocId>(kChunk, corpus.num_docs() - first);
        loop(0, n, [&](std::int64_t lo, std::int64_t hi) {
            lda::FoldInSampler sampler(tables);
            for (auto i = lo; i < hi; ++i) {
                const DocId d = first + static_cast<DocId>(i);
                Rng rng = Rng::from({flags.fold_in.seed, labels[d]});
                sampler.infer(corpus.doc(d), flags.fold_in, rng,
                              std::span<double>(theta).subspan(i * k_count, k_count));
            }
        });
        buf.clear();
        rows.clear();
        for (DocId i = 0; i < n; ++i) {
            const std::string name = core::doc_name(in.names, labels, first + i);
            const std::span<const double> t(theta.data() + i * k_count, k_count);
            if (wide) lda::append_doc_topics_row(rows, name, t);
            for (std::size_t k = 0; out && k < k_count; ++k) {
                if (flags.dense || t[k] >= InferFlags::kMinTheta)
                    fmt::format_to(std::back_inserter(buf), "{}\t{}\t{:.6g}\n", name, k, t[k]);
            }
        }
        if (out) out->write(std::string_view(buf.data(), buf.size()));
        if (wide) wide->write(rows);
    }
    if (out) out->commit();
    if (wide) wide->commit();

    InferSummary s = in.summary;
    s.docs = corpus.num_docs();
    return s;
}

EvalSummary run_eval(const EvalFlags& flags) {
    if (flags.model.empty() == flags.phi.empty())
        throw ConfigError("--model", "give exactly one of --model and --phi");
    if (!flags.model.empty() && (flags.alpha > 0 || flags.beta != 0))
        throw ConfigError("--alpha", "--alpha and --beta go with --phi; a model has its own");
    if (!(flags.beta >= 0) || !std::isfinite(flags.beta))
        throw ConfigError("--beta", "must be a finite number >= 0");
    if (!std::isfinite(flags.alpha)) throw ConfigError("--alpha", "must be a finite number");
    flags.fold_in.validate();
    const int threads = resolve_threads(flags.threads);

    const core::LoadedCorpus loaded =
        core::load_corpus(flags.corpus, flags.vocab, train::corpus_limits(""));
    const core::Vocabulary* corpus_vocab = loaded.vocab ? &*loaded.vocab : nullptr;
    sched::Runtime runtime(threads, sched::PinMode::kNone);
    const lda::RangeLoop loop = loop_of(runtime);

    EvalSummary s;
    std::optional<lda::MappedCorpus> mapped;
    if (!flags.model.empty()) {
        const lda::LdaModel model = lda::load_model(flags.model);
        const auto model_vocab = model_vocabulary(model, flags.model);
        mapped =
            lda::map_to_model(loaded.corpus, corpus_vocab, model_vocab ? &*model_vocab : nullptr,
                              model.info.num_words, flags.corpus);
        print_skipped("eval", *mapped);
        check_skipped_share(flags.allow_oov, flags.corpus, *mapped);
        const lda::HeldoutEvaluator evaluator(mapped->corpus, flags.fold_in);
        s.result = evaluator.evaluate(model, loop);
        s.num_topics = model.info.num_topics;
    } else {
        if (corpus_vocab == nullptr)
            throw InputError(flags.corpus,
                             "has no vocabulary; --phi matches words by string: pass --vocab");
        // With --beta > 0 the corpus's words that the file lacks are scored by smoothing alone
        // (and count in V); with β = 0 they would have probability 0, so they are unknown.
        const lda::PhiFile file = lda::read_phi_tsv(flags.phi, flags.beta, corpus_vocab);
        mapped = lda::map_to_model(loaded.corpus, corpus_vocab, &file.vocab, file.vocab.size(),
                                   flags.corpus);
        print_skipped("eval", *mapped);
        if (flags.beta == 0 && mapped->skipped_tokens > 0)
            std::fprintf(stderr,
                         "rotor: lda eval: (words absent from %s, or with zero weight, are "
                         "unknown with --beta 0; give --beta > 0 to score them by smoothing)\n",
                         flags.phi.c_str());
        check_skipped_share(flags.allow_oov, flags.corpus, *mapped);
        s.phi_words = file.vocab.size();
        s.smoothing_only_words = 0;
        {
            std::vector<std::uint8_t> seen(file.vocab.size(), 0);
            for (const WordId w : mapped->corpus.word_ids()) {
                if (w < file.file_words) continue;
                ++s.smoothing_only_tokens;
                if (seen[w] == 0) {
                    seen[w] = 1;
                    ++s.smoothing_only_words;
                }
            }
        }
        if (s.smoothing_only_tokens > 0)
            std::fprintf(stderr,
                         "rotor: lda eval: %llu tokens of %llu words absent from %s are scored "
                         "by smoothing only (--beta %g; V = %u)\n",
                         static_cast<unsigned long long>(s.smoothing_only_tokens),
                         static_cast<unsigned long long>(s.smoothing_only_words), flags.phi.c_str(),
                         flags.beta, file.vocab.size());
        const std::uint32_t k_count = file.phi.num_topics();
        const double a = flags.alpha > 0 ? flags.alpha : 50.0 / k_count;
        const std::vector<double> alpha(k_count, a);
        const lda::HeldoutEvaluator evaluator(mapped->corpus, flags.fold_in);
        s.result = evaluator.evaluate(file.phi, alpha, loop);
        s.num_topics = k_count;
    }
    s.input_tokens = mapped->input_tokens;
    s.skipped_tokens = mapped->skipped_tokens;
    s.unknown_words = mapped->unknown_words;
    s.skipped_share = skipped_share(*mapped);
    return s;
}

namespace {

void add_infer(CLI::App& lda) {
    auto f = std::make_shared<InferFlags>();
    auto* c = lda.add_subcommand(
        "infer", "Topic proportions of new documents by Gibbs fold-in with the model fixed");
    c->add_option("--model", f->model, "Model directory")->required();
    c->add_option("--corpus", f->corpus, "New documents: rotor binary corpus or UCI docword");
    c->add_option("--vocab", f->vocab, "The corpus's vocabulary (default: beside the corpus)");
    c->add_option("--text", f->text,
                  "Instead of --corpus: raw text, a file (one document per line) or a folder of "
                  ".txt files (one document each), read with the model's vocabulary");
    c->add_option("--token-pattern", f->token_pattern,
                  "With --text: what a token is, as given to corpus build (letters, alnum, "
                  "unicode)")
        ->capture_default_str();
    c->add_option("--out", f->out, "Output TSV: doc<TAB>topic<TAB>theta");
    c->add_option("--doc-topics", f->doc_topics,
                  "Output TSV: a header, then one row per document: its name and K proportions");
    c->add_option("--iterations,-n", f->fold_in.iterations, "Gibbs sweeps per document")
        ->capture_default_str();
    c->add_option("--burn-in", f->fold_in.burn_in, "Sweeps not averaged into theta")
        ->capture_default_str();
    c->add_option("--seed", f->fold_in.seed, "Random seed (per document: seed, doc label)")
        ->capture_default_str();
    c->add_option("--threads,-t", f->threads, "Worker threads (default: all cores)");
    c->add_flag("--dense", f->dense, "Write every topic, not only theta >= 1e-4");
    c->add_flag("--allow-oov", f->allow_oov,
                "--corpus: infer even when more than 5% of its tokens are of words the model "
                "does not know (a corpus of another vocabulary?)");
    c->callback([f] {
        const InferSummary s = run_infer(*f);
        const std::string where = f->out.empty()          ? f->doc_topics
                                  : f->doc_topics.empty() ? f->out
                                                          : f->out + " and " + f->doc_topics;
        fmt::print(stderr, "rotor: lda infer: {} written to {}\n", plural(s.docs, "document"),
                   where);
    });
}

void add_eval(CLI::App& lda) {
    auto f = std::make_shared<EvalFlags>();
    auto* c = lda.add_subcommand(
        "eval", "Held-out document completion: log-likelihood per token and perplexity");
    c->add_option("--model", f->model, "Model directory");
    c->add_option("--phi", f->phi,
                  "Instead of --model: word<TAB>topic<TAB>weight rows (normalised per topic)");
    c->add_option("--corpus", f->corpus, "Held-out documents: binary corpus or UCI docword")
        ->required();
    c->add_option("--vocab", f->vocab, "The corpus's vocabulary (default: beside the corpus)");
    c->add_option("--alpha", f->alpha, "With --phi: symmetric prior on theta (default 50/K)");
    c->add_option("--beta", f->beta, "With --phi: smoothing added to every weight")
        ->capture_default_str();
    c->add_option("--iterations,-n", f->fold_in.iterations, "Gibbs fold-in sweeps per document")
        ->capture_default_str();
    c->add_option("--burn-in", f->fold_in.burn_in, "Sweeps not averaged into theta")
        ->capture_default_str();
    c->add_option("--seed", f->fold_in.seed, "Random seed")->capture_default_str();
    c->add_option("--threads,-t", f->threads, "Worker threads (default: all cores)");
    c->add_flag("--allow-oov", f->allow_oov,
                "Score the known words even when more than 5% of the corpus's tokens are of "
                "words the model does not know (refused otherwise)");
    c->callback([f] {
        const EvalSummary s = run_eval(*f);
        nlohmann::ordered_json j;
        j["topics"] = s.num_topics;
        j["heldout_docs"] = s.result.docs;
        j["heldout_fit_tokens"] = s.result.fit_tokens;
        j["heldout_tokens"] = s.result.scored_tokens;
        j["skipped_tokens"] = s.skipped_tokens;
        j["unknown_words"] = s.unknown_words;
        if (!f->phi.empty()) {
            j["phi_words"] = s.phi_words;
            j["smoothing_only_tokens"] = s.smoothing_only_tokens;
            j["smoothing_only_words"] = s.smoothing_only_words;
        }
        j["heldout_loglik"] = s.result.loglik;
        j["heldout_loglik_per_token"] = s.result.loglik_per_token();
        j["heldout_perplexity"] = s.result.perplexity();
        j["skipped_share"] = s.skipped_share;  // beside the figure: of how much it speaks
        fmt::print("{}\n", j.dump());
    });
}

void add_coherence(CLI::App& lda) {
    struct Flags {
        std::string model, corpus, vocab;
        std::size_t top = 10;
    };
    auto f = std::make_shared<Flags>();
    auto* c =
        lda.add_subcommand("coherence", "UMass coherence of every topic's top words on a corpus");
    c->add_option("--model", f->model, "Model directory")->required();
    c->add_option("--corpus", f->corpus, "The training corpus (document co-occurrence)")
        ->required();
    c->add_option("--vocab", f->vocab, "The corpus's vocabulary (default: beside the corpus)");
    c->add_option("--top", f->top, "Words per topic")->capture_default_str();
    c->callback([f] {
        if (f->top < 2) throw ConfigError("--top", "must be at least 2");
        const lda::LdaModel model = lda::load_model(f->model);
        const auto model_vocab = model_vocabulary(model, f->model);
        const core::LoadedCorpus loaded =
            core::load_corpus(f->corpus, f->vocab, train::corpus_limits(""));
        const lda::MappedCorpus mapped = lda::map_to_model(
            loaded.corpus, loaded.vocab ? &*loaded.vocab : nullptr,
            model_vocab ? &*model_vocab : nullptr, model.info.num_words, f->corpus);
        std::vector<std::vector<WordId>> top;
        for (const auto& t : lda::top_words(model, f->top)) {
            top.emplace_back();
            for (const auto& [w, p] : t.words) top.back().push_back(w);
        }
        lda::Coherence coh;
        try {
            coh = lda::umass_coherence(mapped.corpus, top);
        } catch (const InputError& e) {
            throw InputError(f->corpus, e.detail());  // name the file, not "<corpus>"
        }
        fmt::print("topic\tumass\twords\n");
        for (std::size_t t = 0; t < top.size(); ++t) {
            std::string words;
            for (const WordId w : top[t])
                words += (words.empty() ? "" : " ") +
                         (w < model.vocab.size() ? model.vocab[w] : fmt::format("#{}", w));
            fmt::print("{}\t{:.4f}\t{}\n", t, coh.per_topic[t], words);
        }
        fmt::print("mean\t{:.4f}\n", coh.mean);
    });
}

}  // namespace

void add_lda_use_commands(CLI::App& lda) {
    add_infer(lda);
    add_eval(lda);
    add_coherence(lda);
}

}  // namespace rotor::apps
