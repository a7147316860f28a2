// One block of the doc x word grid (docs/architecture.md, "LDA as the worked example"):
// the tokens of one doc group x one word group, stored word-major so that the sampler walks one
// word-topic row at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/types.h"

namespace rotor::lda {

/// A token that has no topic yet (--init sequential, before its first draw). It is in no count
/// table: builders and count_topic_totals skip it, and SparseLdaSampler draws it from the counts
/// of the other assigned tokens and adds it (docs/sampler.md, "Sequential initialisation").
inline constexpr TopicId kUnassignedTopic = ~TopicId{0};

/// The tokens of one block, word-major. Token i of word j (words[j]) is at position
/// word_offsets[j] + i; its document is docs[...] (the rank's local DocId) and its topic
/// topics[...]. Within a word, tokens are ordered by increasing doc, so the tokens of one (word,
/// doc) pair are adjacent. Words are in increasing WordId order; they are row ids of the
/// word-topic table the block is sampled with (global ids with one slice of every word, as one
/// process has; positions in the block's slice with P > 1 ranks, whose tables hold one slice
/// each).
///
/// A value type; one thread at a time may mutate `topics` (the scheduler guarantees it).
struct TokenBlock {
    std::uint32_t row = 0;                    ///< doc group of the block, in [0, L)
    std::uint32_t col = 0;                    ///< word group of the block, in [0, L)
    std::vector<WordId> words;                ///< distinct words, increasing
    std::vector<TokenIndex> word_offsets{0};  ///< size words.size() + 1, into docs/topics
    std::vector<DocId> docs;                  ///< per token: its global document id
    std::vector<TopicId> topics;              ///< per token: its current topic, < K, or
                                              ///< kUnassignedTopic (--init sequential)

    TokenIndex num_tokens() const { return docs.size(); }
    std::size_t num_words() const { return words.size(); }
    /// Bytes held by the vectors (capacity, not size).
    std::size_t memory_bytes() const;
};

/// Cuts a doc-major corpus into L*L word-major blocks; block (row, col) is at index row*L + col.
/// doc_offsets (size D+1, doc_offsets[0] == 0, non-decreasing) and word_ids (size
/// doc_offsets[D]) are the corpus' CSR arrays; row_of_doc (size D) gives each doc's group and
/// col_of_word (size W) each word's group, both < L. With `topics` empty the topics are left 0
/// (see init_topics); otherwise `topics` (size N, one per token of word_ids) travel with their
/// tokens into the blocks. Time O(N + W + L^2), extra memory N * 4 bytes during the call (8 with
/// topics).
/// Throws ConfigError("--blocks") when L == 0 and InputError when a word id is >= W or a group
/// index is >= L; mismatched span sizes are a caller bug (assert).
std::vector<TokenBlock> build_blocks(std::span<const std::uint64_t> doc_offsets,
                                     std::span<const WordId> word_ids,
                                     std::span<const std::uint32_t> row_of_doc,
                                     std::span<const std::uint32_t> col_of_word, std::uint32_t L,
                                     std::span<const TopicId> topics = {});

/// Draws every token's topic uniformly in [0, K), block b from Rng::from({seed, b}) so the
/// result does not depend on which thread initialises which block.
void init_topics(std::span<TokenBlock> blocks, std::uint32_t num_topics, std::uint64_t seed);

/// n_k recounted from the blocks' topics (size K); unassigned tokens are not counted.
std::vector<TotalCount> count_topic_totals(std::span<const TokenBlock> blocks,
                                           std::uint32_t num_topics);

}  // namespace rotor::lda
