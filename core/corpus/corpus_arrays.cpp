#include "core/corpus/corpus_arrays.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/base/error.h"

namespace rotor::core {
namespace {

/// The CSR row offsets: D + 1 >= 1 entries rising from 0 to `nnz`; the shape within limits.
void check_offsets(std::span<const std::int64_t> offsets, std::uint64_t nnz,
                   std::uint64_t num_words, const std::string& name, const std::string& what,
                   const ReadLimits& limits) {
    if (offsets.empty())
        throw InputError(name,
                         fmt::format("{} is empty: it needs one entry per row plus one", what));
    if (offsets.size() - 1 > limits.max_docs)
        throw InputError(name, fmt::format("{} rows, more than the {} a corpus may hold",
                                           offsets.size() - 1, limits.max_docs));
    if (num_words > limits.max_words)
        throw InputError(name, fmt::format("{} columns, more than the {} a vocabulary may hold",
                                           num_words, limits.max_words));
    if (offsets.front() != 0)
        throw InputError(name, fmt::format("{}[0] is {}, not 0", what, offsets.front()));
    for (std::size_t d = 0; d + 1 < offsets.size(); ++d)
        if (offsets[d + 1] < offsets[d])
            throw InputError(name, fmt::format("row {}: {} falls from {} to {}", d, what,
                                               offsets[d], offsets[d + 1]));
    if (static_cast<std::uint64_t>(offsets.back()) != nnz)
        throw InputError(
            name, fmt::format("{} ends at {} but there are {} entries", what, offsets.back(), nnz));
}

/// The row of entry i (offsets checked), for messages.
std::size_t row_of(std::span<const std::int64_t> offsets, std::size_t i) {
    const auto after =
        std::upper_bound(offsets.begin() + 1, offsets.end(), static_cast<std::int64_t>(i));
    return static_cast<std::size_t>(after - offsets.begin()) - 1;
}

/// The limits on the tokens (count and bytes), before anything is allocated.
void check_tokens(std::uint64_t tokens, std::uint64_t docs, const std::string& name,
                  const ReadLimits& limits) {
    if (tokens > limits.max_tokens)
        throw InputError(
            name, fmt::format("{} tokens, more than the limit of {}", tokens, limits.max_tokens));
    const double bytes = static_cast<double>(tokens) * sizeof(WordId) +
                         static_cast<double>(docs) * ReadLimits::kBytesPerDoc;
    if (bytes > static_cast<double>(limits.max_bytes))
        limits.refuse_bytes(static_cast<std::uint64_t>(bytes), name, 0, 0,
                            fmt::format("{} tokens", tokens));
}

std::vector<std::uint64_t> labels_for(std::size_t docs) {
    std::vector<std::uint64_t> labels(docs);
    for (std::size_t d = 0; d < docs; ++d) labels[d] = d + 1;
    return labels;
}

}  // namespace

template <class Index, class Value>
Corpus corpus_from_counts(std::span<const Index> indptr, std::span<const Index> indices,
                          std::span<const Value> values, std::uint64_t num_words,
                          const std::string& name, const ReadLimits& limits) {
    if (indices.size() != values.size())
        throw InputError(
            name, fmt::format("{} column indices but {} values", indices.size(), values.size()));
    const std::vector<std::int64_t> offsets(indptr.begin(), indptr.end());
    check_offsets(offsets, indices.size(), num_words, name, "indptr", limits);
    // Every entry first, so that nothing is allocated for input that is refused. The rows'
    // token counts are summed as doubles (a count of any type, at most 2^53 exactly) and
    // checked against the limits before the tokens are allocated.
    const std::size_t docs = offsets.size() - 1;
    double tokens = 0;
    for (std::size_t i = 0; i < indices.size(); ++i) {
        const auto v = static_cast<double>(values[i]);
        if (!(v >= 0 && std::isfinite(v) && v == std::floor(v))) {
            const std::size_t row = row_of(offsets, i);
            if (std::isfinite(v))
                throw InputError(name, fmt::format("row {}, column {}: count {:g} is not a "
                                                   "non-negative integer",
                                                   row, indices[i], v));
            throw InputError(
                name, fmt::format("row {}, column {}: value {} is not finite", row, indices[i],
                                  std::isnan(v) ? "NaN" : (v > 0 ? "inf" : "-inf")));
        }
        if (indices[i] < 0 || static_cast<std::uint64_t>(indices[i]) >= num_words)
            throw InputError(name, fmt::format("row {}: column {} is outside [0, {})",
                                               row_of(offsets, i), indices[i], num_words));
        tokens += v;
    }
    if (tokens > static_cast<double>(limits.max_tokens) || tokens > 9.0e18)
        throw InputError(name, fmt::format("{:.0f} tokens, more than the limit of {}", tokens,
                                           limits.max_tokens));
    check_tokens(static_cast<std::uint64_t>(tokens), docs, name, limits);
    std::vector<TokenIndex> doc_offsets(docs + 1, 0);
    std::vector<WordId> words(static_cast<std::size_t>(tokens));
    WordId* out = words.data();
    for (std::size_t d = 0; d < docs; ++d) {
        for (auto i = static_cast<std::size_t>(offsets[d]);
             i < static_cast<std::size_t>(offsets[d + 1]); ++i)
            out = std::fill_n(out, static_cast<std::size_t>(values[i]),
                              static_cast<WordId>(indices[i]));
        doc_offsets[d + 1] = static_cast<TokenIndex>(out - words.data());
    }
    return Corpus(std::move(doc_offsets), std::move(words), labels_for(docs),
                  static_cast<WordId>(num_words));
}

// The index and value types of the arrays scipy and numpy hand over without a copy.
template Corpus corpus_from_counts(std::span<const std::int32_t>, std::span<const std::int32_t>,
                                   std::span<const double>, std::uint64_t, const std::string&,
                                   const ReadLimits&);
template Corpus corpus_from_counts(std::span<const std::int32_t>, std::span<const std::int32_t>,
                                   std::span<const float>, std::uint64_t, const std::string&,
                                   const ReadLimits&);
template Corpus corpus_from_counts(std::span<const std::int32_t>, std::span<const std::int32_t>,
                                   std::span<const std::int64_t>, std::uint64_t, const std::string&,
                                   const ReadLimits&);
template Corpus corpus_from_counts(std::span<const std::int32_t>, std::span<const std::int32_t>,
                                   std::span<const std::int32_t>, std::uint64_t, const std::string&,
                                   const ReadLimits&);
template Corpus corpus_from_counts(std::span<const std::int64_t>, std::span<const std::int64_t>,
                                   std::span<const double>, std::uint64_t, const std::string&,
                                   const ReadLimits&);
template Corpus corpus_from_counts(std::span<const std::int64_t>, std::span<const std::int64_t>,
                                   std::span<const float>, std::uint64_t, const std::string&,
                                   const ReadLimits&);
template Corpus corpus_from_counts(std::span<const std::int64_t>, std::span<const std::int64_t>,
                                   std::span<const std::int64_t>, std::uint64_t, const std::string&,
                                   const ReadLimits&);
template Corpus corpus_from_counts(std::span<const std::int64_t>, std::span<const std::int64_t>,
                                   std::span<const std::int32_t>, std::uint64_t, const std::string&,
                                   const ReadLimits&);

Corpus corpus_from_tokens(std::span<const std::int64_t> offsets,
                          std::span<const std::int64_t> word_ids, std::uint64_t num_words,
                          const std::string& name, const ReadLimits& limits) {
    check_offsets(offsets, word_ids.size(), num_words, name, "offsets", limits);
    for (std::size_t i = 0; i < word_ids.size(); ++i)
        if (word_ids[i] < 0 || static_cast<std::uint64_t>(word_ids[i]) >= num_words)
            throw InputError(name, fmt::format("row {}: word id {} is outside [0, {})",
                                               row_of(offsets, i), word_ids[i], num_words));
    const std::size_t docs = offsets.size() - 1;
    check_tokens(word_ids.size(), docs, name, limits);
    std::vector<TokenIndex> off(offsets.begin(), offsets.end());
    std::vector<WordId> words(word_ids.begin(), word_ids.end());
    return Corpus(std::move(off), std::move(words), labels_for(docs),
                  static_cast<WordId>(num_words));
}

}  // namespace rotor::core
