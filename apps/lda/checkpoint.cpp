#include "apps/lda/checkpoint.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "apps/lda/trainer.h"
#include "comm/agreed.h"
#include "comm/collectives.h"
#include "comm/communicator.h"
#include "comm/wire.h"
#include "core/base/checked.h"
#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/manifest.h"
#include "core/io/whole_file.h"
#include "train/checkpoint_dir.h"
#include "train/json_fields.h"

namespace rotor::lda {
namespace {

/// α as --alpha takes it: one value when every α_k is equal, else the K values.
std::string alpha_text(const LdaParams& p) {
    const std::vector<double> a = p.topic_alphas();
    if (std::adjacent_find(a.begin(), a.end(), std::not_equal_to<>()) == a.end())
        return a.empty() ? std::string("-") : fmt::format("{}", a.front());
    return fmt::format("{}", fmt::join(a, ","));
}

/// --init-doc-topics as it matters: only for a sparse start ("-" otherwise).
std::string doc_topics(const InitOptions& init) {
    return init.method == InitMethod::kSparse ? std::to_string(init.doc_topics) : "-";
}

/// --init-word-prior as it matters: only for a sequential start ("-" otherwise).
std::string word_prior(const InitOptions& init) {
    return init.method == InitMethod::kSequential ? fmt::format("{}", init.word_prior) : "-";
}

/// Reads a checkpoint file's bytes front to back; any shortfall is an InputError naming the file.
class ByteReader {
  public:
    ByteReader(const std::string& bytes, const std::string& path) : bytes_(bytes), path_(path) {}
    std::size_t remaining() const { return bytes_.size() - pos_; }
    void take(void* dst, std::size_t n, const char* what) {
        if (remaining() < n) throw InputError(path_, fmt::format("truncated inside the {}", what));
        std::memcpy(dst, bytes_.data() + pos_, n);
        pos_ += n;
    }

