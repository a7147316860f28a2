#include "core/lda/likelihood.h"

#include <cmath>

#include "core/base/error.h"

namespace rotor::lda {
namespace {

// lnΓ without touching the global `signgam` that std::lgamma writes (POSIX), so that threads
// building likelihoods at once do not race. Every argument here is positive.
double lgamma_safe(double x) {
    int sign = 0;
    return ::lgamma_r(x, &sign);
}

}  // namespace

namespace {
// Counts below this come from a table (512 KiB of doubles each); the rest from std::lgamma.
constexpr std::size_t kLgammaTableSize = 1 << 16;
}  // namespace

LgammaTable::LgammaTable(double offset, std::size_t size)
    : offset_(offset), base_(lgamma_safe(offset)), table_(size) {
    for (std::size_t n = 0; n < size; ++n) {
        table_[n] = lgamma_safe(static_cast<double>(n) + offset) - base_;
    }
}

double LgammaTable::operator()(std::uint64_t n) const {
    if (n < table_.size()) return table_[n];
    return lgamma_safe(static_cast<double>(n) + offset_) - base_;
}

Likelihood::Likelihood(const LdaParams& params, std::uint32_t vocab_size)
    : num_topics_(params.num_topics),
      vbeta_(static_cast<double>(vocab_size) * params.beta),
      symmetric_(params.symmetric_alpha()) {
    params.validate();
    alpha_ = params.topic_alphas();
    alpha_sum_ = 0;
    for (double a : alpha_) {
        alpha_sum_ += a;
        lg_alpha_.push_back(lgamma_safe(a));
    }
    beta_table_ = LgammaTable(params.beta, kLgammaTableSize);
    if (symmetric_) alpha_table_ = LgammaTable(alpha_[0], kLgammaTableSize);
    alpha_sum_table_ = LgammaTable(alpha_sum_, kLgammaTableSize);
}

double Likelihood::word_part(const WordTopicTable& table, WordId word_begin,
                             WordId word_end) const {
    ROTOR_ASSERT(word_begin <= word_end && word_end <= table.num_words(), "bad word range");
    double sum = 0;
    for (WordId w = word_begin; w < word_end; ++w) {
        table.for_each_nonzero(w, [&](TopicId, Count c) { sum += beta_table_(c); });
    }
    return sum;
}

double Likelihood::doc_part(const DocTopicTable& table, DocId doc_begin, DocId doc_end) const {
    ROTOR_ASSERT(doc_begin <= doc_end && doc_end <= table.num_docs(), "bad doc range");
    double sum = 0;
    for (DocId d = doc_begin; d < doc_end; ++d) {
        TotalCount n_d = 0;
        for (const TopicCount& e : table.row(d)) {
            n_d += e.count;
            if (symmetric_) {
                sum += alpha_table_(e.count);
            } else {
                sum += lgamma_safe(e.count + alpha_[e.topic]) - lg_alpha_[e.topic];
            }
        }
        // lnΓ(Σα) − lnΓ(n_d + Σα); zero for an empty doc.
        sum -= alpha_sum_table_(static_cast<std::uint64_t>(n_d));
    }
    return sum;
}

double Likelihood::topic_part(std::span<const TotalCount> topic_totals) const {
    ROTOR_ASSERT(topic_totals.size() == num_topics_, "topic_totals must have K entries");
    double sum = 0;
    for (TotalCount n : topic_totals) {
        sum -= lgamma_safe(static_cast<double>(n) + vbeta_) - lgamma_safe(vbeta_);
    }
    return sum;
}

LogLikelihood Likelihood::combine(double word_part_sum, double doc_part_sum,
                                  std::span<const TotalCount> topic_totals) const {
    LogLikelihood out;
    out.loglik_word = word_part_sum + topic_part(topic_totals);
    out.loglik = out.loglik_word + doc_part_sum;
    return out;
}

LogLikelihood Likelihood::evaluate(const WordTopicTable& word_topic, const DocTopicTable& doc_topic,
                                   std::span<const TotalCount> topic_totals) const {
    return combine(word_part(word_topic, 0, word_topic.num_words()),
                   doc_part(doc_topic, 0, doc_topic.num_docs()), topic_totals);
}

}  // namespace rotor::lda
