// Saving, loading and exporting LDA model directories (core/lda/model.h).
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/corpus/doc_names.h"
#include "core/corpus/vocabulary.h"
#include "core/io/atomic_file.h"
#include "core/io/checksum.h"
#include "core/io/line_reader.h"
#include "core/io/manifest.h"
#include "core/io/whole_file.h"
#include "core/lda/lda_params.h"
#include "core/lda/model.h"

namespace rotor::lda {
namespace {

constexpr char kWordTopicMagic[8] = {'R', 'O', 'T', 'O', 'R', 'W', 'T', 'P'};
constexpr char kDocTopicMagic[8] = {'R', 'O', 'T', 'O', 'R', 'D', 'T', 'P'};
/// Version 2 ends with the CRC-32 of every byte before it; version 1 (rotor before the
/// checksum) is still read, unchecked.
constexpr std::uint32_t kBinaryVersion = 2;

/// An AtomicFile that keeps the CRC-32 of what goes into it: a file written in one pass without
/// holding its bytes (a model's counts are as large as the trainer's tables).
class ChecksummedFile {
  public:
    explicit ChecksummedFile(std::string path) : file_(std::move(path)) {}
    template <class T>
    void put(const T& v) {
        put_bytes({reinterpret_cast<const char*>(&v), sizeof(T)});
    }
    template <class T>
    void put_all(const std::vector<T>& v) {
        put_bytes({reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)});
    }
    /// Appends the CRC-32 of every byte before it and commits.
    void finish() {
        file_.write_pod(crc_);
        file_.commit();
    }

  private:
    void put_bytes(std::string_view bytes) {
        crc_ = core::crc32(bytes, crc_);
        file_.write(bytes);
    }
    core::AtomicFile file_;
    std::uint32_t crc_ = 0;
};

/// Header: magic[8], u32 version, u32 K, u64 rows, u64 nnz; then offsets, topics, counts,
/// then (doc_topic only) labels; then the u32 CRC-32 of all the bytes before it.
void write_counts(const std::string& path, const char (&magic)[8], std::uint32_t k,
                  const SparseCounts& c, const std::vector<std::uint64_t>* labels) {
    ChecksummedFile out(path);
    out.put(magic);
    out.put(kBinaryVersion);
    out.put(k);
    out.put(static_cast<std::uint64_t>(c.rows()));
    out.put(c.nnz());
    out.put_all(c.offsets);
    out.put_all(c.topics);
    out.put_all(c.counts);
    if (labels) out.put_all(*labels);
    out.finish();
}

class ByteReader {
  public:
    ByteReader(const std::string& path, const std::string& bytes) : path_(path), bytes_(bytes) {}
    template <class T>
    T get(const char* what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }
    template <class T>
    std::vector<T> get_array(std::uint64_t n, const char* what) {
        if (n > (end_ - pos_) / sizeof(T)) truncated(what);
        std::vector<T> v(n);
        if (n) std::memcpy(v.data(), bytes_.data() + pos_, n * sizeof(T));
        pos_ += n * sizeof(T);
        return v;
    }
    /// Checks the file's last 4 bytes, the CRC-32 of all before them, and leaves them out of
    /// what is read next (expect_end stops before them).
    void check_crc32() {
        need(sizeof(std::uint32_t), "checksum");
        std::uint32_t stored = 0;
        const std::size_t body = bytes_.size() - sizeof stored;
        std::memcpy(&stored, bytes_.data() + body, sizeof stored);
        const std::uint32_t got = core::crc32(std::string_view(bytes_).substr(0, body));
        if (got != stored)
            throw InputError(path_, fmt::format("checksum mismatch (CRC-32 {:08x}, stored "
                                                "{:08x}): the file is corrupt",
                                                got, stored));
        end_ = body;
    }
    void expect_end() const {
        if (pos_ != end_)
            throw InputError(
                path_, fmt::format("{} bytes of trailing garbage after the data", end_ - pos_));
    }

