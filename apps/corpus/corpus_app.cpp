#include "apps/corpus/corpus_app.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <ostream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "core/base/error.h"
#include "core/base/timer.h"
#include "core/corpus/binary_format.h"
#include "core/corpus/corpus.h"
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
    if (input.empty()) throw ConfigError("--input", "is required");
    if (out.empty()) throw ConfigError("--out", "is required");
    if (format != "auto" && format != "text" && format != "uci" && format != "binary") {
        throw ConfigError("--format", "must be auto, text, uci or binary, not '" + format + "'");
    }
    if (no_stopwords && !stopwords.empty()) {
        throw ConfigError("--no-stopwords", "cannot be combined with --stopwords");
    }
}

std::string detect_corpus_format(const std::string& path) {
    {
        std::ifstream in(path, std::ios::binary);
        char magic[8] = {};
        in.read(magic, sizeof magic);
        if (in.gcount() == sizeof magic && std::memcmp(magic, core::detail::kCorpusMagic, 8) == 0) {
            return "binary";
        }
    }
    core::LineReader reader(path);
    std::string_view line;
    for (int i = 0; i < 3; ++i) {
        if (!reader.next(line) || !single_uint_line(line)) return "text";
    }
    return "uci";
}

void run_corpus_build(const CorpusBuildParams& params, std::ostream& out) {
    params.validate();
    Stopwatch timer;
    const std::string format =
        params.format == "auto" ? detect_corpus_format(params.input) : params.format;

    core::Corpus corpus;
    std::optional<core::Vocabulary> vocab;
    if (format == "text") {
        core::TextOptions opt;
        opt.min_df = params.min_df;
        opt.min_len = params.min_len;
        opt.max_len = params.max_len;
        opt.max_vocab = params.max_vocab;
        core::StopWords custom;
        if (params.no_stopwords) {
            opt.stopwords = nullptr;
        } else if (!params.stopwords.empty()) {
            custom = core::load_stopwords(params.stopwords);
            opt.stopwords = &custom;
        }
        std::optional<core::Vocabulary> fixed;
        if (!params.vocab.empty()) {
            fixed = core::Vocabulary::load(params.vocab);
            opt.fixed_vocab = &*fixed;
        }
        opt.validate();
        core::Vocabulary v;
        corpus = core::read_text(params.input, opt, &v);
        vocab = std::move(v);
    } else {
        core::LoadedCorpus loaded =
            core::load_corpus(params.input, params.vocab, train::corpus_limits(""));
        corpus = std::move(loaded.corpus);
        vocab = std::move(loaded.vocab);
    }
    const double read_s = timer.seconds();

    // Write every file to its temporary name first, commit them only when all are written.
    if (!params.uci_out.empty()) {
        make_dirs(params.uci_out);
        core::save_uci(corpus, vocab ? &*vocab : nullptr, params.uci_out + "/docword.txt.gz",
                       params.uci_out + "/vocab.txt");
    }
    if (vocab) vocab->save(core::binary_vocab_path(params.out));
    core::save_binary_corpus(corpus, params.out);
    fmt::print(out,
               "{}: {} docs, {} words, {} tokens ({} input, read in {:.2f} s, total {:.2f} s)\n",
               params.out, corpus.num_docs(), corpus.num_words(), corpus.num_tokens(), format,
               read_s, timer.seconds());
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

    const std::vector<TotalCount> freq = c.word_frequencies();
    std::vector<WordId> order(freq.size());
    std::iota(order.begin(), order.end(), WordId{0});
    const std::size_t top = std::min<std::size_t>(params.top, order.size());
    std::partial_sort(
        order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
        [&](WordId a, WordId b) { return freq[a] != freq[b] ? freq[a] > freq[b] : a < b; });
    if (top > 0) fmt::print(out, "top {} words:\n", top);
    for (std::size_t i = 0; i < top; ++i) {
        const WordId w = order[i];
        const std::string word = loaded.vocab ? loaded.vocab->word(w) : fmt::format("#{}", w + 1);
        fmt::print(out, "  {:>4}  {:<24} {}\n", i + 1, word, freq[w]);
    }
}

}  // namespace rotor::apps
