#include "apps/lda/checkpoint.h"

#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/io/atomic_file.h"

namespace rotor::lda {
namespace {

constexpr char kMagic[8] = {'R', 'O', 'T', 'O', 'R', 'C', 'K', 'P'};
constexpr std::uint32_t kTopicsVersion = 1;

std::string read_whole(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "cannot open: " + std::string(std::strerror(errno)));
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
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

void write_checkpoint(const std::string& dir, const Trainer& trainer, const TrainOptions& options,
                      const CorpusFingerprint& corpus) {
    core::AtomicDirectory out(dir);
    {
        core::AtomicFile f(out.file("topics.bin"));
        f.write(std::string_view(kMagic, 8));
        f.write_pod(kTopicsVersion);
        f.write_pod(static_cast<std::uint64_t>(trainer.blocks().size()));
        for (const TokenBlock& b : trainer.blocks()) {
            f.write_pod(static_cast<std::uint64_t>(b.topics.size()));
            f.write_pod(std::span<const TopicId>(b.topics));
        }
        f.commit();
    }
    nlohmann::ordered_json j;
    j["format"] = "rotor-lda-checkpoint";
    j["format_version"] = Checkpoint::kFormatVersion;
    j["num_topics"] = options.params.num_topics;
    j["alpha"] = trainer.alpha();
    j["beta"] = options.params.beta;
    j["seed"] = options.seed;
    j["iterations"] = options.iterations;
    j["iterations_done"] = trainer.iterations_done();
    j["grid_side"] = trainer.grid_side();
    j["deterministic"] = options.deterministic;
    j["eval_every"] = options.eval_every;
    j["corpus"] = {{"docs", corpus.docs},
                   {"words", corpus.words},
                   {"tokens", corpus.tokens},
                   {"hash", corpus.hash}};
    core::write_file_atomically(out.file("state.json"), j.dump(2) + "\n");
    out.commit();
}

int remove_stale_temporaries(const std::string& dir) {
    namespace fs = std::filesystem;
    const fs::path target = fs::absolute(fs::path(dir)).lexically_normal();
    const fs::path parent = target.parent_path();
    const std::string base = target.filename().string();
    std::error_code ec;
    int removed = 0;
    for (const auto& e : fs::directory_iterator(parent, ec)) {
        const std::string name = e.path().filename().string();
        for (const char* mark : {".tmp.", ".old."}) {
            const std::string prefix = base + mark;
            if (name.rfind(prefix, 0) != 0) continue;
            const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
            if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
                fs::remove_all(e.path(), ec);
                ++removed;
            }
        }
    }
    return removed;
}

Checkpoint read_checkpoint(const std::string& dir) {
    const std::string state_path = (std::filesystem::path(dir) / "state.json").string();
    const std::string topics_path = (std::filesystem::path(dir) / "topics.bin").string();
    Checkpoint c;
    try {
        const auto j = nlohmann::json::parse(read_whole(state_path));
        if (j.at("format").get<std::string>() != "rotor-lda-checkpoint")
            throw InputError(state_path, "not a rotor LDA checkpoint");
        if (j.at("format_version").get<int>() != Checkpoint::kFormatVersion)
            throw InputError(state_path, "unsupported checkpoint format_version");
        c.options.params.num_topics = j.at("num_topics").get<std::uint32_t>();
        c.alpha = j.at("alpha").get<std::vector<double>>();
        c.options.params.alpha_per_topic = c.alpha;
        c.options.params.beta = j.at("beta").get<double>();
        c.options.seed = j.at("seed").get<std::uint64_t>();
        c.options.iterations = j.at("iterations").get<std::uint32_t>();
        c.iterations_done = j.at("iterations_done").get<std::uint32_t>();
        c.grid_side = j.at("grid_side").get<int>();
        c.options.blocks = c.grid_side;
        c.options.deterministic = j.at("deterministic").get<bool>();
        c.options.eval_every = j.at("eval_every").get<std::uint32_t>();
        const auto& cj = j.at("corpus");
        c.corpus = {cj.at("docs").get<std::uint64_t>(), cj.at("words").get<std::uint64_t>(),
                    cj.at("tokens").get<std::uint64_t>(), cj.at("hash").get<std::uint64_t>()};
    } catch (const nlohmann::json::exception& e) {
        throw InputError(state_path, fmt::format("bad checkpoint state: {}", e.what()));
    }
    if (c.alpha.size() != c.options.params.num_topics || c.grid_side < 1)
        throw InputError(state_path, "inconsistent checkpoint state (alpha size or grid side)");

    const std::string bytes = read_whole(topics_path);
    std::size_t pos = 0;
    auto take = [&](void* dst, std::size_t n, const char* what) {
        if (bytes.size() - pos < n)
            throw InputError(topics_path, fmt::format("truncated inside the {}", what));
        std::memcpy(dst, bytes.data() + pos, n);
        pos += n;
    };
    char magic[8];
    take(magic, 8, "header");
    if (std::memcmp(magic, kMagic, 8) != 0) throw InputError(topics_path, "wrong magic");
    std::uint32_t version = 0;
    take(&version, 4, "header");
    if (version != kTopicsVersion) throw InputError(topics_path, "unsupported version");
    std::uint64_t blocks = 0;
    take(&blocks, 8, "header");
    if (blocks != static_cast<std::uint64_t>(c.grid_side) * c.grid_side)
        throw InputError(topics_path, fmt::format("holds {} blocks, state.json implies {}", blocks,
                                                  c.grid_side * c.grid_side));
    c.block_topics.resize(blocks);
    for (auto& t : c.block_topics) {
        std::uint64_t n = 0;
        take(&n, 8, "block size");
        if (n > (bytes.size() - pos) / sizeof(TopicId))
            throw InputError(topics_path, "truncated inside a block's topics");
        t.resize(n);
        take(t.data(), n * sizeof(TopicId), "block topics");
    }
    if (pos != bytes.size()) throw InputError(topics_path, "trailing bytes after the last block");
    return c;
}

}  // namespace rotor::lda