  private:
    void need(std::size_t n, const char* what) const {
        if (end_ - pos_ < n) truncated(what);
    }
    [[noreturn]] void truncated(const char* what) const {
        throw InputError(path_, fmt::format("truncated: file ends inside the {}", what));
    }
    const std::string& path_;
    const std::string& bytes_;
    std::size_t pos_ = 0;
    std::size_t end_ = bytes_.size();  ///< the data's end: before the checksum, once checked
};

SparseCounts decode_counts(const std::string& path, const std::string& bytes,
                           const char (&magic)[8], std::uint32_t k, std::uint64_t expect_rows,
                           std::vector<std::uint64_t>* labels) {
    ByteReader r(path, bytes);
    char m[8];
    for (char& c : m) c = r.get<char>("header");
    if (std::memcmp(m, magic, 8) != 0)
        throw InputError(path,
                         fmt::format("wrong magic: not a rotor {} file", std::string(magic, 8)));
    const auto version = r.get<std::uint32_t>("header");
    if (version != kBinaryVersion && version != 1)
        throw InputError(path, fmt::format("unsupported version {} (this rotor reads 1 and {})",
                                           version, kBinaryVersion));
    if (version == kBinaryVersion) r.check_crc32();
    const auto file_k = r.get<std::uint32_t>("header");
    const auto rows = r.get<std::uint64_t>("header");
    const auto nnz = r.get<std::uint64_t>("header");
    if (file_k != k)
        throw InputError(path, fmt::format("has K = {} but params.json says {}", file_k, k));
    if (rows != expect_rows)
        throw InputError(path,
                         fmt::format("has {} rows but params.json says {}", rows, expect_rows));
    SparseCounts c;
    c.offsets = r.get_array<std::uint64_t>(rows + 1, "row offsets");
    c.topics = r.get_array<TopicId>(nnz, "topic ids");
    c.counts = r.get_array<Count>(nnz, "counts");
    if (labels) *labels = r.get_array<std::uint64_t>(rows, "document labels");
    r.expect_end();
    if (c.offsets.front() != 0 || c.offsets.back() != nnz)
        throw InputError(path, "row offsets do not span the nonzeros");
    for (std::uint64_t i = 0; i < rows; ++i) {
        if (c.offsets[i] > c.offsets[i + 1])
            throw InputError(path, fmt::format("row offsets decrease at row {}", i));
    }
    for (std::uint64_t i = 0; i < nnz; ++i) {
        if (c.topics[i] >= k)
            throw InputError(path, fmt::format("topic id {} out of range [0, {})", c.topics[i], k));
        if (c.counts[i] == 0) throw InputError(path, "zero count stored");
    }
    return c;
}

}  // namespace

void SparseCounts::add_row(const std::vector<std::pair<TopicId, Count>>& row) {
    for (const auto& [k, n] : row) {
        if (n == 0) continue;
        topics.push_back(k);
        counts.push_back(n);
    }
    offsets.push_back(topics.size());
}

void LdaModel::recompute_totals() {
    topic_totals.assign(info.num_topics, 0);
    for (std::uint64_t i = 0; i < word_topic.nnz(); ++i)
        topic_totals[word_topic.topics[i]] += word_topic.counts[i];
}

namespace {

/// Heap order: the better entry (larger count, then lower word) compares "less", so the heap's
/// front is the worst entry kept.
bool better(const TopCounts::Entry& a, const TopCounts::Entry& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
}

}  // namespace

void TopCounts::offer(TopicId k, Count count, WordId word) {
    auto& h = heaps_[k];
    const Entry e{count, word};
    if (h.size() < top_) {
        h.push_back(e);
        std::push_heap(h.begin(), h.end(), better);
    } else if (top_ > 0 && better(e, h.front())) {
        std::pop_heap(h.begin(), h.end(), better);
        h.back() = e;
        std::push_heap(h.begin(), h.end(), better);
    }
}

std::vector<std::vector<TopCounts::Entry>> TopCounts::take_sorted() && {
    for (auto& h : heaps_) std::sort(h.begin(), h.end(), better);
    return std::move(heaps_);
}

