// Full single-threaded sweeps of the LDA kernel over a UCI bag-of-words corpus, printing after
// each sweep its seconds, tokens/s and log-likelihood per token: the number that matters is
// log-likelihood reached per second. A measurement driver, not part of rotor: it parses UCI
// itself so that it depends on nothing but core/lda.
//
//   lda_kernel_sweeps [docword.txt[.gz]] [K=100] [sweeps=50] [L=1] [alpha=50/K] [beta=0.01]
// Default corpus: /work/data/kernel/docword.txt.gz, then /work/data/kernel/docword.txt.
// LDA_SWEEPS_SAVE=FILE writes every token's topic after the last sweep; LDA_SWEEPS_LOAD=FILE
// starts from such a file instead of random topics (profiling steady state, docs/sampler.md).
// LDA_SWEEPS_SAMPLER=mh sweeps with MhSampler (LDA_SWEEPS_MH_CYCLES cycles a token, default 2)
// instead of SparseLdaSampler. LDA_SWEEPS_DOC_BUCKET=scalar|avx2 makes SparseLdaSampler
// compute its doc bucket with that version instead of the fastest one (they draw the same
// samples: an A/B of the versions in one binary).
#include <time.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/base/rng.h"
#include "core/base/timer.h"
#include "core/lda/likelihood.h"
#include "core/lda/mh_sampler.h"
#include "core/lda/sparse_lda_sampler.h"

namespace {

// CPU seconds of this thread: the machine may be shared, and wall time would then measure the
// neighbours too.
double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// FNV-1a over every token's topic: two builds drew the same samples iff their hashes agree.
std::uint64_t topic_hash(const std::vector<rotor::lda::TokenBlock>& blocks) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const auto& b : blocks) {
        for (rotor::TopicId z : b.topics) h = (h ^ z) * 0x100000001b3ULL;
    }
    return h;
}

// The state after burn-in, for profiling one steady-state sweep under valgrind without paying
// for the burn-in there: every block's topics, raw, in block order (same corpus, K and L).
bool save_topics(const char* path, const std::vector<rotor::lda::TokenBlock>& blocks) {
    std::FILE* f = std::fopen(path, "wb");
    if (f == nullptr) return false;
    bool ok = true;
    for (const auto& b : blocks)
        ok = ok && std::fwrite(b.topics.data(), sizeof(rotor::TopicId), b.topics.size(), f) ==
                       b.topics.size();
    return std::fclose(f) == 0 && ok;
}

bool load_topics(const char* path, std::vector<rotor::lda::TokenBlock>& blocks, std::uint32_t K) {
    std::FILE* f = std::fopen(path, "rb");
    if (f == nullptr) return false;
    bool ok = true;
    for (auto& b : blocks) {
        ok = ok && std::fread(b.topics.data(), sizeof(rotor::TopicId), b.topics.size(), f) ==
                       b.topics.size();
        for (rotor::TopicId z : b.topics) ok = ok && z < K;
    }
    std::fclose(f);
    return ok;
}

struct Uci {
    std::uint32_t docs = 0, words = 0;
    std::vector<std::uint64_t> doc_offsets;
    std::vector<rotor::WordId> word_ids;
};

