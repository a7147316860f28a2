#include "core/lda/coherence.h"

#include <algorithm>
#include <cmath>
#include <span>

#include <fmt/format.h>

#include "core/base/error.h"

namespace rotor::lda {
namespace {

constexpr std::uint32_t kNone = 0xFFFFFFFFu;

/// The distinct words of all lists: slot[w] is w's index among them (kNone if unlisted).
struct ListedWords {
    std::vector<std::uint32_t> slot;  ///< W entries
    std::vector<WordId> words;        ///< per slot, in order of first appearance
};

ListedWords index_listed(WordId w_count, const std::vector<std::vector<WordId>>& top) {
    ListedWords out;
    out.slot.assign(w_count, kNone);
    std::vector<WordId> sorted;
    for (std::size_t t = 0; t < top.size(); ++t) {
        sorted = top[t];
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
            throw InputError("<corpus>", fmt::format("topic {} lists a word twice", t));
        for (const WordId w : top[t]) {
            if (w >= w_count)
                throw InputError("<corpus>", fmt::format("topic {}: word id {} is not below the "
                                                         "corpus's W = {}",
                                                         t, w, w_count));
            if (out.slot[w] == kNone) {
                out.slot[w] = static_cast<std::uint32_t>(out.words.size());
                out.words.push_back(w);
            }
        }
    }
    return out;
}

/// The documents of each listed word, ascending, as CSR over slots: docs[begin[s], begin[s+1]).
struct Postings {
    std::vector<std::uint64_t> begin;
    std::vector<DocId> docs;
    std::uint64_t size(std::uint32_t s) const { return begin[s + 1] - begin[s]; }
};

/// Calls fn(slot, d) once per listed word per document d it occurs in, documents ascending.
template <class Fn>
void for_each_listed_doc(const core::Corpus& corpus, const ListedWords& listed, Fn&& fn) {
    std::vector<DocId> last(listed.words.size(), kNone);
    for (DocId d = 0; d < corpus.num_docs(); ++d) {
        for (const WordId w : corpus.doc(d)) {
            const std::uint32_t s = listed.slot[w];
            if (s != kNone && last[s] != d) {
                last[s] = d;
                fn(s, d);
            }
        }
    }
}

Postings postings(const core::Corpus& corpus, const ListedWords& listed) {
    const std::size_t n = listed.words.size();
    // Two passes over the corpus: count each word's documents, then fill.
    Postings p;
    p.begin.assign(n + 1, 0);
    for_each_listed_doc(corpus, listed, [&](std::uint32_t s, DocId) { ++p.begin[s + 1]; });
    for (std::size_t s = 0; s < n; ++s) {
        if (p.begin[s + 1] == 0)
            throw InputError("<corpus>", fmt::format("word id {} occurs in no document: is this "
                                                     "the training corpus?",
                                                     listed.words[s]));
        p.begin[s + 1] += p.begin[s];
    }
    p.docs.resize(p.begin[n]);
    std::vector<std::uint64_t> at(p.begin.begin(), p.begin.end() - 1);
    for_each_listed_doc(corpus, listed, [&](std::uint32_t s, DocId d) { p.docs[at[s]++] = d; });
    return p;
}

/// Co-document counts of the distinct word pairs of all lists, each pair counted once. A pair
/// is keyed by its anchor, the word in more documents (ties: the lower slot), in the high half:
/// the anchor's documents go into a bitmap once, and each partner's documents are looked up
/// in it, so a pair costs the SMALLER of its two document counts.
class PairCounts {
  public:
    PairCounts(const std::vector<std::vector<WordId>>& top, const ListedWords& listed,
               const Postings& p, DocId num_docs)
        : postings_(p) {
        std::size_t pairs = 0;
        for (const auto& list : top)
            if (list.size() > 1) pairs += list.size() * (list.size() - 1) / 2;
        keys_.reserve(pairs);  // exactly: umass_coherence_bytes counts 8 bytes a pair
        for (const auto& list : top)
            for (std::size_t m = 1; m < list.size(); ++m)
                for (std::size_t l = 0; l < m; ++l)
                    keys_.push_back(key(listed.slot[list[m]], listed.slot[list[l]]));
        std::sort(keys_.begin(), keys_.end());
        keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
        counts_.resize(keys_.size());
        std::vector<std::uint64_t> bits((static_cast<std::size_t>(num_docs) + 63) / 64, 0);
        std::size_t i = 0;
        while (i < keys_.size()) {
            const auto anchor = static_cast<std::uint32_t>(keys_[i] >> 32);
            const std::span<const DocId> mine = docs(anchor);
            for (const DocId d : mine) bits[d >> 6] |= std::uint64_t{1} << (d & 63);
            for (; i < keys_.size() && (keys_[i] >> 32) == anchor; ++i) {
                std::uint32_t n = 0;
                for (const DocId d : docs(static_cast<std::uint32_t>(keys_[i])))
                    n += static_cast<std::uint32_t>((bits[d >> 6] >> (d & 63)) & 1);
                counts_[i] = n;
            }
            for (const DocId d : mine) bits[d >> 6] = 0;
        }
    }

