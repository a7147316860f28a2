#include "core/lda/synthetic_corpus.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::lda {

SyntheticCorpus make_synthetic_corpus(const SyntheticSpec& spec) {
    ROTOR_ASSERT(spec.num_topics > 0 && spec.vocab_size >= spec.num_topics,
                 "need at least one word per planted topic");
    ROTOR_ASSERT(spec.doc_alpha > 0 && spec.mean_doc_length > 0, "bad synthetic spec");
    Rng rng = Rng::from({spec.seed, 0x5e7});
    const std::uint32_t V = spec.vocab_size;
    const std::uint32_t T = spec.num_topics;

    // A random global word order, so frequent words are not simply the low ids.
    std::vector<WordId> order(V);
    for (std::uint32_t v = 0; v < V; ++v) order[v] = v;
    std::shuffle(order.begin(), order.end(), rng);

    SyntheticCorpus out;
    out.topic_word.assign(T, std::vector<double>(V, 0.0));
    std::vector<std::vector<double>> cumulative(T, std::vector<double>(V, 0.0));
    for (std::uint32_t t = 0; t < T; ++t) {
        std::vector<double>& phi = out.topic_word[t];
        for (std::uint32_t rank = 0; rank < V; ++rank) {
            const bool in_support = spec.disjoint_supports
                                        ? static_cast<std::uint64_t>(rank) * T / V == t
                                        : rng.uniform() < spec.support_fraction;
            if (!in_support) continue;
            // Within a disjoint slice the rank restarts, so every topic has a Zipfian head.
            const std::uint32_t local =
                spec.disjoint_supports ? rank - static_cast<std::uint32_t>(
                                                    (static_cast<std::uint64_t>(t) * V + T - 1) / T)
                                       : rank;
            phi[order[rank]] = std::pow(static_cast<double>(local) + 1.0, -spec.zipf_exponent);
        }
        double sum = 0;
        for (double p : phi) sum += p;
        if (sum == 0) {  // a tiny random support can be empty
            phi[order[t]] = 1.0;
            sum = 1.0;
        }
        double acc = 0;
        for (std::uint32_t v = 0; v < V; ++v) {
            phi[v] /= sum;
            acc += phi[v];
            cumulative[t][v] = acc;
        }
    }

    std::gamma_distribution<double> gamma(spec.doc_alpha, 1.0);
    std::vector<double> theta_cum(T);
    out.doc_offsets.reserve(spec.num_docs + 1);
    out.doc_offsets.push_back(0);
    out.word_ids.reserve(static_cast<std::size_t>(spec.num_docs) * spec.mean_doc_length);
    const std::uint32_t min_len = std::max<std::uint32_t>(1, spec.mean_doc_length / 2);
    const std::uint32_t span_len = spec.mean_doc_length + 1;
    for (std::uint32_t d = 0; d < spec.num_docs; ++d) {
        double acc = 0;
        for (std::uint32_t t = 0; t < T; ++t) {
            acc += gamma(rng) + 1e-300;
            theta_cum[t] = acc;
        }
        const std::uint32_t len = min_len + static_cast<std::uint32_t>(rng.below(span_len));
        for (std::uint32_t i = 0; i < len; ++i) {
            const double ut = rng.uniform() * acc;
            const auto t = static_cast<std::uint32_t>(std::min<std::size_t>(
                T - 1,
                std::upper_bound(theta_cum.begin(), theta_cum.end(), ut) - theta_cum.begin()));
            const std::vector<double>& cum = cumulative[t];
            const double uw = rng.uniform() * cum.back();
            const auto v = static_cast<WordId>(std::min<std::size_t>(
                V - 1, std::upper_bound(cum.begin(), cum.end(), uw) - cum.begin()));
            out.word_ids.push_back(v);
        }
        out.doc_offsets.push_back(out.word_ids.size());
    }
    return out;
}

double mean_best_cosine(const std::vector<std::vector<double>>& planted,
                        const std::vector<std::vector<double>>& learned) {
    auto cosine = [](const std::vector<double>& a, const std::vector<double>& b) {
        double ab = 0, aa = 0, bb = 0;
        for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
            ab += a[i] * b[i];
            aa += a[i] * a[i];
            bb += b[i] * b[i];
        }
        return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
    };
    if (planted.empty()) return 0;
    double sum = 0;
    for (const auto& p : planted) {
        double best = 0;
        for (const auto& l : learned) best = std::max(best, cosine(p, l));
        sum += best;
    }
    return sum / static_cast<double>(planted.size());
}

}  // namespace rotor::lda
