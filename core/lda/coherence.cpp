#include "core/lda/coherence.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/base/error.h"

namespace rotor::lda {

Coherence umass_coherence(const core::Corpus& corpus, const std::vector<std::vector<WordId>>& top) {
    const WordId w_count = corpus.num_words();
    constexpr std::uint32_t kNone = 0xFFFFFFFFu;
    // slot[w]: index of w among the distinct words of all lists.
    std::vector<std::uint32_t> slot(w_count, kNone);
    std::vector<WordId> slot_word;
    for (std::size_t t = 0; t < top.size(); ++t) {
        std::vector<WordId> sorted = top[t];
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
            throw InputError("<corpus>", fmt::format("topic {} lists a word twice", t));
        for (const WordId w : top[t]) {
            if (w >= w_count)
                throw InputError("<corpus>", fmt::format("topic {}: word id {} is not below the "
                                                         "corpus's W = {}",
                                                         t, w, w_count));
            if (slot[w] == kNone) {
                slot[w] = static_cast<std::uint32_t>(slot_word.size());
                slot_word.push_back(w);
            }
        }
    }
    // The documents of each listed word, ascending (one pass over the corpus).
    std::vector<std::vector<DocId>> docs_of(slot_word.size());
    for (DocId d = 0; d < corpus.num_docs(); ++d) {
        for (const WordId w : corpus.doc(d)) {
            const std::uint32_t s = slot[w];
            if (s != kNone && (docs_of[s].empty() || docs_of[s].back() != d))
                docs_of[s].push_back(d);
        }
    }
    for (std::size_t s = 0; s < slot_word.size(); ++s)
        if (docs_of[s].empty())
            throw InputError("<corpus>", fmt::format("word id {} occurs in no document: is this "
                                                     "the training corpus?",
                                                     slot_word[s]));

    auto co_docs = [&](std::uint32_t a, std::uint32_t b) {
        const auto& x = docs_of[a];
        const auto& y = docs_of[b];
        std::size_t i = 0, j = 0, n = 0;
        while (i < x.size() && j < y.size()) {
            if (x[i] < y[j]) {
                ++i;
            } else if (y[j] < x[i]) {
                ++j;
            } else {
                ++n;
                ++i;
                ++j;
            }
        }
        return n;
    };

    Coherence out;
    out.per_topic.reserve(top.size());
    for (const auto& list : top) {
        // Mimno et al. 2011, eq. 1: the conditional of the lower-ranked word given the
        // higher-ranked one, with +1 smoothing of the joint count.
        double c = 0;
        for (std::size_t m = 1; m < list.size(); ++m) {
            for (std::size_t l = 0; l < m; ++l) {
                const std::uint32_t sm = slot[list[m]];
                const std::uint32_t sl = slot[list[l]];
                c += std::log((static_cast<double>(co_docs(sm, sl)) + 1.0) /
                              static_cast<double>(docs_of[sl].size()));
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

}  // namespace rotor::lda