  private:
    const std::string& bytes_;
    const std::string& path_;
    std::size_t pos_ = 0;
};

constexpr char kPartMagic[8] = {'R', 'O', 'T', 'O', 'R', 'D', 'C', 'P'};
constexpr std::uint32_t kPartVersion = 2;
constexpr char kFormat[] = "rotor-lda-checkpoint";
/// The same layout, as rotor wrote it before one process and P ranks shared one format.
constexpr char kDistributedFormat[] = "rotor-lda-distributed-checkpoint";

/// The state.json fields both checkpoint formats share: the model, seed and progress.
void put_run_fields(nlohmann::ordered_json& j, const TrainOptions& options,
                    const std::vector<double>& alpha, std::uint32_t iterations_done) {
    j["num_topics"] = options.params.num_topics;
    j["alpha"] = alpha;
    j["beta"] = options.params.beta;
    j["seed"] = options.seed;
    j["iterations"] = options.iterations;
    j["iterations_done"] = iterations_done;
}

/// Reads the fields put_run_fields writes; integers in range (a value that does not fit is
/// refused, never wrapped).
void get_run_fields(const nlohmann::json& j, const std::string& path, TrainOptions& options,
                    std::vector<double>& alpha, std::uint32_t& iterations_done) {
    constexpr std::uint64_t kMax32 = UINT32_MAX;
    options.params.num_topics =
        static_cast<std::uint32_t>(train::json_unsigned(j, "num_topics", path, kMax32));
    alpha = j.at("alpha").get<std::vector<double>>();
    options.params.alpha_per_topic = alpha;
    options.params.beta = train::json_double(j, "beta", path);
    options.seed = train::json_unsigned(j, "seed", path);
    options.iterations =
        static_cast<std::uint32_t>(train::json_unsigned(j, "iterations", path, kMax32));
    iterations_done =
        static_cast<std::uint32_t>(train::json_unsigned(j, "iterations_done", path, kMax32));
}

nlohmann::ordered_json corpus_json(const CorpusFingerprint& corpus) {
    return {{"docs", corpus.docs},
            {"words", corpus.words},
            {"tokens", corpus.tokens},
            {"hash", corpus.hash}};
}

CorpusFingerprint corpus_from_json(const nlohmann::json& cj) {
    return {cj.at("docs").get<std::uint64_t>(), cj.at("words").get<std::uint64_t>(),
            cj.at("tokens").get<std::uint64_t>(), cj.at("hash").get<std::uint64_t>()};
}

}  // namespace

CorpusFingerprint fingerprint(const core::Corpus& corpus) {
    CorpusFingerprint f;
    f.docs = corpus.num_docs();
    f.words = corpus.num_words();
    f.tokens = corpus.num_tokens();
    std::uint64_t h = 0xcbf29ce484222325ULL;
    auto mix = [&h](std::uint64_t v) {
        for (int i = 0; i < 8; ++i) {
            h ^= (v >> (8 * i)) & 0xFF;
            h *= 0x100000001b3ULL;
        }
    };
    for (auto o : corpus.doc_offsets()) mix(o);
    for (auto w : corpus.word_ids()) mix(w);
    f.hash = h;
    return f;
}

void check_same_corpus(const CorpusFingerprint& theirs, const CorpusFingerprint& ours,
                       const std::string& resume, const std::string& name,
                       const std::string& flag) {
    if (theirs == ours) return;
    const auto sizes = [](const CorpusFingerprint& f) {
        return fmt::format("{} documents, {} words and {} tokens", f.docs, f.words, f.tokens);
    };
    train::refuse_other_input(resume, "another corpus", name, sizes(ours), sizes(theirs),
                              "other tokens", flag);
}

std::vector<train::ResumeSetting> resume_settings(const TrainOptions& a, const TrainOptions& b) {
    const auto on = [](bool v) { return std::string(v ? "on" : "off"); };
    return {{"--topics", std::to_string(a.params.num_topics), std::to_string(b.params.num_topics)},
            {"--alpha", alpha_text(a.params), alpha_text(b.params)},
            {"--beta", fmt::format("{}", a.params.beta), fmt::format("{}", b.params.beta)},
            {"--seed", std::to_string(a.seed), std::to_string(b.seed)},
            {"--deterministic", on(a.deterministic), on(b.deterministic)},
            {"--blocks", std::to_string(a.blocks), std::to_string(b.blocks)},
            {"--init", init_method_name(a.init.method), init_method_name(b.init.method)},
            {"--init-doc-topics", doc_topics(a.init), doc_topics(b.init)},
            {"--init-word-prior", word_prior(a.init), word_prior(b.init)}};
}

void apply_checkpoint_layout(const Checkpoint& c, DistributedOptions& dist) {
    dist.columns_per_slice = c.columns_per_slice;
    dist.timer = c.timer;
    dist.timer_always = c.timer_always;
    dist.rebalance = c.rebalance;
    dist.rebalance_tolerance = c.rebalance_tolerance;
    if (c.timer) {
        dist.timer_params.low = c.timer_low;
        dist.timer_params.high = c.timer_high;
        dist.timer_params.initial_s = c.timer_budget;
    }
}

void write_checkpoint(const std::string& dir, const Trainer& trainer, const TrainOptions& options,
                      const DistributedOptions& dist, const CorpusFingerprint& corpus) {
    const auto part = [&](train::PartWriter& w) {
        w.write(std::as_bytes(std::span<const char>(kPartMagic, 8)));
        w.pod(kPartVersion);
        w.pod(static_cast<std::uint32_t>(trainer.rank()));
        w.pod(static_cast<std::uint32_t>(trainer.ranks()));
        w.pod(static_cast<std::uint32_t>(trainer.iterations_done()));
        const LocalDocs state = trainer.local_state();
        w.pod(static_cast<std::uint64_t>(state.docs.size()));
        w.write(std::as_bytes(std::span<const DocId>(state.docs)));
        w.pod(static_cast<std::uint64_t>(state.topics.size()));
        w.write(std::as_bytes(std::span<const TopicId>(state.topics)));
    };
    const auto manifest = [&](const std::vector<train::PartInfo>& parts) {
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        for (const train::PartInfo& p : parts)
            list.push_back({{"file", p.file}, {"bytes", p.bytes}, {"fnv1a", p.fnv1a}});
        nlohmann::ordered_json j;
        j["format"] = kFormat;
        j["format_version"] = Checkpoint::kFormatVersion;
        j["ranks"] = trainer.ranks();
        j["columns_per_slice"] = trainer.columns_per_slice();
        put_run_fields(j, options, trainer.alpha(), trainer.iterations_done());
        j["eval_every"] = options.eval_every;
        j["deterministic"] = options.deterministic;
        j["sampler"] = std::string(sampler_name(options.sampler));
        j["mh_steps"] = options.mh_steps;
        j["init"] = init_method_name(options.init.method);
        j["init_doc_topics"] = options.init.doc_topics;
        j["init_word_prior"] = options.init.word_prior;
        j["timer"] = dist.timer;
        j["timer_always"] = dist.timer_always;
        j["timer_low"] = dist.timer_params.low;
        j["timer_high"] = dist.timer_params.high;
        // One process runs no timer: its checkpoint carries the first budget, for a resume on
        // more ranks.
        j["timer_budget"] =
            trainer.ranks() > 1 ? trainer.timer_budget() : dist.timer_params.initial_s;
        j["rebalance"] = dist.rebalance;
        j["rebalance_tolerance"] = dist.rebalance_tolerance;
        j["corpus"] = corpus_json(corpus);
        j["parts"] = std::move(list);
        j["manifest"] = std::string(core::kManifestName);
        return j.dump(2) + "\n";
    };
    train::write_checkpoint_dir(dir, trainer.comm(), part, manifest);
}

namespace {

/// Reads and checks part `q` of a checkpoint of `c.ranks` ranks: its size and hash against the
/// manifest, its header, then its documents and topics.
void read_part(const Checkpoint& c, int q, std::vector<DocId>& docs, std::vector<TopicId>& topics) {
    const auto i = static_cast<std::size_t>(q);
    const std::string& path = c.part_paths[i];
    const std::string bytes = train::read_checked_part(
        std::filesystem::path(path).parent_path().string(),
        {std::filesystem::path(path).filename().string(), c.part_bytes[i], c.part_hashes[i]}, q);
    ByteReader in(bytes, path);
    char magic[8];
    in.take(magic, 8, "header");
    if (std::memcmp(magic, kPartMagic, 8) != 0) throw InputError(path, "wrong magic");
    std::uint32_t head[4] = {0, 0, 0, 0};  // version, rank, ranks, iterations done
    in.take(head, sizeof head, "header");
    if (head[0] != kPartVersion) throw InputError(path, "unsupported version");
    if (head[1] != static_cast<std::uint32_t>(q) || head[2] != static_cast<std::uint32_t>(c.ranks))
        throw InputError(path, fmt::format("is rank {} of {}, expected rank {} of {}", head[1],
                                           head[2], q, c.ranks));
    if (head[3] != c.iterations_done)
        throw InputError(path, fmt::format("is of iteration {}, state.json of iteration {}",
                                           head[3], c.iterations_done));
    std::uint64_t n = 0;
    in.take(&n, 8, "header");
    if (n > in.remaining() / sizeof(DocId))
        throw InputError(path, "truncated inside the documents");
    docs.resize(n);
    in.take(docs.data(), n * sizeof(DocId), "documents");
    in.take(&n, 8, "topics header");
    if (n > in.remaining() / sizeof(TopicId)) throw InputError(path, "truncated inside the topics");
    topics.resize(n);
    in.take(topics.data(), n * sizeof(TopicId), "topics");
    if (in.remaining() != 0) throw InputError(path, "trailing bytes after the topics");
}

/// The ranges of state.json's fields: what the flags that set them allow (columns_per_slice
/// was checked as it was read), and no iteration done beyond the run's total.
void check_state(const Checkpoint& c, const std::string& state_path) {
    core::checked_at_most(c.iterations_done, c.options.iterations,
                          core::SizeSource::input(state_path), "iterations_done");
    try {
        c.options.params.validate();
    } catch (const ConfigError& e) {
        throw InputError(state_path, e.what());
    }
}

}  // namespace

Checkpoint read_checkpoint(const std::string& given_dir, int rank, int ranks) {
    namespace fs = std::filesystem;
    // Killed between the two renames that replace a checkpoint: the previous one, whole, is
    // `<dir>.old.<pid>.<n>`.
    const std::string dir = core::existing_or_old(given_dir, "state.json");
    const std::string state_path = (fs::path(dir) / "state.json").string();
    // Every file against the MANIFEST first; the parts' bytes are checked as they are read,
    // against state.json (which this verified), rather than read twice.
    const bool verified =
        core::verify_manifest(dir, [](std::string_view file) { return file.starts_with("part-"); });
    Checkpoint c;
    try {
        const auto j = nlohmann::json::parse(core::read_json_text(state_path));
        const bool claimed = j.contains("manifest");
        if (claimed && j.at("manifest").get<std::string>() != core::kManifestName)
            throw InputError(state_path, "\"manifest\" must be \"MANIFEST\"");
        core::require_manifest(dir, verified, claimed, state_path);
        const std::string format = j.at("format").get<std::string>();
        if (format != kFormat && format != kDistributedFormat)
            throw InputError(state_path, "not a rotor LDA checkpoint");
        const int version = j.at("format_version").get<int>();
        if (format == kFormat && version == 1)
            throw InputError(state_path,
                             "is a checkpoint of rotor's first format (topics by block), which "
                             "this rotor no longer reads: finish that run with the rotor that "
                             "started it");
        // Format 2 (the MPI checkpoints of earlier rotors) has the same layout as format 3.
        if (version != (format == kFormat ? Checkpoint::kFormatVersion : 2))
            throw InputError(state_path, "unsupported checkpoint format_version");
        c.ranks = static_cast<int>(train::json_unsigned(j, "ranks", state_path, INT32_MAX));
        if (c.ranks < 1) throw InputError(state_path, "ranks must be at least 1");
        c.columns_per_slice =
            static_cast<int>(train::json_unsigned(j, "columns_per_slice", state_path, 4096));
        get_run_fields(j, state_path, c.options, c.alpha, c.iterations_done);
        c.options.eval_every = static_cast<std::uint32_t>(
            train::json_unsigned(j, "eval_every", state_path, UINT32_MAX));
        // Format 2 (written only under MPI, where deterministic mode is refused) has no field.
        c.options.deterministic = format == kFormat ? j.at("deterministic").get<bool>() : false;
        // Run settings added later: absent in older checkpoints (SparseLDA).
        if (j.contains("sampler")) {
            try {
                c.options.sampler = parse_sampler(j.at("sampler").get<std::string>());
            } catch (const ConfigError&) {
                throw InputError(state_path, "unknown sampler");
            }
        }
        if (j.contains("mh_steps"))
            c.options.mh_steps = static_cast<std::uint32_t>(
                train::json_unsigned(j, "mh_steps", state_path, UINT32_MAX));
        // How the run started: absent in older checkpoints (random, the only start then).
        c.init_recorded = j.contains("init");
        if (c.init_recorded) {
            try {
                c.options.init.method = parse_init_method(j.at("init").get<std::string>());
            } catch (const ConfigError&) {
                throw InputError(state_path, "unknown init");
            }
        }
        if (j.contains("init_word_prior")) {
            const nlohmann::json& v = j.at("init_word_prior");
            c.options.init.word_prior = v.is_number() ? v.get<double>() : -1.0;
            if (!(c.options.init.word_prior >= 0) || !std::isfinite(c.options.init.word_prior))
                throw InputError(state_path, "init_word_prior must be 0 (automatic) or positive");
        }
        if (j.contains("init_doc_topics")) {
            c.options.init.doc_topics = static_cast<std::uint32_t>(
                train::json_unsigned(j, "init_doc_topics", state_path, UINT32_MAX));
            if (c.options.init.doc_topics == 0)
                throw InputError(state_path, "init_doc_topics must be at least 1");
        }
        c.timer = j.at("timer").get<bool>();
        c.timer_always = j.value("timer_always", true);  // absent before it existed
        c.timer_low = j.at("timer_low").get<double>();
        c.timer_high = j.at("timer_high").get<double>();
        c.timer_budget = j.at("timer_budget").get<double>();
        c.rebalance = j.at("rebalance").get<bool>();
        c.rebalance_tolerance = j.at("rebalance_tolerance").get<double>();
        c.corpus = corpus_from_json(j.at("corpus"));
        const auto& parts = j.at("parts");
        if (!parts.is_array() || parts.size() != static_cast<std::size_t>(c.ranks))
            throw InputError(state_path, fmt::format("lists {} parts for {} ranks",
                                                     parts.is_array() ? parts.size() : 0, c.ranks));
        for (int q = 0; q < c.ranks; ++q) {
            const auto& part = parts.at(static_cast<std::size_t>(q));
            const std::string file = part.at("file").get<std::string>();
            if (file != train::part_name(q))
                throw InputError(state_path, fmt::format("part {} is named '{}', expected '{}'", q,
                                                         file, train::part_name(q)));
            c.part_paths.push_back((fs::path(dir) / file).string());
            c.part_bytes.push_back(part.at("bytes").get<std::uint64_t>());
            c.part_hashes.push_back(part.at("fnv1a").get<std::uint64_t>());
        }
    } catch (const nlohmann::json::exception& e) {
        throw InputError(state_path, fmt::format("bad checkpoint state: {}", e.what()));
    }
    if (c.alpha.size() != c.options.params.num_topics || c.columns_per_slice < 1)
        throw InputError(state_path,
                         "inconsistent checkpoint state (alpha size or columns per slice)");
    if (c.timer && !(c.timer_budget > 0))
        throw InputError(state_path, "inconsistent checkpoint state (timer budget)");
    check_state(c, state_path);
    if (c.ranks == ranks) {
        c.part_path = c.part_paths[static_cast<std::size_t>(rank)];
        read_part(c, rank, c.docs, c.topics);
    } else {
        c.part_path = state_path;
    }
    return c;
}

void read_checkpoint_parts(Checkpoint& c, const core::Corpus& corpus,
                           std::span<const DocId> wanted) {
    // Where each wanted document's topics go in the result.
    constexpr std::uint64_t kNone = ~std::uint64_t{0};
    std::vector<std::uint64_t> at(corpus.num_docs(), kNone);
    std::uint64_t tokens = 0;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        ROTOR_ASSERT(wanted[i] < corpus.num_docs() && (i == 0 || wanted[i] > wanted[i - 1]),
                     "read_checkpoint_parts: wanted documents must be increasing ids");
        at[wanted[i]] = tokens;
        tokens += corpus.doc_length(wanted[i]);
    }
    std::vector<TopicId> out(tokens);
    std::vector<std::uint8_t> found(corpus.num_docs(), 0);
    std::vector<DocId> docs;
    std::vector<TopicId> topics;
    for (int q = 0; q < c.ranks; ++q) {
        read_part(c, q, docs, topics);
        const std::string& path = c.part_paths[static_cast<std::size_t>(q)];
        std::uint64_t pos = 0;
        for (DocId d : docs) {
            if (d >= corpus.num_docs())
                throw InputError(path, fmt::format("document {} is not in the corpus", d));
            if (found[d] != 0)
                throw InputError(path, fmt::format("document {} is listed twice", d));
            found[d] = 1;
            const std::uint64_t len = corpus.doc_length(d);
            if (topics.size() - pos < len)
                throw InputError(path, "fewer topics than its documents have tokens");
            if (at[d] != kNone)
                std::copy_n(topics.begin() + static_cast<std::ptrdiff_t>(pos), len,
                            out.begin() + static_cast<std::ptrdiff_t>(at[d]));
            pos += len;
        }
        if (pos != topics.size())
            throw InputError(path, "more topics than its documents have tokens");
    }
    for (DocId d : wanted)
        if (found[d] == 0)
            throw InputError(c.part_paths.empty() ? std::string("checkpoint") : c.part_paths[0],
                             fmt::format("document {} is in no part", d));
    c.docs.assign(wanted.begin(), wanted.end());
    c.topics = std::move(out);
    c.part_path = c.part_paths.empty() ? std::string() : c.part_paths[0];
}

}  // namespace rotor::lda
