// A Corpus from arrays held in memory (the Python package's documents: a scipy.sparse CSR
// document-term matrix, or token lists), checked as strictly as the file readers check files:
// bad input is an InputError naming the array and the row, never an assert.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/corpus/corpus.h"

namespace rotor::core {

/// Doc d of the result holds, for each stored entry i of row d in order
/// (indptr[d] <= i < indptr[d+1]), values[i] tokens of word indices[i]; its label is d + 1 (as
/// read_uci labels UCI doc d + 1), W = num_words. The arrays are those of a CSR matrix (scipy's
/// indptr, indices, data) as scipy holds them: Index is std::int32_t or std::int64_t, Value is
/// double, float, std::int64_t or std::int32_t (counts convert exactly up to 2^53). Zero counts
/// are allowed (no tokens). Throws InputError naming `name` (e.g. "X: row 3, column 7: count -1
/// is not a non-negative integer", "X: row 0, column 1: value NaN is not finite"; rows and
/// columns 0-based as numpy numbers them) unless: indptr has D + 1 >= 1 entries rising from 0
/// to nnz, indices and values have nnz entries, every index is in [0, num_words), every count
/// is a finite non-negative integer, and D, W and the tokens stay within `limits` (max_docs,
/// max_words, max_tokens, max_bytes). O(nnz + N) time; besides a copy of indptr, the corpus is
/// its only allocation, made after every check.
template <class Index, class Value>
Corpus corpus_from_counts(std::span<const Index> indptr, std::span<const Index> indices,
                          std::span<const Value> values, std::uint64_t num_words,
                          const std::string& name, const ReadLimits& limits = {});

/// The same with 64-bit indices and double counts (any numeric array converts to these).
inline Corpus corpus_from_counts(std::span<const std::int64_t> indptr,
                                 std::span<const std::int64_t> indices,
                                 std::span<const double> values, std::uint64_t num_words,
                                 const std::string& name, const ReadLimits& limits = {}) {
    return corpus_from_counts<std::int64_t, double>(indptr, indices, values, num_words, name,
                                                    limits);
}

/// Doc d holds the word ids word_ids[offsets[d] .. offsets[d+1]) in that order (token lists as
/// they were written); label d + 1, W = num_words. Throws InputError naming `name` and the row
/// unless offsets rise from 0 to word_ids.size() and every id is in [0, num_words), and within
/// `limits` as above.
Corpus corpus_from_tokens(std::span<const std::int64_t> offsets,
                          std::span<const std::int64_t> word_ids, std::uint64_t num_words,
                          const std::string& name, const ReadLimits& limits = {});

}  // namespace rotor::core
