#include "core/lda/heldout.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/base/error.h"
#include "core/lda/word_topic_table.h"

namespace rotor::lda {

double HeldoutResult::loglik_per_token() const {
    return scored_tokens == 0 ? 0.0 : loglik / static_cast<double>(scored_tokens);
}

double HeldoutResult::perplexity() const { return std::exp(-loglik_per_token()); }

DocumentCompleter::DocumentCompleter(const FoldInTables& tables)
    : phi_(tables.phi()), sampler_(tables), theta_(tables.num_topics(), 0.0) {}

void DocumentCompleter::complete(std::span<const WordId> doc, const FoldInOptions& options,
                                 Rng& rng, HeldoutResult& out) {
    fit_.clear();
    for (std::size_t i = 0; i < doc.size(); i += 2) fit_.push_back(doc[i]);
    sampler_.infer(fit_, options, rng, theta_);
    out.fit_tokens += fit_.size();
    if (doc.size() < 2) return;

    // p(w | θ, φ) = Σ_k θ_k φ_kw = Σ_k θ_k s_k + Σ_{k ∈ row w} θ_k r_kw.
    const auto s = phi_.smoothing();
    double smooth_mass = 0;
    for (std::size_t k = 0; k < theta_.size(); ++k) smooth_mass += theta_[k] * s[k];
    double ll = 0;
    std::uint64_t scored = 0;
    for (std::size_t i = 1; i < doc.size(); i += 2) {
        const auto topics = phi_.row_topics(doc[i]);
        const auto values = phi_.row_values(doc[i]);
        double p = smooth_mass;
        for (std::size_t j = 0; j < topics.size(); ++j) p += theta_[topics[j]] * values[j];
        ll += std::log(p);
        ++scored;
    }
    out.loglik += ll;
    out.scored_tokens += scored;
    out.docs += 1;
}

HeldoutEvaluator::HeldoutEvaluator(core::Corpus heldout, FoldInOptions options)
    : corpus_(std::move(heldout)), options_(options) {
    options_.validate();
    std::vector<std::uint8_t> used(corpus_.num_words(), 0);
    for (const WordId w : corpus_.word_ids()) used[w] = 1;
    for (WordId w = 0; w < used.size(); ++w)
        if (used[w] != 0) words_.push_back(w);
}

HeldoutResult HeldoutEvaluator::evaluate(const TopicWordDistribution& phi,
                                         std::span<const double> alpha,
                                         const RangeLoop& loop) const {
    return sum(evaluate_docs(phi, alpha, 0, corpus_.num_docs(), loop));
}

std::vector<HeldoutResult> HeldoutEvaluator::evaluate_docs(const TopicWordDistribution& phi,
                                                           std::span<const double> alpha,
                                                           DocId begin, DocId end,
                                                           const RangeLoop& loop) const {
    if (corpus_.num_words() > phi.num_words())
        throw ConfigError("--heldout",
                          fmt::format("the held-out corpus has {} words but the model {}",
                                      corpus_.num_words(), phi.num_words()));
    ROTOR_ASSERT(alpha.size() == phi.num_topics(), "alpha size != K");
    ROTOR_ASSERT(begin <= end && end <= corpus_.num_docs(), "document range out of the corpus");
    // One slot per document, summed in document order afterwards (sum()): the same sum at any
    // number of threads and any split of the range.
    std::vector<HeldoutResult> per_doc(end - begin);
    if (begin == end) return per_doc;
    const auto labels = corpus_.doc_labels();
    // The fold-in tables of the range's words only (all of words() for the whole corpus).
    std::vector<WordId> words;
    if (begin == 0 && end == corpus_.num_docs()) {
        words.assign(words_.begin(), words_.end());
    } else {
        for (DocId d = begin; d < end; ++d) {
            const auto doc = corpus_.doc(d);
            words.insert(words.end(), doc.begin(), doc.end());
        }
        std::sort(words.begin(), words.end());
        words.erase(std::unique(words.begin(), words.end()), words.end());
    }
    const FoldInTables tables(phi, alpha, words, loop);
    loop(begin, end, [&](std::int64_t lo, std::int64_t hi) {
        DocumentCompleter completer(tables);
        for (auto d = static_cast<DocId>(lo); d < static_cast<DocId>(hi); ++d) {
            Rng rng = Rng::from({options_.seed, labels[d]});
            completer.complete(corpus_.doc(d), options_, rng, per_doc[d - begin]);
        }
    });
    return per_doc;
}

HeldoutResult HeldoutEvaluator::sum(std::span<const HeldoutResult> per_doc) {
    HeldoutResult total;
    for (const HeldoutResult& r : per_doc) {
        total.docs += r.docs;
        total.fit_tokens += r.fit_tokens;
        total.scored_tokens += r.scored_tokens;
        total.loglik += r.loglik;
    }
    return total;
}

HeldoutResult HeldoutEvaluator::evaluate(const WordTopicTable& word_topic,
                                         std::span<const TotalCount> topic_totals,
                                         const LdaParams& params, const RangeLoop& loop) const {
    params.validate();
    if (corpus_.num_words() > word_topic.num_words())
        throw ConfigError("--heldout",
                          fmt::format("the held-out corpus has {} words but the model {}",
                                      corpus_.num_words(), word_topic.num_words()));
    const TopicWordDistribution phi = phi_from_table(word_topic, topic_totals, params.beta, words_);
    const std::vector<double> alpha = params.topic_alphas();
    return evaluate(phi, alpha, loop);
}

HeldoutResult HeldoutEvaluator::evaluate(const LdaModel& model, const RangeLoop& loop) const {
    if (corpus_.num_words() > model.word_topic.rows())
        throw ConfigError("--heldout",
                          fmt::format("the held-out corpus has {} words but the model {}",
                                      corpus_.num_words(), model.word_topic.rows()));
    const TopicWordDistribution phi =
        phi_from_counts(model.word_topic, model.topic_totals, model.info.beta, words_);
    return evaluate(phi, model.info.alpha, loop);
}

}  // namespace rotor::lda
