#include "core/corpus/corpus.h"

#include <algorithm>

#include "core/base/error.h"

namespace rotor::core {
namespace {

/// The owned arrays behind a Corpus built in memory.
struct OwnedStorage {
    std::vector<TokenIndex> offsets;
    std::vector<WordId> words;
    std::vector<std::uint64_t> labels;
};

}  // namespace

Corpus::Corpus() : Corpus(std::vector<TokenIndex>{0}, {}, {}, 0) {}

Corpus::Corpus(std::vector<TokenIndex> doc_offsets, std::vector<WordId> word_ids,
               std::vector<std::uint64_t> doc_labels, WordId num_words)
    : num_words_(num_words) {
    ROTOR_ASSERT(!doc_offsets.empty() && doc_offsets.front() == 0, "offsets must start at 0");
    ROTOR_ASSERT(doc_offsets.back() == word_ids.size(), "offsets must end at N");
    ROTOR_ASSERT(doc_labels.size() + 1 == doc_offsets.size(), "one label per doc");
    ROTOR_ASSERT(std::is_sorted(doc_offsets.begin(), doc_offsets.end()), "offsets not monotone");
    ROTOR_ASSERT(std::ranges::all_of(word_ids, [num_words](WordId w) { return w < num_words; }),
                 "word id >= num_words");
    auto owned = std::make_shared<OwnedStorage>(
        OwnedStorage{std::move(doc_offsets), std::move(word_ids), std::move(doc_labels)});
    offsets_ = owned->offsets;
    words_ = owned->words;
    labels_ = owned->labels;
    storage_ = std::move(owned);
}

Corpus Corpus::view(std::shared_ptr<const void> owner, std::span<const TokenIndex> doc_offsets,
                    std::span<const WordId> word_ids, std::span<const std::uint64_t> doc_labels,
                    WordId num_words) {
    ROTOR_ASSERT(doc_offsets.size() == doc_labels.size() + 1, "one label per doc");
    Corpus c;
    c.storage_ = std::move(owner);
    c.offsets_ = doc_offsets;
    c.words_ = word_ids;
    c.labels_ = doc_labels;
    c.num_words_ = num_words;
    return c;
}

Corpus Corpus::from_docs(std::vector<std::vector<WordId>> docs, WordId num_words) {
    CorpusBuilder b(num_words);
    for (const auto& d : docs) b.doc(d);
    return b.build();
}

std::vector<TotalCount> Corpus::word_frequencies() const {
    std::vector<TotalCount> freq(num_words_, 0);
    for (WordId w : words_) ++freq[w];
    return freq;
}

WordMajorView Corpus::word_major() const {
    WordMajorView v;
    v.offsets.assign(static_cast<std::size_t>(num_words_) + 1, 0);
    for (WordId w : words_) ++v.offsets[w + 1];
    for (std::size_t w = 0; w < num_words_; ++w) v.offsets[w + 1] += v.offsets[w];
    v.docs.resize(words_.size());
    v.positions.resize(words_.size());
    std::vector<TokenIndex> next(v.offsets.begin(), v.offsets.end() - 1);
    // Docs are visited in order, so each word's docs come out ascending.
    for (DocId d = 0; d < num_docs(); ++d) {
        for (TokenIndex i = offsets_[d]; i < offsets_[d + 1]; ++i) {
            const TokenIndex slot = next[words_[i]]++;
            v.docs[slot] = d;
            v.positions[slot] = i;
        }
    }
    return v;
}

bool operator==(const Corpus& a, const Corpus& b) {
    return a.num_words_ == b.num_words_ && std::ranges::equal(a.offsets_, b.offsets_) &&
           std::ranges::equal(a.words_, b.words_) && std::ranges::equal(a.labels_, b.labels_);
}

CorpusBuilder& CorpusBuilder::doc(std::span<const WordId> words) {
    begin_doc(labels_.size() + 1);
    for (WordId w : words) add(w);
    return *this;
}

CorpusBuilder& CorpusBuilder::begin_doc(std::uint64_t label) {
    if (!labels_.empty()) offsets_.push_back(words_.size());
    labels_.push_back(label);
    return *this;
}

CorpusBuilder& CorpusBuilder::add(WordId w, std::uint64_t count) {
    ROTOR_ASSERT(!labels_.empty(), "add() before begin_doc()");
    ROTOR_ASSERT(!num_words_ || w < *num_words_, "word id >= num_words");
    max_word_plus_one_ = std::max(max_word_plus_one_, w + 1);
    words_.insert(words_.end(), count, w);
    return *this;
}

Corpus CorpusBuilder::build() {
    if (!labels_.empty()) offsets_.push_back(words_.size());
    const WordId w = num_words_.value_or(max_word_plus_one_);
    Corpus c(std::move(offsets_), std::move(words_), std::move(labels_), w);
    offsets_ = {0};
    words_.clear();
    labels_.clear();
    max_word_plus_one_ = 0;
    return c;
}

}  // namespace rotor::core