std::vector<TopicSummary> top_words(const LdaModel& model, std::size_t top) {
    const std::uint32_t k_count = model.info.num_topics;
    TopCounts counts(k_count, top);
    for (WordId w = 0; w < model.word_topic.rows(); ++w)
        for (auto i = model.word_topic.offsets[w]; i < model.word_topic.offsets[w + 1]; ++i)
            counts.offer(model.word_topic.topics[i], model.word_topic.counts[i], w);
    const auto sorted = std::move(counts).take_sorted();
    const double n_total = static_cast<double>(model.info.num_tokens);
    std::vector<TopicSummary> out(k_count);
    for (TopicId k = 0; k < k_count; ++k) {
        out[k].topic = k;
        out[k].share = n_total > 0 ? model.topic_totals[k] / n_total : 0.0;
        out[k].words.reserve(sorted[k].size());
        for (const auto& [n, w] : sorted[k]) out[k].words.emplace_back(w, model.phi(k, n));
    }
    return out;
}

namespace {

std::string word_name(const LdaModel& m, WordId w) {
    return w < m.vocab.size() ? m.vocab[w] : fmt::format("#{}", w);
}

nlohmann::json info_to_json(const ModelInfo& i) {
    nlohmann::json j{{"format", "rotor-lda-model"},
                     {"format_version", ModelInfo::kFormatVersion},
                     {"num_topics", i.num_topics},
                     {"alpha", i.alpha},
                     {"beta", i.beta},
                     {"num_words", i.num_words},
                     {"num_docs", i.num_docs},
                     {"num_tokens", i.num_tokens},
                     {"iterations", i.iterations},
                     {"seed", i.seed},
                     {"corpus", i.corpus},
                     {"vocabulary", i.vocabulary.value_or(false)}};
    if (!i.init.empty()) {
        j["init"] = i.init;
        j["init_doc_topics"] = i.init_doc_topics;
        if (i.init_word_prior > 0) j["init_word_prior"] = i.init_word_prior;
    }
    return j;
}

/// params.json's fields; `manifest` is set to whether it says the directory has a MANIFEST
/// (`"manifest": "MANIFEST"`, absent in models of rotor before it).
ModelInfo info_from_json(const std::string& path, const std::string& text, bool& manifest) {
    core::check_json_text(text, path);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw InputError(path, fmt::format("not valid JSON: {}", e.what()));
    }
    ModelInfo i;
    try {
        if (j.at("format").get<std::string>() != "rotor-lda-model")
            throw InputError(path, "not a rotor LDA model (format field)");
        const int version = j.at("format_version").get<int>();
        if (version != ModelInfo::kFormatVersion)
            throw InputError(
                path, fmt::format("unsupported format_version {} (this rotor reads {})", version,
                                  ModelInfo::kFormatVersion));
        i.num_topics = j.at("num_topics").get<std::uint32_t>();
        i.alpha = j.at("alpha").get<std::vector<double>>();
        i.beta = j.at("beta").get<double>();
        i.num_words = j.at("num_words").get<std::uint32_t>();
        i.num_docs = j.at("num_docs").get<std::uint32_t>();
        i.num_tokens = j.at("num_tokens").get<std::uint64_t>();
        i.iterations = j.at("iterations").get<std::uint32_t>();
        i.seed = j.at("seed").get<std::uint64_t>();
        i.corpus = j.value("corpus", std::string{});
        if (j.contains("vocabulary")) i.vocabulary = j.at("vocabulary").get<bool>();
        // Recorded since rotor wrote --init into the model; older models leave it empty.
        i.init = j.value("init", std::string{});
        i.init_doc_topics = j.value("init_doc_topics", std::uint32_t{0});
        i.init_word_prior = j.value("init_word_prior", 0.0);
        // Recorded since rotor wrote a MANIFEST into the model.
        manifest = j.contains("manifest");
        if (manifest && j.at("manifest").get<std::string>() != core::kManifestName)
            throw InputError(path, fmt::format("\"manifest\" must be \"{}\"", core::kManifestName));
    } catch (const nlohmann::json::exception& e) {
        throw InputError(path, fmt::format("bad or missing field: {}", e.what()));
    }
    if (i.alpha.size() != i.num_topics)
        throw InputError(
            path, fmt::format("alpha has {} entries for {} topics", i.alpha.size(), i.num_topics));
    // The same ranges as the flags that set them.
    LdaParams params;
    params.num_topics = i.num_topics;
    params.alpha_per_topic = i.alpha;
    params.beta = i.beta;
    try {
        params.validate();
    } catch (const ConfigError& e) {
        // "--alpha: ..." names the flag; here the field is params.json's "alpha".
        const std::string what = e.what();
        throw InputError(path, what.starts_with("--") ? what.substr(2) : what);
    }
    return i;
}

