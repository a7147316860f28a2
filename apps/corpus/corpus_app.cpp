#include "apps/corpus/corpus_app.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <numeric>
#include <ostream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "core/base/error.h"
#include "core/base/plural.h"
#include "core/base/timer.h"
#include "core/corpus/corpus.h"
#include "core/corpus/doc_names.h"
#include "core/corpus/text_corpus.h"
#include "core/corpus/uci_writer.h"
#include "core/io/atomic_file.h"
#include "core/io/line_reader.h"
#include "core/io/parse.h"
#include "train/memory_plan.h"

namespace rotor::apps {
namespace {

bool single_uint_line(std::string_view line) {
    std::size_t pos = 0;
    std::uint64_t v = 0;
    if (core::parse_uint(line, pos, v) != core::ParseStatus::kOk) return false;
    return core::skip_blanks(line, pos) == line.size();
}

void make_dirs(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw SystemError("cannot create directory " + dir + ": " + ec.message());
}

}  // namespace

void CorpusBuildParams::validate() const {
    if (input.empty()) throw ConfigError("--corpus", "is required");
    if (out.empty()) throw ConfigError("--out", "is required");
    if (format != "auto" && format != "text" && format != "uci" && format != "binary") {
        throw ConfigError("--format", "must be auto, text, uci or binary, not '" + format + "'");
    }
    if (no_stopwords && !stopwords.empty()) {
        throw ConfigError("--no-stopwords", "cannot be combined with --stopwords");
    }
    if (no_stopwords && !stopwords_add.empty()) {
        throw ConfigError("--no-stopwords", "cannot be combined with --stopwords-add");
    }
    core::parse_token_pattern(token_pattern);
}

std::string detect_corpus_format(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return "files";
    if (core::is_binary_corpus(path)) return "binary";
    core::LineReader reader(path);
    std::string_view line;
    for (int i = 0; i < 3; ++i) {
        if (!reader.next(line) || !single_uint_line(line)) return "text";
    }
    return "uci";
}

namespace {

/// The stop words a text build drops: none, a file's, or the built-in list; plus --stopwords-add.
core::StopWords build_stopwords(const CorpusBuildParams& params) {
    if (params.no_stopwords) return {};
    core::StopWords words = params.stopwords.empty() ? core::default_stopwords()
                                                     : core::load_stopwords(params.stopwords);
    for (const std::string& file : params.stopwords_add) words.merge(core::load_stopwords(file));
    return words;
}

/// A text file or a folder of text files: the corpus, its vocabulary and, for a folder, the
/// names of the documents kept.
core::Corpus read_text_input(const CorpusBuildParams& params, const std::string& format,
                             core::Vocabulary& vocab, std::vector<std::string>& names,
                             std::ostream& err) {
    core::TextOptions opt;
    opt.min_df = params.min_df;
    opt.max_df = params.max_df;
    opt.min_len = params.min_len;
    opt.max_len = params.max_len;
    opt.max_vocab = params.max_vocab;
    opt.pattern = core::parse_token_pattern(params.token_pattern);
    const core::StopWords stopwords = build_stopwords(params);
    opt.stopwords = params.no_stopwords ? nullptr : &stopwords;
    std::optional<core::Vocabulary> fixed;
    if (!params.vocab.empty()) {
        fixed = core::Vocabulary::load(params.vocab);
        opt.fixed_vocab = &*fixed;
    }
    opt.validate();
    core::TextReport report;
    core::Corpus corpus;
    if (format == "files") {
        const std::vector<std::string> files = core::list_text_files(params.input);
        corpus = core::read_text_files(files, opt, &vocab, &report);
        for (const std::uint64_t label : corpus.doc_labels()) {
            const std::filesystem::path p(files[label - 1]);
            names.push_back(core::clean_doc_name(p.filename().string()));
        }
    } else {
        corpus = core::read_text(params.input, opt, &vocab, &report);
    }
    if (report.docs_emptied > 0)
        fmt::print(err, "rotor: corpus build: warning: {} of {} left empty by pruning, dropped\n",
                   plural(report.docs_emptied, "document"), report.docs_with_tokens);
    return corpus;
}

}  // namespace

void run_corpus_build(const CorpusBuildParams& params, std::ostream& out, std::ostream& err) {
    params.validate();
    Stopwatch timer;
    const std::string format =
        params.format == "auto" ? detect_corpus_format(params.input) : params.format;
    const bool text = format == "text" || format == "files";
    if (!text && std::filesystem::is_directory(params.input))
        throw ConfigError("--format", "a folder is read as text files, not " + format);

    core::Corpus corpus;
    std::optional<core::Vocabulary> vocab;
    std::vector<std::string> names;
    if (text) {
        core::Vocabulary v;
        corpus = read_text_input(
            params, std::filesystem::is_directory(params.input) ? "files" : format, v, names, err);
        vocab = std::move(v);
    } else {
        core::LoadedCorpus loaded =
            core::load_corpus(params.input, params.vocab, train::corpus_limits(""));
        corpus = std::move(loaded.corpus);
        vocab = std::move(loaded.vocab);
        names = std::move(loaded.doc_names);
    }
    const double read_s = timer.seconds();

    // Write every file to its temporary name first, commit them only when all are written.
    if (!params.uci_out.empty()) {
        make_dirs(params.uci_out);
        core::save_uci(corpus, vocab ? &*vocab : nullptr, params.uci_out + "/docword.txt.gz",
                       params.uci_out + "/vocab.txt");
    }
    if (vocab) vocab->save(core::binary_vocab_path(params.out));
    // Names or none: a names file left from an earlier build would name other documents.
    const std::string names_path = core::doc_names_path(params.out);
    if (!names.empty()) {
        core::save_doc_names(names, names_path);
    } else {
        std::error_code ec;
        std::filesystem::remove(names_path, ec);
    }
    core::save_binary_corpus(corpus, params.out);
    fmt::print(out, "{}: {}, {}, {} ({} input, read in {:.2f} s, total {:.2f} s)\n", params.out,
               plural(corpus.num_docs(), "doc"), plural(corpus.num_words(), "word"),
               plural(corpus.num_tokens(), "token"), format, read_s, timer.seconds());
}

void run_corpus_info(const CorpusInfoParams& params, std::ostream& out) {
    if (params.corpus.empty()) throw ConfigError("--corpus", "is required");
    Stopwatch timer;
    const core::LoadedCorpus loaded =
        core::load_corpus(params.corpus, params.vocab, train::corpus_limits(""));
    const double load_s = timer.seconds();
    const core::Corpus& c = loaded.corpus;

    std::vector<TokenIndex> lengths(c.num_docs());
    for (DocId d = 0; d < c.num_docs(); ++d) lengths[d] = c.doc_length(d);
    const auto empty = std::count(lengths.begin(), lengths.end(), TokenIndex{0});
    std::sort(lengths.begin(), lengths.end());

    fmt::print(out, "corpus       {} ({}, loaded in {:.3f} s)\n", params.corpus, loaded.format,
               load_s);
    fmt::print(out, "docs         {}\n", c.num_docs());
    fmt::print(out, "vocabulary   {}{}\n", c.num_words(),
               loaded.vocab ? "" : " (no vocabulary file)");
    fmt::print(out, "tokens       {}\n", c.num_tokens());
    if (!lengths.empty()) {
        const std::size_t n = lengths.size();
        const double median = n % 2 == 1
                                  ? static_cast<double>(lengths[n / 2])
                                  : 0.5 * static_cast<double>(lengths[n / 2 - 1] + lengths[n / 2]);
        fmt::print(out, "doc length   min {}  median {}  mean {:.1f}  max {}\n", lengths.front(),
                   median, static_cast<double>(c.num_tokens()) / static_cast<double>(n),
                   lengths.back());
    }
    fmt::print(out, "empty docs   {}\n", empty);
    if (!loaded.doc_names.empty())
        fmt::print(out, "doc names    {} (first: {})\n", core::doc_names_path(params.corpus),
                   loaded.doc_names.front());

    const std::vector<TotalCount> freq = c.word_frequencies();
    std::vector<WordId> order(freq.size());
    std::iota(order.begin(), order.end(), WordId{0});
    const std::size_t top = std::min<std::size_t>(params.top, order.size());
    std::partial_sort(
        order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
        [&](WordId a, WordId b) { return freq[a] != freq[b] ? freq[a] > freq[b] : a < b; });
    if (top > 0) fmt::print(out, "top {}:\n", plural(top, "word"));
    for (std::size_t i = 0; i < top; ++i) {
        const WordId w = order[i];
        const std::string word = loaded.vocab ? loaded.vocab->word(w) : fmt::format("#{}", w + 1);
        fmt::print(out, "  {:>4}  {:<24} {}\n", i + 1, word, freq[w]);
    }
}

}  // namespace rotor::apps