bool read_uci(const std::string& path, Uci& out) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (f == nullptr) return false;
    gzbuffer(f, 1 << 20);
    char line[256];
    std::uint64_t header[3] = {0, 0, 0};
    for (auto& h : header) {
        if (gzgets(f, line, sizeof line) == nullptr) return false;
        h = std::strtoull(line, nullptr, 10);
    }
    out.docs = static_cast<std::uint32_t>(header[0]);
    out.words = static_cast<std::uint32_t>(header[1]);
    std::vector<std::uint64_t> lengths(out.docs + 1, 0);
    std::vector<std::uint32_t> triples;
    triples.reserve(3 * header[2]);
    while (gzgets(f, line, sizeof line) != nullptr) {
        char* p = line;
        const auto d = std::strtoul(p, &p, 10);
        const auto w = std::strtoul(p, &p, 10);
        const auto c = std::strtoul(p, &p, 10);
        if (d == 0 || w == 0 || d > out.docs || w > out.words) continue;
        triples.insert(triples.end(),
                       {static_cast<std::uint32_t>(d - 1), static_cast<std::uint32_t>(w - 1),
                        static_cast<std::uint32_t>(c)});
        lengths[d] += c;
    }
    gzclose(f);
    out.doc_offsets.assign(out.docs + 1, 0);
    for (std::uint32_t d = 0; d < out.docs; ++d)
        out.doc_offsets[d + 1] = out.doc_offsets[d] + lengths[d + 1];
    out.word_ids.resize(out.doc_offsets.back());
    std::vector<std::uint64_t> cursor(out.doc_offsets.begin(), out.doc_offsets.end() - 1);
    for (std::size_t i = 0; i < triples.size(); i += 3) {
        for (std::uint32_t r = 0; r < triples[i + 2]; ++r)
            out.word_ids[cursor[triples[i]]++] = triples[i + 1];
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace rotor;
    using namespace rotor::lda;
    std::string path = argc > 1 ? argv[1] : "";
    if (path.empty()) {
        for (const char* p :
             {"/work/data/kernel/docword.txt.gz", "/work/data/kernel/docword.txt"}) {
            if (std::filesystem::exists(p)) path = p;
        }
    }
    Uci uci;
    if (path.empty() || !read_uci(path, uci)) {
        std::fprintf(stderr, "lda_kernel_sweeps: cannot read a UCI corpus at '%s'\n", path.c_str());
        return 2;
    }
    LdaParams p;
    p.num_topics = argc > 2 ? static_cast<std::uint32_t>(std::atoi(argv[2])) : 100;
    const int sweeps = argc > 3 ? std::atoi(argv[3]) : 50;
    const auto L = static_cast<std::uint32_t>(argc > 4 ? std::atoi(argv[4]) : 1);
    if (argc > 5) p.alpha = std::atof(argv[5]);
    if (argc > 6) p.beta = std::atof(argv[6]);
    try {
        p.validate();
        const std::uint32_t V = uci.words;
        const std::uint32_t K = p.num_topics;
        std::vector<std::uint32_t> rows(uci.docs), cols(V);
        Rng part(3);
        for (auto& r : rows) r = static_cast<std::uint32_t>(part.below(L));
        for (auto& c : cols) c = static_cast<std::uint32_t>(part.below(L));
        Stopwatch setup;
        auto blocks = build_blocks(uci.doc_offsets, uci.word_ids, rows, cols, L);
        init_topics(blocks, K, 1);
        if (const char* load = std::getenv("LDA_SWEEPS_LOAD"); load != nullptr) {
            if (!load_topics(load, blocks, K)) {
                std::fprintf(stderr, "lda_kernel_sweeps: cannot load topics from '%s'\n", load);
                return 2;
            }
        }
        DocTopicTable dt = DocTopicTable::from_blocks(K, uci.docs, blocks);
        WordTopicTable wt = WordTopicTable::from_blocks(K, V, blocks);
        std::vector<TotalCount> totals = count_topic_totals(blocks, K);
        const double n = static_cast<double>(uci.word_ids.size());
        std::size_t block_bytes = 0;
        for (const auto& b : blocks) block_bytes += b.memory_bytes();
        std::printf("# %s D=%u V=%u N=%.0f K=%u L=%u alpha=%g beta=%g setup=%.2fs\n", path.c_str(),
                    uci.docs, V, n, K, L, p.resolved_alpha(), p.beta, setup.seconds());
        std::printf("# bytes/token: blocks %.2f doc-topic %.2f word-topic %.2f\n",
                    static_cast<double>(block_bytes) / n,
                    static_cast<double>(dt.memory_bytes()) / n,
                    static_cast<double>(wt.memory_bytes()) / n);
        const Likelihood lik(p, V);
        // The doc-token index of MhSampler, over the L x L grid (built after the topics are
        // final).
        DocTokenIndex index;
        std::unique_ptr<Sampler> sampler;
        const char* kind = std::getenv("LDA_SWEEPS_SAMPLER");
        const bool mh = kind != nullptr && std::string(kind) == "mh";
        if (mh) {
            const char* cycles = std::getenv("LDA_SWEEPS_MH_CYCLES");
            index.build(blocks, L, uci.docs);
            sampler = std::make_unique<MhSampler>(
                p, V, index,
                cycles != nullptr ? static_cast<std::uint32_t>(std::atoi(cycles))
                                  : MhSampler::kDefaultCycles);
        } else {
            auto sparse = std::make_unique<SparseLdaSampler>(p, V);
            if (const char* bucket = std::getenv("LDA_SWEEPS_DOC_BUCKET"); bucket != nullptr) {
                const std::string b = bucket;
                const lda::detail::DocMassesFn f = b == "scalar" ? &lda::detail::doc_masses_scalar
                                                   : b == "avx2" ? lda::detail::doc_masses_avx2()
                                                                 : nullptr;
                if (f == nullptr) {
                    std::fprintf(stderr, "LDA_SWEEPS_DOC_BUCKET=%s: unknown or not on this CPU\n",
                                 bucket);
                    return 3;
                }
                sparse->use_doc_masses(f);
                std::printf("# doc bucket %s\n", bucket);
            }
            sampler = std::move(sparse);
        }
        std::printf("# sampler %s\n", mh ? "mh" : "sparse");
        std::printf(
            "sweep\twall_s\tcpu_s\ttotal_cpu_s\ttokens_per_cpu_s\tloglik_per_token\tloglik_word_"
            "per_token\ttopics_hash\n");
        const LogLikelihood l0 = lik.evaluate(wt, dt, totals);
        std::printf("0\t0\t0\t0\t0\t%.6f\t%.6f\n", l0.loglik / n, l0.loglik_word / n);
        double total_s = 0;
        for (int s = 1; s <= sweeps; ++s) {
            Stopwatch sw;
            const double cpu0 = thread_cpu_seconds();
            std::uint64_t tokens = 0;
            for (std::size_t b = 0; b < blocks.size(); ++b) {
                Rng rng = Rng::from({1, static_cast<std::uint64_t>(s), b});
                tokens += sampler->sample_block(blocks[b], dt, wt, totals, rng, nullptr);
            }
            const double secs = sw.seconds();
            const double cpu = thread_cpu_seconds() - cpu0;
            total_s += cpu;
            const LogLikelihood l = lik.evaluate(wt, dt, totals);
            std::printf("%d\t%.4f\t%.4f\t%.3f\t%.0f\t%.6f\t%.6f\t%016llx\n", s, secs, cpu, total_s,
                        static_cast<double>(tokens) / cpu, l.loglik / n, l.loglik_word / n,
                        static_cast<unsigned long long>(topic_hash(blocks)));
            std::fflush(stdout);
        }
        if (const char* save = std::getenv("LDA_SWEEPS_SAVE"); save != nullptr) {
            if (!save_topics(save, blocks)) {
                std::fprintf(stderr, "lda_kernel_sweeps: cannot save topics to '%s'\n", save);
                return 2;
            }
        }
    } catch (const Error& e) {
        std::fprintf(stderr, "lda_kernel_sweeps: %s\n", e.what());
        return 2;
    }
    return 0;
}
