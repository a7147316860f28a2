#include "core/lda/inference.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "core/base/error.h"
#include "core/io/line_reader.h"
#include "core/lda/lda_params.h"
#include "core/lda/word_topic_table.h"

namespace rotor::lda {

// ---------------------------------------------------------------------------------------------
// TopicWordDistribution

TopicWordDistribution::TopicWordDistribution(WordId num_words, std::span<const double> totals,
                                             double beta)
    : num_words_(num_words), smooth_(totals.size()), inv_denom_(totals.size()) {
    ROTOR_ASSERT(beta >= 0, "negative beta");
    for (std::size_t k = 0; k < totals.size(); ++k) {
        const double denom = totals[k] + static_cast<double>(num_words) * beta;
        ROTOR_ASSERT(totals[k] >= 0 && denom > 0, "topic with no mass and no smoothing");
        inv_denom_[k] = 1.0 / denom;
        smooth_[k] = beta * inv_denom_[k];
    }
    offsets_.reserve(static_cast<std::size_t>(num_words) + 1);
}

void TopicWordDistribution::append_row(WordId w, std::span<const std::pair<TopicId, double>> row) {
    ROTOR_ASSERT(w >= rows_done_ && w < num_words_, "rows must be appended in increasing order");
    while (rows_done_ < w) {
        offsets_.push_back(topics_.size());
        ++rows_done_;
    }
    for (const auto& [k, c] : row) {
        ROTOR_ASSERT(k < smooth_.size() && c > 0, "bad topic-word weight");
        topics_.push_back(k);
        values_.push_back(c * inv_denom_[k]);
    }
    offsets_.push_back(topics_.size());
    ++rows_done_;
}

std::span<const TopicId> TopicWordDistribution::row_topics(WordId w) const {
    if (w >= rows_done_) return {};
    return std::span<const TopicId>(topics_).subspan(offsets_[w], offsets_[w + 1] - offsets_[w]);
}

std::span<const double> TopicWordDistribution::row_values(WordId w) const {
    if (w >= rows_done_) return {};
    return std::span<const double>(values_).subspan(offsets_[w], offsets_[w + 1] - offsets_[w]);
}

double TopicWordDistribution::phi(WordId w, TopicId k) const {
    const auto topics = row_topics(w);
    const auto values = row_values(w);
    double p = smooth_[k];
    for (std::size_t i = 0; i < topics.size(); ++i)
        if (topics[i] == k) p += values[i];
    return p;
}

// ---------------------------------------------------------------------------------------------
// Builders

namespace {

std::vector<double> to_double(std::span<const TotalCount> totals) {
    return {totals.begin(), totals.end()};
}

}  // namespace

TopicWordDistribution phi_from_counts(const SparseCounts& word_topic,
                                      std::span<const TotalCount> topic_totals, double beta,
                                      std::span<const WordId> words) {
    const auto totals = to_double(topic_totals);
    TopicWordDistribution phi(static_cast<WordId>(word_topic.rows()), totals, beta);
    std::vector<std::pair<TopicId, double>> row;
    for (const WordId w : words) {
        ROTOR_ASSERT(w < word_topic.rows(), "word id out of range");
        row.clear();
        for (auto i = word_topic.offsets[w]; i < word_topic.offsets[w + 1]; ++i)
            row.emplace_back(word_topic.topics[i], static_cast<double>(word_topic.counts[i]));
        phi.append_row(w, row);
    }
    return phi;
}

TopicWordDistribution phi_from_model(const LdaModel& model) {
    ROTOR_ASSERT(model.word_topic.rows() == model.info.num_words, "word_topic rows != V");
    std::vector<WordId> all(model.info.num_words);
    std::iota(all.begin(), all.end(), WordId{0});
    return phi_from_counts(model.word_topic, model.topic_totals, model.info.beta, all);
}

TopicWordDistribution phi_from_table(const WordTopicTable& table,
                                     std::span<const TotalCount> topic_totals, double beta,
                                     std::span<const WordId> words) {
    const auto totals = to_double(topic_totals);
    TopicWordDistribution phi(table.num_words(), totals, beta);
    std::vector<std::pair<TopicId, double>> row;
    for (const WordId w : words) {
        row.clear();
        table.for_each_nonzero(
            w, [&](TopicId k, Count c) { row.emplace_back(k, static_cast<double>(c)); });
        phi.append_row(w, row);
    }
    return phi;
}

namespace {

/// One row of a φ file.
struct PhiEntry {
    std::uint32_t word;  // index into PhiRows::names
    TopicId topic;
    double weight;
    std::uint64_t line;
};

/// The rows of a φ file as read: its distinct words in order of first appearance, and one
/// entry per row.
struct PhiRows {
    std::vector<std::string> names;
    std::unordered_map<std::string, std::uint32_t, core::detail::StringHash, std::equal_to<>>
        index;  // word -> index into names
    std::vector<PhiEntry> entries;
    TopicId max_topic = 0;
};

/// The three fields of one row; `word` points into the line.
struct PhiFields {
    std::string_view word;
    TopicId topic;
    double weight;
};

/// Parses "word<TAB>topic<TAB>weight". Throws InputError (through reader.fail) on anything else.
PhiFields parse_phi_line(const core::LineReader& reader, std::string_view line) {
    const std::size_t t1 = line.find('\t');
    const std::size_t t2 = t1 == std::string_view::npos ? t1 : line.find('\t', t1 + 1);
    if (t2 == std::string_view::npos || line.find('\t', t2 + 1) != std::string_view::npos)
        reader.fail(1, "expected 3 tab-separated fields: word, topic, weight");
    const std::string_view word = line.substr(0, t1);
    const std::string_view topic_text = line.substr(t1 + 1, t2 - t1 - 1);
    const std::string_view weight_text = line.substr(t2 + 1);
    if (word.empty()) reader.fail(1, "empty word");

    std::uint64_t topic = 0;
    const auto [tp, tec] =
        std::from_chars(topic_text.data(), topic_text.data() + topic_text.size(), topic);
    if (topic_text.empty() || tec != std::errc() || tp != topic_text.data() + topic_text.size())
        reader.fail(t1 + 2, fmt::format("topic '{}' is not a non-negative integer", topic_text));
    if (topic >= kMaxTopics)
        reader.fail(t1 + 2, fmt::format("topic {} is not below {}", topic, kMaxTopics));

    double weight = 0;
    const auto [wp, wec] =
        std::from_chars(weight_text.data(), weight_text.data() + weight_text.size(), weight);
    if (weight_text.empty() || wec != std::errc() || wp != weight_text.data() + weight_text.size())
        reader.fail(t2 + 2, fmt::format("weight '{}' is not a number", weight_text));
    if (!std::isfinite(weight) || weight < 0)
        reader.fail(t2 + 2, fmt::format("weight {} is not a finite number >= 0", weight_text));
    return PhiFields{word, static_cast<TopicId>(topic), weight};
}

/// Reads every row of the file at `path`, skipping empty lines and '#' comments.
PhiRows read_phi_rows(const std::string& path) {
    core::LineReader reader(path);
    PhiRows rows;
    std::string_view line;
    while (reader.next(line)) {
        if (line.empty() || line.front() == '#') continue;
        const PhiFields f = parse_phi_line(reader, line);
        auto it = rows.index.find(f.word);
        if (it == rows.index.end()) {
            it = rows.index
                     .emplace(std::string(f.word), static_cast<std::uint32_t>(rows.names.size()))
                     .first;
            rows.names.emplace_back(f.word);
        }
        rows.entries.push_back(PhiEntry{it->second, f.topic, f.weight, reader.line_number()});
        rows.max_topic = std::max(rows.max_topic, f.topic);
    }
    return rows;
}

/// Sorts the entries by (word, topic, line) and throws InputError on a repeated (word, topic).
void sort_and_check_repeats(const std::string& path, PhiRows& rows) {
    std::vector<PhiEntry>& entries = rows.entries;
    std::sort(entries.begin(), entries.end(), [](const PhiEntry& a, const PhiEntry& b) {
        return std::tie(a.word, a.topic, a.line) < std::tie(b.word, b.topic, b.line);
    });
    for (std::size_t i = 1; i < entries.size(); ++i) {
        if (entries[i].word == entries[i - 1].word && entries[i].topic == entries[i - 1].topic)
            throw InputError(
                path, entries[i].line, 1,
                fmt::format("word '{}' topic {} repeats line {}", rows.names[entries[i].word],
                            entries[i].topic, entries[i - 1].line));
    }
}

/// φ, its vocabulary and word counts from checked rows (sorted by word, then topic).
PhiFile make_phi_file(const std::string& path, double beta, const core::Vocabulary* extra,
                      const PhiRows& rows) {
    // With β = 0 a word whose weights are all zero has probability 0 under every topic: it is
    // left out (unknown). With β > 0 every named word is kept, and words of `extra` the file
    // does not name are appended with smoothing only.
    const std::size_t k_count = static_cast<std::size_t>(rows.max_topic) + 1;
    std::vector<double> totals(k_count, 0.0);
    std::vector<std::uint8_t> positive(rows.names.size(), 0);
    for (const PhiEntry& e : rows.entries) {
        totals[e.topic] += e.weight;
        if (e.weight > 0) positive[e.word] = 1;
    }
    std::vector<std::uint32_t> new_id(rows.names.size(), 0);
    std::vector<std::string> kept;
    for (std::uint32_t i = 0; i < rows.names.size(); ++i) {
        if (positive[i] == 0 && beta == 0) continue;
        new_id[i] = static_cast<std::uint32_t>(kept.size());
        kept.push_back(rows.names[i]);
    }
    const auto file_words = static_cast<WordId>(kept.size());
    if (beta > 0 && extra != nullptr) {
        for (const std::string& word : extra->words())
            if (rows.index.find(word) == rows.index.end()) kept.push_back(word);
    }
    if (beta == 0) {
        for (std::size_t k = 0; k < k_count; ++k)
            if (!(totals[k] > 0))
                throw InputError(path, fmt::format("topic {} has no weight (with beta = 0 every "
                                                   "topic from 0 to {} needs some)",
                                                   k, rows.max_topic));
    }
    // Rows in the order of the kept vocabulary, i.e. of first appearance.
    std::vector<std::vector<std::pair<TopicId, double>>> by_word(file_words);
    for (const PhiEntry& e : rows.entries)
        if (e.weight > 0) by_word[new_id[e.word]].emplace_back(e.topic, e.weight);

    PhiFile out;
    out.phi = TopicWordDistribution(static_cast<WordId>(kept.size()), totals, beta);
    for (WordId w = 0; w < by_word.size(); ++w) out.phi.append_row(w, by_word[w]);
    out.file_words = file_words;
    out.smoothing_only_words = static_cast<WordId>(kept.size()) - file_words;
    out.vocab = core::Vocabulary::from_words(std::move(kept), path);
    return out;
}

}  // namespace

PhiFile read_phi_tsv(const std::string& path, double beta, const core::Vocabulary* extra) {
    PhiRows rows = read_phi_rows(path);
    if (rows.entries.empty()) throw InputError(path, "no word-topic rows");
    sort_and_check_repeats(path, rows);
    return make_phi_file(path, beta, extra, rows);
}

// ---------------------------------------------------------------------------------------------
// Vocabulary mapping

MappedCorpus map_to_model(const core::Corpus& corpus, const core::Vocabulary* corpus_vocab,
                          const core::Vocabulary* model_vocab, WordId model_num_words,
                          const std::string& corpus_name) {
    const bool has_corpus_vocab = corpus_vocab != nullptr && !corpus_vocab->empty();
    const bool has_model_vocab = model_vocab != nullptr && !model_vocab->empty();
    if (has_corpus_vocab != has_model_vocab) {
        throw InputError(corpus_name,
                         has_model_vocab
                             ? "has no vocabulary, but the model's words are strings: pass "
                               "--vocab so words can be matched by string"
                             : "has a vocabulary but the model has none: words cannot be matched");
    }
    const WordId w_count = corpus.num_words();
    std::vector<WordId> to_model(w_count, kUnknownWord);
    if (has_corpus_vocab) {
        if (corpus_vocab->size() != w_count)
            throw InputError(corpus_name, fmt::format("vocabulary has {} words but the corpus {}",
                                                      corpus_vocab->size(), w_count));
        for (WordId w = 0; w < w_count; ++w) {
            if (const auto id = model_vocab->find(corpus_vocab->word(w))) to_model[w] = *id;
        }
    } else {
        for (WordId w = 0; w < w_count && w < model_num_words; ++w) to_model[w] = w;
    }

    MappedCorpus out;
    out.input_tokens = corpus.num_tokens();
    std::vector<std::uint8_t> unknown_seen(w_count, 0);
    core::CorpusBuilder builder(model_num_words);
    builder.reserve_tokens(corpus.num_tokens());
    const auto labels = corpus.doc_labels();
    for (DocId d = 0; d < corpus.num_docs(); ++d) {
        builder.begin_doc(labels[d]);
        for (const WordId w : corpus.doc(d)) {
            const WordId m = to_model[w];
            if (m == kUnknownWord) {
                ++out.skipped_tokens;
                if (unknown_seen[w] == 0) {
                    unknown_seen[w] = 1;
                    ++out.unknown_words;
                }
                continue;
            }
            builder.add(m);
        }
    }
    out.corpus = builder.build();
    return out;
}

// ---------------------------------------------------------------------------------------------
// Fold-in

void FoldInOptions::validate() const {
    if (iterations == 0) throw ConfigError("--iterations", "must be at least 1");
    if (burn_in >= iterations)
        throw ConfigError("--burn-in", fmt::format("must be below --iterations ({}), got {}",
                                                   iterations, burn_in));
}

}  // namespace rotor::lda