std::string join(const std::string& dir, const char* name) {
    return (std::filesystem::path(dir) / name).string();
}

/// vocab.txt: V words when params.json says there is a vocabulary (each checked as a corpus's
/// vocabulary is), none when it says there is not; an older model's, as it is.
std::vector<std::string> load_vocab(const std::string& path, const ModelInfo& info) {
    std::vector<std::string> words;
    if (info.vocabulary.value_or(true)) {
        core::LineReader reader(path);
        std::string_view line;
        while (reader.next(line)) words.emplace_back(line);
    }
    if (!info.vocabulary.has_value() && words.empty()) return words;
    if (!info.vocabulary.value_or(true)) {
        std::error_code ec;
        if (std::filesystem::file_size(path, ec) != 0 || ec)
            throw InputError(path,
                             "missing or not empty, but params.json says the model has no "
                             "vocabulary");
        return words;
    }
    if (words.empty())
        throw InputError(path, "empty vocabulary file (params.json says V = " +
                                   std::to_string(info.num_words) + ")");
    const core::Vocabulary checked = core::Vocabulary::from_words(std::move(words), path);
    if (checked.size() != info.num_words)
        throw InputError(path, fmt::format("has {} lines but the model has V = {}", checked.size(),
                                           info.num_words));
    return {checked.words().begin(), checked.words().end()};
}

}  // namespace

void save_model(const LdaModel& m, const std::string& dir, std::size_t top) {
    core::check_replaceable(dir, "params.json", "--out");
    core::AtomicDirectory out(dir);  // built whole under a temporary name, then renamed

    // Each file written as it is produced, none held whole.
    core::AtomicFile vocab(out.file("vocab.txt"));
    for (const auto& w : m.vocab) {
        vocab.write(w);
        vocab.write("\n");
    }
    vocab.commit();
    write_counts(out.file("word_topic.bin"), kWordTopicMagic, m.info.num_topics, m.word_topic,
                 nullptr);
    write_counts(out.file("doc_topic.bin"), kDocTopicMagic, m.info.num_topics, m.doc_topic,
                 &m.doc_labels);
    core::AtomicFile topics(out.file("topics.txt"));
    std::string line;
    for (const auto& t : top_words(m, top)) {
        line = fmt::format("topic {} ({:.2f}%):", t.topic, 100.0 * t.share);
        for (const auto& [w, p] : t.words) line += ' ' + word_name(m, w);
        line += '\n';
        topics.write(line);
    }
    topics.commit();
    if (!m.doc_names.empty()) core::save_doc_names(m.doc_names, out.file("docs.txt"));
    ModelInfo info = m.info;
    info.vocabulary = !m.vocab.empty();
    nlohmann::json params = info_to_json(info);
    params["manifest"] = std::string(core::kManifestName);
    core::write_file_atomically(out.file("params.json"), params.dump(2) + "\n");
    core::write_manifest(out.temp_path());  // last: it lists every file above
    out.commit();
}

