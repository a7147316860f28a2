// The first topics of a run: how the trainer fills the blocks' topics before the first sweep.
// Uniform random topics (init_topics in core/lda/token_block.h) make every doc-topic row
// min(K, n_d) wide, and the word-major SparseLDA sampler pays O(K_d) per token for that in its
// first sweeps; the sparse initialisation here starts every document on a few topics instead,
// and the sequential one leaves every token unassigned for the first sweep to draw in turn.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/lda/token_block.h"

namespace rotor::lda {

/// The initialisations the trainer offers (--init).
enum class InitMethod {
    kRandom,  ///< every token uniform in [0, K) (init_topics)
    kSparse,  ///< every document draws a few topics, its tokens choose among them uniformly
    /// every token starts unassigned (kUnassignedTopic, in no count) and the first sweep draws
    /// each from the counts of the tokens assigned before it (as Mallet starts), with SparseLDA
    kSequential,
};

/// --init's value, with --init-doc-topics for kSparse. A plain value type.
struct InitOptions {
    InitMethod method = InitMethod::kRandom;
    /// kSparse: topics per document (c); a document uses at most min(c, K, n_d) of them.
    std::uint32_t doc_topics = 4;
    /// kSequential: the pseudo-counts of a word's row in the first sweep, spread evenly over
    /// the K topics (that sweep draws with β' = max(β, word_prior / K); first_sweep_beta);
    /// 0 is automatic, auto_word_prior of the corpus. With β = 0.01 a word's first token would
    /// otherwise outweigh the prior of its row 100 to 1 and pull every later token of the word
    /// to its topic: the start is then far ahead on log p(w,z) but behind held out
    /// (docs/sampler.md, "Sequential initialisation").
    double word_prior = 0;
    /// Throws ConfigError("--init-doc-topics") when doc_topics is 0 and
    /// ConfigError("--init-word-prior") when word_prior is negative or not finite.
    void validate() const;
};

/// The automatic --init-word-prior: min(30, the corpus' mean document length in tokens), at
/// least 1. Long documents give each draw a context that a strong word prior lets decide;
/// short ones give little, and there a weaker prior keeps the start's head start at no cost
/// held out (docs/sampler.md).
double auto_word_prior(double mean_doc_length);

/// β of the first sweep's draws: max(β, word_prior / K) for kSequential (word_prior resolved:
/// > 0), β otherwise.
double first_sweep_beta(const InitOptions& options, double beta, std::uint32_t num_topics);

/// "random", "sparse" or "sequential" to the method; throws ConfigError("--init") otherwise.
InitMethod parse_init_method(std::string_view name);
/// The method's --init name.
std::string init_method_name(InitMethod method);

/// Sparse initialisation. Document d (a doc id of the blocks, < num_docs) draws min(c, K)
/// distinct topics from Rng::from({seed, kSparseInitDocStream, d}); each of its tokens then takes
/// one of them uniformly, block b drawing from Rng::from({seed, b}) in the block's token order.
/// So the result does not depend on which thread initialises which block, and a document's
/// row has at most min(c, K, n_d) nonzero topics. Time O(N + D·c), extra memory D·min(c, K)·4
/// bytes. Throws ConfigError("--init-doc-topics") when c == 0; a doc id >= num_docs or K == 0
/// is a caller bug (assert).
void init_topics_sparse(std::span<TokenBlock> blocks, std::uint32_t num_docs,
                        std::uint32_t num_topics, std::uint32_t doc_topics, std::uint64_t seed);

/// Fills the blocks' topics with `options`' method: init_topics, init_topics_sparse, or
/// kUnassignedTopic everywhere (kSequential: the first sweep draws them).
void init_topics(std::span<TokenBlock> blocks, std::uint32_t num_docs, std::uint32_t num_topics,
                 const InitOptions& options, std::uint64_t seed);

/// The stream of a document's topic set in init_topics_sparse ("SPRS").
inline constexpr std::uint64_t kSparseInitDocStream = 0x53505253;

}  // namespace rotor::lda
