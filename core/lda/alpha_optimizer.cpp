#include "core/lda/alpha_optimizer.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/base/error.h"

namespace rotor::lda {

void DocTopicHistograms::add_doc(std::span<const Count> counts) {
    ROTOR_ASSERT(counts.size() == topic_counts.size(), "row size != K");
    std::uint64_t length = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
        const Count c = counts[k];
        if (c == 0) continue;
        auto& h = topic_counts[k];
        if (h.size() <= c) h.resize(static_cast<std::size_t>(c) + 1, 0);
        ++h[c];
        length += c;
    }
    if (length == 0) return;
    if (doc_lengths.size() <= length) doc_lengths.resize(length + 1, 0);
    ++doc_lengths[length];
}

namespace {

void add_sparse(DocTopicHistograms& h, std::span<const TopicCount> row) {
    std::uint64_t length = 0;
    for (const TopicCount& e : row) {
        auto& hk = h.topic_counts[e.topic];
        if (hk.size() <= e.count) hk.resize(static_cast<std::size_t>(e.count) + 1, 0);
        ++hk[e.count];
        length += e.count;
    }
    if (length == 0) return;
    if (h.doc_lengths.size() <= length) h.doc_lengths.resize(length + 1, 0);
    ++h.doc_lengths[length];
}

}  // namespace

DocTopicHistograms doc_topic_histograms(const DocTopicTable& table) {
    DocTopicHistograms h(table.num_topics());
    for (DocId d = 0; d < table.num_docs(); ++d) add_sparse(h, table.row(d));
    return h;
}

DocTopicHistograms doc_topic_histograms(const SparseCounts& doc_topic, std::uint32_t num_topics) {
    DocTopicHistograms h(num_topics);
    std::vector<TopicCount> row;
    for (std::size_t d = 0; d < doc_topic.rows(); ++d) {
        row.clear();
        for (auto i = doc_topic.offsets[d]; i < doc_topic.offsets[d + 1]; ++i) {
            ROTOR_ASSERT(doc_topic.topics[i] < num_topics, "topic id out of range");
            row.push_back(TopicCount{doc_topic.topics[i], doc_topic.counts[i]});
        }
        add_sparse(h, row);
    }
    return h;
}

void AlphaOptimizerOptions::validate() const {
    if (iterations == 0) throw ConfigError("alpha-optimizer.iterations", "must be at least 1");
    if (!(tolerance >= 0)) throw ConfigError("alpha-optimizer.tolerance", "must be >= 0");
    if (!(shape >= 0) || !std::isfinite(shape))
        throw ConfigError("alpha-optimizer.shape", "must be a finite number >= 0");
    if (!(scale > 0)) throw ConfigError("alpha-optimizer.scale", "must be > 0 (inf: no prior)");
    if (!(min_alpha > 0) || !std::isfinite(min_alpha))
        throw ConfigError("alpha-optimizer.min_alpha", "must be a positive finite number");
}

AlphaOptimizerResult optimize_alpha(const DocTopicHistograms& hist, std::span<const double> alpha,
                                    const AlphaOptimizerOptions& options) {
    options.validate();
    const std::size_t k_count = hist.topic_counts.size();
    if (alpha.size() != k_count)
        throw ConfigError("alpha",
                          fmt::format("has {} values for {} topics", alpha.size(), k_count));
    for (const double a : alpha)
        if (!(a > 0) || !std::isfinite(a))
            throw ConfigError("alpha", "every value must be a positive finite number");

    AlphaOptimizerResult out;
    out.alpha.assign(alpha.begin(), alpha.end());
    double alpha_sum = 0;
    for (const double a : out.alpha) alpha_sum += a;
    const double inv_scale = std::isinf(options.scale) ? 0.0 : 1.0 / options.scale;

    // The largest nonzero bin of every histogram, so that the loops skip the empty tails.
    auto last_nonzero = [](const std::vector<std::uint64_t>& h) {
        std::size_t n = h.size();
        while (n > 1 && h[n - 1] == 0) --n;
        return n;  // one past the last nonzero bin (1 if none)
    };
    const std::size_t len_end = last_nonzero(hist.doc_lengths);
    std::vector<std::size_t> topic_end(k_count);
    for (std::size_t k = 0; k < k_count; ++k) topic_end[k] = last_nonzero(hist.topic_counts[k]);

    std::vector<double> next(k_count);
    for (std::uint32_t it = 0; it < options.iterations; ++it) {
        // Denominator: Σ_n L[n] (ψ(Σα + n) − ψ(Σα)), the running sum being the digamma
        // difference by the recurrence ψ(x+1) = ψ(x) + 1/x (Mallet's learnParameters).
        double denominator = 0;
        double digamma_diff = 0;
        for (std::size_t n = 1; n < len_end; ++n) {
            digamma_diff += 1.0 / (alpha_sum + static_cast<double>(n) - 1.0);
            denominator += static_cast<double>(hist.doc_lengths[n]) * digamma_diff;
        }
        denominator -= inv_scale;
        if (!(denominator > 0)) break;

        double new_sum = 0;
        double max_change = 0;
        for (std::size_t k = 0; k < k_count; ++k) {
            const double old = out.alpha[k];
            const auto& h = hist.topic_counts[k];
            double numerator = 0;
            double diff = 0;
            for (std::size_t n = 1; n < topic_end[k]; ++n) {
                diff += 1.0 / (old + static_cast<double>(n) - 1.0);
                numerator += static_cast<double>(h[n]) * diff;
            }
            next[k] = std::max(options.min_alpha, old * (numerator + options.shape) / denominator);
            max_change = std::max(max_change, std::abs(next[k] - old) / old);
            new_sum += next[k];
        }
        out.alpha.swap(next);
        alpha_sum = new_sum;
        out.updated = true;
        ++out.iterations;
        if (max_change < options.tolerance) break;
    }
    return out;
}

}  // namespace rotor::lda
