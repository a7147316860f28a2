// Big K and big V: single-threaded sweeps of the SparseLDA kernel over one synthetic corpus
// (generated, never stored) at several K, printing per sweep the CPU seconds and ns per token,
// the bucket fractions, and per K the memory the tables were planned to take against what the
// process grew by (docs/sampler.md, "Big K and big V").
//
//   lda_big_k [docs=150000] [vocab=1000000] [len=100] [planted=50] [sweeps=8]
//             [topics=1000,100000] [uci=PATH]
// uci=PATH also writes the corpus as UCI docword text, for `rotor lda train` (memory plan
// against peak RSS).
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/base/rng.h"
#include "core/lda/sparse_lda_sampler.h"
#include "core/lda/synthetic_corpus.h"

namespace {

using namespace rotor;
using namespace rotor::lda;

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// A field of /proc/self/status in bytes (VmRSS, VmHWM), 0 if unknown.
std::uint64_t status_bytes(const std::string& key) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key + ":", 0) == 0)
            return std::strtoull(line.c_str() + key.size() + 1, nullptr, 10) * 1024;
    }
    return 0;
}

double mib(std::uint64_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); }

// UCI docword: D, W, NNZ, then "doc word count" lines, 1-based.
void write_uci(const std::string& path, const SyntheticCorpus& c, std::uint32_t V) {
    std::vector<std::string> lines;
    std::uint64_t nnz = 0;
    std::string body;
    for (std::uint32_t d = 0; d < c.num_docs(); ++d) {
        std::map<WordId, std::uint32_t> counts;
        for (std::uint64_t i = c.doc_offsets[d]; i < c.doc_offsets[d + 1]; ++i)
            ++counts[c.word_ids[i]];
        for (const auto& [w, n] : counts) {
            body += std::to_string(d + 1) + ' ' + std::to_string(w + 1) + ' ' + std::to_string(n) +
                    '\n';
            ++nnz;
        }
    }
    std::ofstream out(path);
    out << c.num_docs() << '\n' << V << '\n' << nnz << '\n' << body;
}

struct Run {
    double ns_first = 0;  // ns per token of the first sweep
    double ns_last = 0;   // mean ns per token of the second half of the sweeps
};

Run run_k(const SyntheticCorpus& c, std::uint32_t V, std::uint32_t K, int sweeps) {
    const std::uint64_t rss0 = status_bytes("VmRSS");
    const std::vector<std::uint32_t> rows(c.num_docs(), 0), cols(V, 0);
    auto blocks = build_blocks(c.doc_offsets, c.word_ids, rows, cols, 1);
    init_topics(blocks, K, 1);
    DocTopicTable dt = DocTopicTable::from_blocks(K, c.num_docs(), blocks);
    WordTopicTable wt = WordTopicTable::from_blocks(K, V, blocks);
    std::vector<TotalCount> totals = count_topic_totals(blocks, K);
    LdaParams p;
    p.num_topics = K;
    SparseLdaSampler sampler(p, V);
    std::uint32_t dense = 0;
    for (WordId w = 0; w < V; ++w) dense += wt.is_dense(w) ? 1 : 0;
    // The tables, and per K the totals (8 bytes) and the sampler's scratch (41 bytes).
    const std::uint64_t planned = blocks[0].memory_bytes() + dt.memory_bytes() + wt.memory_bytes() +
                                  static_cast<std::uint64_t>(K) * (8 + 41);
    const double n = static_cast<double>(c.num_tokens());
    std::printf(
        "# K=%u tables: blocks %.1f MiB, doc-topic %.1f MiB, word-topic %.1f MiB (%u dense rows of "
        "%.0f KiB)\n",
        K, mib(blocks[0].memory_bytes()), mib(dt.memory_bytes()), mib(wt.memory_bytes()), dense,
        4.0 * K / 1024);
    std::printf("sweep\tK\tcpu_s\tns_per_token\tdoc\tword\tsmoothing\treused\n");
    Run run;
    double late = 0;
    int late_n = 0;
    for (int s = 1; s <= sweeps; ++s) {
        const auto before = sampler.stats();
        const double cpu0 = thread_cpu_seconds();
        Rng rng = Rng::from({1, static_cast<std::uint64_t>(s), 0});
        sampler.sample_block(blocks[0], dt, wt, totals, rng, nullptr);
        const double cpu = thread_cpu_seconds() - cpu0;
        const auto& st = sampler.stats();
        const double ns = 1e9 * cpu / n;
        std::printf("%d\t%u\t%.3f\t%.1f\t%.3f\t%.3f\t%.3f\t%.3f\n", s, K, cpu, ns,
                    static_cast<double>(st.doc - before.doc) / n,
                    static_cast<double>(st.word - before.word) / n,
                    static_cast<double>(st.smoothing - before.smoothing) / n,
                    static_cast<double>(st.reused - before.reused) / n);
        std::fflush(stdout);
        if (s == 1) run.ns_first = ns;
        if (2 * s > sweeps) {
            late += ns;
            ++late_n;
        }
    }
    run.ns_last = late / late_n;
    std::printf("# K=%u memory: planned %.1f MiB, RSS grew %.1f MiB (peak RSS so far %.1f MiB)\n",
                K, mib(planned), mib(status_bytes("VmRSS") - rss0), mib(status_bytes("VmHWM")));
    return run;
}

}  // namespace

