#include "core/lda/topic_init.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::lda {

void InitOptions::validate() const {
    if (doc_topics == 0) throw ConfigError("--init-doc-topics", "must be at least 1");
    if (!(word_prior >= 0) || !std::isfinite(word_prior))
        throw ConfigError("--init-word-prior", "must be 0 (automatic) or a positive number");
}

double auto_word_prior(double mean_doc_length) { return std::clamp(mean_doc_length, 1.0, 30.0); }

double first_sweep_beta(const InitOptions& options, double beta, std::uint32_t num_topics) {
    if (options.method != InitMethod::kSequential) return beta;
    ROTOR_ASSERT(options.word_prior > 0, "the word prior must be resolved (auto_word_prior)");
    return std::max(beta, options.word_prior / static_cast<double>(num_topics));
}

InitMethod parse_init_method(std::string_view name) {
    if (name == "random") return InitMethod::kRandom;
    if (name == "sparse") return InitMethod::kSparse;
    if (name == "sequential") return InitMethod::kSequential;
    throw ConfigError("--init",
                      "must be random, sparse or sequential, not '" + std::string(name) + "'");
}

std::string init_method_name(InitMethod method) {
    switch (method) {
        case InitMethod::kSparse:
            return "sparse";
        case InitMethod::kSequential:
            return "sequential";
        case InitMethod::kRandom:
            break;
    }
    return "random";
}

void init_topics_sparse(std::span<TokenBlock> blocks, std::uint32_t num_docs,
                        std::uint32_t num_topics, std::uint32_t doc_topics, std::uint64_t seed) {
    ROTOR_ASSERT(num_topics > 0, "K must be positive");
    InitOptions{InitMethod::kSparse, doc_topics}.validate();
    const std::uint32_t c = std::min(doc_topics, num_topics);
    // Each document's c distinct topics, by rejection (c <= K; c is small against K in use, and
    // at c close to K the expected draws stay below K·H_K).
    std::vector<TopicId> chosen(static_cast<std::size_t>(num_docs) * c);
    for (std::uint32_t d = 0; d < num_docs; ++d) {
        Rng rng = Rng::from({seed, kSparseInitDocStream, d});
        TopicId* const set = chosen.data() + static_cast<std::size_t>(d) * c;
        for (std::uint32_t i = 0; i < c;) {
            const auto k = static_cast<TopicId>(rng.below(num_topics));
            if (std::find(set, set + i, k) == set + i) set[i++] = k;
        }
    }
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        Rng rng = Rng::from({seed, static_cast<std::uint64_t>(b)});
        TokenBlock& blk = blocks[b];
        for (std::size_t t = 0; t < blk.topics.size(); ++t) {
            const DocId d = blk.docs[t];
            ROTOR_ASSERT(d < num_docs, "doc id out of range");
            blk.topics[t] = chosen[static_cast<std::size_t>(d) * c + rng.below(c)];
        }
    }
}

void init_topics(std::span<TokenBlock> blocks, std::uint32_t num_docs, std::uint32_t num_topics,
                 const InitOptions& options, std::uint64_t seed) {
    options.validate();
    if (options.method == InitMethod::kSparse) {
        init_topics_sparse(blocks, num_docs, num_topics, options.doc_topics, seed);
    } else if (options.method == InitMethod::kSequential) {
        for (TokenBlock& blk : blocks)
            std::fill(blk.topics.begin(), blk.topics.end(), kUnassignedTopic);
    } else {
        init_topics(blocks, num_topics, seed);
    }
}

}  // namespace rotor::lda