LdaModel load_model(const std::string& dir) {
    LdaModel m;
    // Every file against the manifest first, so that a damaged file is named as such.
    const bool verified = core::verify_manifest(dir);
    const std::string params_path = join(dir, "params.json");
    bool claimed = false;
    m.info = info_from_json(params_path, core::read_whole_file(params_path), claimed);
    core::require_manifest(dir, verified, claimed, params_path);
    const std::string vocab_path = join(dir, "vocab.txt");
    m.vocab = load_vocab(vocab_path, m.info);
    const std::string wt_path = join(dir, "word_topic.bin");
    m.word_topic = decode_counts(wt_path, core::read_whole_file(wt_path), kWordTopicMagic,
                                 m.info.num_topics, m.info.num_words, nullptr);
    const std::string dt_path = join(dir, "doc_topic.bin");
    m.doc_topic = decode_counts(dt_path, core::read_whole_file(dt_path), kDocTopicMagic,
                                m.info.num_topics, m.info.num_docs, &m.doc_labels);
    const std::string names_path = join(dir, "docs.txt");
    std::error_code ec;
    if (std::filesystem::exists(names_path, ec))
        m.doc_names = core::load_doc_names(names_path, m.info.num_docs);
    m.recompute_totals();
    const auto sum_wt =
        std::accumulate(m.topic_totals.begin(), m.topic_totals.end(), TotalCount{0});
    const auto sum_dt =
        std::accumulate(m.doc_topic.counts.begin(), m.doc_topic.counts.end(), TotalCount{0});
    if (static_cast<std::uint64_t>(sum_wt) != m.info.num_tokens || sum_wt != sum_dt)
        throw InputError(dir,
                         fmt::format("counts disagree: word-topic sums to {}, doc-topic to {}, "
                                     "params.json says N = {}",
                                     sum_wt, sum_dt, m.info.num_tokens));
    return m;
}

std::vector<double> doc_theta(const LdaModel& m, std::size_t d) {
    std::vector<double> theta(m.info.alpha.begin(), m.info.alpha.end());
    double total = std::accumulate(theta.begin(), theta.end(), 0.0);
    for (auto i = m.doc_topic.offsets[d]; i < m.doc_topic.offsets[d + 1]; ++i) {
        theta[m.doc_topic.topics[i]] += m.doc_topic.counts[i];
        total += m.doc_topic.counts[i];
    }
    for (double& t : theta) t /= total;
    return theta;
}

std::string doc_name(const LdaModel& m, std::size_t d) {
    return core::doc_name(m.doc_names, m.doc_labels, d);
}

std::string doc_topics_header(std::uint32_t num_topics) {
    std::string h = "doc";
    for (std::uint32_t k = 0; k < num_topics; ++k) h += fmt::format("\ttopic_{}", k);
    return h + '\n';
}

void append_doc_topics_row(std::string& out, std::string_view name, std::span<const double> theta) {
    out += name;
    for (const double t : theta) out += fmt::format("\t{:.6g}", t);
    out += '\n';
}

void write_doc_topics(const LdaModel& m, const std::string& path) {
    std::string text = doc_topics_header(m.info.num_topics);
    for (std::size_t d = 0; d < m.doc_topic.rows(); ++d)
        append_doc_topics_row(text, doc_name(m, d), doc_theta(m, d));
    core::write_file_atomically(path, text);
}

void export_tsv(const LdaModel& m, const std::string& out_dir, bool normalize) {
    core::check_replaceable(out_dir, "word_topic.tsv", "--out");
    core::AtomicDirectory out(out_dir);  // built whole under a temporary name, then renamed
    std::string wt;
    for (WordId w = 0; w < m.word_topic.rows(); ++w) {
        const std::string name = word_name(m, w);
        for (auto i = m.word_topic.offsets[w]; i < m.word_topic.offsets[w + 1]; ++i) {
            const TopicId k = m.word_topic.topics[i];
            const Count n = m.word_topic.counts[i];
            wt += normalize ? fmt::format("{}\t{}\t{:.6g}\n", name, k, m.phi(k, n))
                            : fmt::format("{}\t{}\t{}\n", name, k, n);
        }
    }
    core::write_file_atomically(out.file("word_topic.tsv"), wt);
    std::string dt;
    for (std::size_t d = 0; d < m.doc_topic.rows(); ++d) {
        const std::string name = doc_name(m, d);
        if (normalize) {
            const std::vector<double> theta = doc_theta(m, d);
            for (std::size_t k = 0; k < theta.size(); ++k)
                dt += fmt::format("{}\t{}\t{:.6g}\n", name, k, theta[k]);
            continue;
        }
        for (auto i = m.doc_topic.offsets[d]; i < m.doc_topic.offsets[d + 1]; ++i)
            dt += fmt::format("{}\t{}\t{}\n", name, m.doc_topic.topics[i], m.doc_topic.counts[i]);
    }
    core::write_file_atomically(out.file("doc_topic.tsv"), dt);
    out.commit();
}

}  // namespace rotor::lda