    /// D(a, b): documents containing both slots' words.
    std::uint32_t operator()(std::uint32_t a, std::uint32_t b) const {
        const auto it = std::lower_bound(keys_.begin(), keys_.end(), key(a, b));
        return counts_[static_cast<std::size_t>(it - keys_.begin())];
    }

  private:
    std::uint64_t key(std::uint32_t a, std::uint32_t b) const {
        const std::uint64_t na = postings_.size(a);
        const std::uint64_t nb = postings_.size(b);
        if (nb > na || (nb == na && b < a)) std::swap(a, b);
        return (std::uint64_t{a} << 32) | b;
    }
    std::span<const DocId> docs(std::uint32_t s) const {
        return {postings_.docs.data() + postings_.begin[s], postings_.size(s)};
    }

    const Postings& postings_;
    std::vector<std::uint64_t> keys_;  ///< sorted, distinct
    std::vector<std::uint32_t> counts_;
};

}  // namespace

Coherence umass_coherence(const core::Corpus& corpus, const std::vector<std::vector<WordId>>& top) {
    const ListedWords listed = index_listed(corpus.num_words(), top);
    const Postings p = postings(corpus, listed);
    const PairCounts co_docs(top, listed, p, corpus.num_docs());
    Coherence out;
    out.per_topic.reserve(top.size());
    for (const auto& list : top) {
        // Mimno et al. 2011, eq. 1: the conditional of the lower-ranked word given the
        // higher-ranked one, with +1 smoothing of the joint count.
        double c = 0;
        for (std::size_t m = 1; m < list.size(); ++m) {
            for (std::size_t l = 0; l < m; ++l) {
                const std::uint32_t sm = listed.slot[list[m]];
                const std::uint32_t sl = listed.slot[list[l]];
                c += std::log((static_cast<double>(co_docs(sm, sl)) + 1.0) /
                              static_cast<double>(p.size(sl)));
            }
        }
        out.per_topic.push_back(c);
    }
    if (!out.per_topic.empty()) {
        double sum = 0;
        for (const double c : out.per_topic) sum += c;
        out.mean = sum / static_cast<double>(out.per_topic.size());
    }
    return out;
}

std::uint64_t umass_coherence_bytes(std::uint64_t num_tokens, WordId num_words, DocId num_docs,
                                    std::uint64_t num_topics, std::uint64_t top) {
    if (top < 2) return 0;
    const std::uint64_t listed = std::min<std::uint64_t>(num_words, num_topics * top);
    const std::uint64_t pairs = num_topics * (top * (top - 1) / 2);
    // A slot per word; per listed word its id, posting start, fill position and last document;
    // the postings (at most one per token); pair keys and counts; the anchor bitmap; one list's
    // sorted copy.
    return 4 * std::uint64_t{num_words} + listed * (4 + 8 + 8 + 4) + 4 * num_tokens + pairs * 12 +
           (std::uint64_t{num_docs} + 63) / 64 * 8 + 4 * top;
}

}  // namespace rotor::lda