int main(int argc, char** argv) {
    std::map<std::string, std::string> opt = {{"docs", "150000"}, {"vocab", "1000000"},
                                              {"len", "100"},     {"planted", "50"},
                                              {"sweeps", "8"},    {"topics", "1000,100000"}};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto eq = a.find('=');
        if (eq == std::string::npos || opt.count(a.substr(0, eq)) == 0) {
            if (a.rfind("uci=", 0) != 0) {
                std::fprintf(stderr, "lda_big_k: unknown argument '%s'\n", a.c_str());
                return 2;
            }
        }
        opt[a.substr(0, eq)] = a.substr(eq + 1);
    }
    SyntheticSpec spec;
    spec.num_docs = static_cast<std::uint32_t>(std::stoul(opt["docs"]));
    spec.vocab_size = static_cast<std::uint32_t>(std::stoul(opt["vocab"]));
    spec.mean_doc_length = static_cast<std::uint32_t>(std::stoul(opt["len"]));
    spec.num_topics = static_cast<std::uint32_t>(std::stoul(opt["planted"]));
    spec.disjoint_supports = false;
    spec.support_fraction = 0.1;
    spec.seed = 5;
    const int sweeps = std::stoi(opt["sweeps"]);
    std::vector<std::uint32_t> ks;
    for (std::size_t at = 0; at < opt["topics"].size();) {
        std::size_t used = 0;
        ks.push_back(static_cast<std::uint32_t>(std::stoul(opt["topics"].substr(at), &used)));
        at += used + 1;
    }
    SyntheticCorpus c = make_synthetic_corpus(spec);
    c.topic_word = {};  // V doubles per planted topic: not needed here
    std::vector<std::uint32_t> freq(spec.vocab_size, 0);
    for (WordId w : c.word_ids) ++freq[w];
    std::uint32_t seen = 0;
    for (std::uint32_t f : freq) seen += f > 0 ? 1 : 0;
    std::printf("# synthetic: D=%u V=%u (%u words occur) N=%llu planted=%u\n", c.num_docs(),
                spec.vocab_size, seen, static_cast<unsigned long long>(c.num_tokens()),
                spec.num_topics);
    if (opt.count("uci") != 0) write_uci(opt["uci"], c, spec.vocab_size);
    std::vector<Run> runs;
    for (std::uint32_t K : ks) runs.push_back(run_k(c, spec.vocab_size, K, sweeps));
    for (std::size_t i = 1; i < ks.size(); ++i) {
        std::printf("# ns/token K=%u / K=%u: first sweep %.2f, second half %.2f\n", ks[i], ks[0],
                    runs[i].ns_first / runs[0].ns_first, runs[i].ns_last / runs[0].ns_last);
    }
    return 0;
}
