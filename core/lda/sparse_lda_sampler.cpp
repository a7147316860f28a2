#include "core/lda/sparse_lda_sampler.h"

#include <algorithm>

#include "core/base/error.h"
#include "core/lda/doc_bucket.h"

namespace rotor::lda {

namespace {
constexpr TopicId kNoTopic = ~TopicId{0};
constexpr DocId kNoDoc = ~DocId{0};
// Topics per group of the smoothing bucket's search, and groups per super-group (a third level,
// used only when K > kGroup * kGroup).
constexpr std::uint32_t kGroup = 64;
constexpr std::uint32_t kSuper = kGroup * kGroup;
// With K > kSuper, a word with more nonzero topics than this draws from its word bucket through
// per-group sums (O(K/4096 + 128)) instead of scanning its nonzeros (O(K_w)); below, and at any
// K <= kSuper, the scan (so the draws there are those of the plain scan).
constexpr std::size_t kGroupedWordNonzeros = 256;
// How many tokens ahead a doc row's entries are prefetched (its header twice as far ahead).
constexpr TokenIndex kPrefetch = 4;
// At most this many cache lines of a doc row are prefetched beyond its header.
constexpr std::uint32_t kRowLines = 8;
}  // namespace

SparseLdaSampler::SparseLdaSampler(const LdaParams& params, std::uint32_t vocab_size)
    : num_topics_(params.num_topics),
      beta_(params.beta),
      vbeta_(static_cast<double>(vocab_size) * params.beta),
      doc_masses_(detail::doc_masses_best()) {
    params.validate();
    alpha_ = params.topic_alphas();
    inv_.assign(num_topics_, 0.0);
    ainv_.assign(num_topics_, 0.0);
    word_dense_.assign(num_topics_, 0);
    in_nz_.assign(num_topics_, 0);
    word_nz_.reserve(num_topics_);
    doc_cum_.assign(num_topics_, 0.0);
    coef_.assign(num_topics_, 0.0);
    smooth_group_.assign((num_topics_ + kGroup - 1) / kGroup, 0.0);
    smooth_super_.assign((num_topics_ + kSuper - 1) / kSuper, 0.0);
    if (num_topics_ > kSuper) {
        word_group_.assign(smooth_group_.size(), 0.0);
        word_super_.assign(smooth_super_.size(), 0.0);
    }
}

std::vector<double> SparseLdaSampler::conditional(std::span<const Count> doc_counts,
                                                  std::span<const Count> word_counts,
                                                  std::span<const TotalCount> topic_totals,
                                                  const LdaParams& params,
                                                  std::uint32_t vocab_size) {
    const std::uint32_t K = params.num_topics;
    ROTOR_ASSERT(doc_counts.size() == K && word_counts.size() == K && topic_totals.size() == K,
                 "rows must have K entries");
    const std::vector<double> alpha = params.topic_alphas();
    const double vbeta = static_cast<double>(vocab_size) * params.beta;
    std::vector<double> p(K);
    double sum = 0;
    for (std::uint32_t k = 0; k < K; ++k) {
        p[k] = (word_counts[k] + params.beta) * (doc_counts[k] + alpha[k]) /
               (static_cast<double>(topic_totals[k]) + vbeta);
        sum += p[k];
    }
    for (double& x : p) x /= sum;
    return p;
}

TopicId SparseLdaSampler::word_draw_grouped(double u, const Count* nw, const double* ainv,
                                            const double* rgroup, const double* rsuper) const {
    const std::size_t num_supers = word_super_.size();
    std::size_t j = 0;
    while (j + 1 < num_supers && u >= rsuper[j]) u -= rsuper[j++];
    std::size_t g = j * kGroup;
    const std::size_t num_groups = std::min<std::size_t>(word_group_.size(), g + kGroup);
    while (g + 1 < num_groups && u >= rgroup[g]) u -= rgroup[g++];
    const TopicId first = static_cast<TopicId>(g * kGroup);
    const TopicId last = std::min<TopicId>(num_topics_, first + kGroup);
    TopicId chosen = kNoTopic;  // none when rounding left the group empty: the caller smooths
    double acc = 0;
    for (TopicId k = first; k < last; ++k) {
        if (nw[k] == 0) continue;
        acc += nw[k] * ainv[k];
        chosen = k;
        if (acc > u) break;
    }
    return chosen;
}

std::uint64_t SparseLdaSampler::sample_block(TokenBlock& block, DocTopicTable& doc_topic,
                                             WordTopicTable& word_topic,
                                             std::span<TotalCount> topic_totals, Rng& rng,
                                             const std::atomic<bool>* stop) {
    const std::uint32_t K = num_topics_;
    ROTOR_ASSERT(topic_totals.size() == K, "topic_totals must have K entries");
    ROTOR_ASSERT(doc_topic.num_topics() == K && word_topic.num_topics() == K,
                 "tables and sampler disagree on K");
    const double beta = beta_;
    const double vbeta = vbeta_;
    double* const inv = inv_.data();
    double* const ainv = ainv_.data();
    const double* const alpha = alpha_.data();
    TotalCount* const totals = topic_totals.data();
    std::uint8_t* const in_nz = in_nz_.data();
    double* const doc_cum = doc_cum_.data();

    double* const coef = coef_.data();
    double* const sgroup = smooth_group_.data();
    double* const ssuper = smooth_super_.data();

    // Smoothing bucket s = β Σ_k α_k / (n_k + Vβ), recomputed exactly once per block. Between
    // words coef[k] = β / (n_k + Vβ); inside a word, (n_wk + β) / (n_k + Vβ).
    // sgroup[g] is the smoothing mass of topics [g * kGroup, (g + 1) * kGroup), so that a
    // smoothing draw costs O(K / kGroup + kGroup) instead of O(K).
    double s = 0;
    std::fill(smooth_group_.begin(), smooth_group_.end(), 0.0);
    for (std::uint32_t k = 0; k < K; ++k) {
        inv[k] = 1.0 / (static_cast<double>(totals[k]) + vbeta);
        ainv[k] = alpha[k] * inv[k];
        coef[k] = beta * inv[k];
        sgroup[k / kGroup] += beta * ainv[k];
    }
    for (double g : smooth_group_) s += g;
    std::fill(smooth_super_.begin(), smooth_super_.end(), 0.0);
    for (std::size_t g = 0; g < smooth_group_.size(); ++g) ssuper[g / kGroup] += sgroup[g];

    std::uint64_t sampled = 0;
    const std::size_t num_words = block.words.size();
    const DocId* const docs = block.docs.data();
    TopicId* const topics = block.topics.data();
    for (std::size_t wi = 0; wi < num_words; ++wi) {
        if (stop != nullptr && stop->load(std::memory_order_relaxed)) break;
        const WordId w = block.words[wi];
        const TokenIndex tb = block.word_offsets[wi];
        const TokenIndex te = block.word_offsets[wi + 1];

        // Load the word row: in place when dense, unpacked into scratch when sparse.
        const bool dense = word_topic.is_dense(w);
        word_nz_.clear();
        Count* const nw = word_topic.open_row(w, word_dense_.data(), word_nz_, in_nz);
        // Word bucket r = Σ_k α_k n_wk / (n_k + Vβ) over the row's nonzeros; per group and
        // super-group too for a word with many nonzeros at large K.
        const bool grouped = !word_group_.empty() && word_nz_.size() > kGroupedWordNonzeros;
        double* const rgroup = word_group_.data();
        double* const rsuper = word_super_.data();
        double r = 0;
        for (TopicId k : word_nz_) {
            r += nw[k] * ainv[k];
            coef[k] = (nw[k] + beta) * inv[k];
        }
        if (grouped) {
            for (TopicId k : word_nz_) {
                rgroup[k / kGroup] += nw[k] * ainv[k];
                rsuper[k / kSuper] += nw[k] * ainv[k];
            }
        }
        // Scanning the word bucket from its largest counts first ends early; sorting pays when
        // the word has enough tokens here to amortise it.
        if (!grouped && word_nz_.size() > 2 && (te - tb) * 4 >= word_nz_.size()) {
            std::sort(word_nz_.begin(), word_nz_.end(),
                      [nw](TopicId a, TopicId b) { return nw[a] > nw[b]; });
        }

        // Moves one token of this word into (delta = +1) or out of (-1) topic k in the word row
        // and the totals, keeping s, r and the per-topic caches exact (up to rounding). The doc
        // row is handled apart: a token whose topic does not change never touches it.
        auto update_topic = [&](TopicId k, int delta) {
            const double old_ainv = ainv[k];
            const double old_mass = nw[k] * old_ainv;
            r -= old_mass;
            nw[k] = static_cast<Count>(static_cast<std::int64_t>(nw[k]) + delta);
            totals[k] += delta;
            inv[k] = 1.0 / (static_cast<double>(totals[k]) + vbeta);
            ainv[k] = alpha[k] * inv[k];
            coef[k] = (nw[k] + beta) * inv[k];
            const double ds = beta * (ainv[k] - old_ainv);
            s += ds;
            sgroup[k / kGroup] += ds;
            ssuper[k / kSuper] += ds;
            r += nw[k] * ainv[k];
            if (grouped) {
                const double dr = nw[k] * ainv[k] - old_mass;
                rgroup[k / kGroup] += dr;
                rsuper[k / kSuper] += dr;
            }
        };

        // The word's first rows, which the token loop's look-ahead does not reach.
        for (TokenIndex t = tb; t < te && t < tb + 2 * kPrefetch; ++t)
            prefetch_line(doc_topic.header(docs[t]));
        for (TokenIndex t = tb; t < te && t < tb + kPrefetch; ++t)
            doc_topic.prefetch_entries<kRowLines, true>(docs[t]);

        DocId prev_doc = kNoDoc;
        TopicId prev_old = kNoTopic;
        TopicId prev_new = kNoTopic;
        double q = 0;
        double r_used = 0;
        double s_used = 0;
        std::uint32_t nq = 0;
        std::uint32_t old_at = 0;  // position of the token's topic in its doc row
        for (TokenIndex t = tb; t < te; ++t) {
            const DocId d = docs[t];
            const TopicId old = topics[t];
            // Doc rows are the kernel's cache misses (word-major order visits docs at random):
            // a row's header 2·kPrefetch tokens ahead, its used lines (the size is in the
            // header) kPrefetch ahead.
            if (t + 2 * kPrefetch < te) prefetch_line(doc_topic.header(docs[t + 2 * kPrefetch]));
            if (t + kPrefetch < te)
                doc_topic.prefetch_entries<kRowLines, true>(docs[t + kPrefetch]);
            TopicCount* const dh = doc_topic.header(d);

            // The token is taken out of the word row and totals only ("virtually"): the doc
            // row keeps it and the doc bucket subtracts it on the fly. Saved values undo it
            // exactly when the token keeps its topic, the common case after burn-in.
            bool removed = false;
            double saved_s = 0, saved_r = 0, saved_inv = 0, saved_ainv = 0, saved_coef = 0;
            double saved_group = 0, saved_super = 0, saved_rgroup = 0, saved_rsuper = 0;
            // An unassigned token (--init sequential) is in no count: there is nothing to
            // remove, and it is added wherever it is drawn (it cannot "keep" its topic).
            auto remove_virtually = [&] {
                removed = true;
                if (old == kUnassignedTopic) return;
                saved_s = s;
                saved_group = sgroup[old / kGroup];
                saved_super = ssuper[old / kSuper];
                if (grouped) {
                    saved_rgroup = rgroup[old / kGroup];
                    saved_rsuper = rsuper[old / kSuper];
                }
                saved_r = r;
                saved_inv = inv[old];
                saved_ainv = ainv[old];
                saved_coef = coef[old];
                update_topic(old, -1);
            };

            // Same (word, doc), same topic, and the previous token kept it: the counts without
            // this token equal the counts the previous draw saw, so its buckets still hold.
            if (d == prev_doc && old == prev_old && old == prev_new) {
                ++stats_.reused;
            } else {
                remove_virtually();
                // Doc bucket q = Σ_{k: n_dk>0} n_dk (n_wk + β) / (n_k + Vβ), n_dk without
                // this token.
                nq = dh->topic;
                q = doc_masses_(dh + 1, nq, old, coef, doc_cum, &old_at);
                r_used = r > 0 ? r : 0;
                s_used = s;
            }

            double u = rng.uniform() * (q + r_used + s_used);
            TopicId chosen = kNoTopic;
            std::uint32_t chosen_at = nq;  // its position in the doc row, when drawn from there
            if (u < q) {
                ++stats_.doc;
                // Rows are sorted by decreasing count: the walk usually stops early.
                std::uint32_t i = 0;
                while (i + 1 < nq && u >= doc_cum[i]) u -= doc_cum[i++];
                chosen = dh[1 + i].topic;  // the row is unchanged since the masses
                chosen_at = i;
            } else {
                // The word and smoothing scans read the live counts: bring them to the state
                // without this token first (they equal the cached state exactly).
                if (!removed) remove_virtually();
                u -= q;
                if (u < r_used) {
                    ++stats_.word;
                    if (grouped) {
                        chosen = word_draw_grouped(u, nw, ainv, rgroup, rsuper);
                    } else {
                        double acc = 0;
                        for (TopicId k : word_nz_) {
                            if (nw[k] == 0) continue;
                            acc += nw[k] * ainv[k];
                            chosen = k;
                            if (acc > u) break;
                        }
                    }
                } else {
                    u -= r_used;
                }
                if (chosen == kNoTopic) {
                    // Smoothing bucket (or a word-bucket draw lost to rounding with no nonzero).
                    ++stats_.smoothing;
                    if (u >= s) u = rng.uniform() * s;
                    // Super-group (K > kSuper only), group, topic.
                    const std::size_t num_supers = smooth_super_.size();
                    std::size_t j = 0;
                    while (j + 1 < num_supers && u >= ssuper[j]) u -= ssuper[j++];
                    std::size_t g = j * kGroup;
                    const std::size_t num_groups =
                        std::min<std::size_t>(smooth_group_.size(), g + kGroup);
                    while (g + 1 < num_groups && u >= sgroup[g]) u -= sgroup[g++];
                    const TopicId first = static_cast<TopicId>(g * kGroup);
                    const TopicId last = std::min<TopicId>(K, first + kGroup);
                    double acc = 0;
                    chosen = last - 1;
                    for (TopicId k = first; k < last; ++k) {
                        acc += beta * ainv[k];
                        if (acc > u) {
                            chosen = k;
                            break;
                        }
                    }
                }
            }

            if (chosen == old) {
                if (removed) {  // undo the virtual removal bit for bit
                    ++nw[old];
                    ++totals[old];
                    inv[old] = saved_inv;
                    ainv[old] = saved_ainv;
                    coef[old] = saved_coef;
                    s = saved_s;
                    sgroup[old / kGroup] = saved_group;
                    ssuper[old / kSuper] = saved_super;
                    if (grouped) {
                        rgroup[old / kGroup] = saved_rgroup;
                        rsuper[old / kSuper] = saved_rsuper;
                    }
                    r = saved_r;
                }
            } else {
                if (!removed) remove_virtually();
                // Both positions are known from the doc bucket (the row is unchanged since):
                // no search, the same row operations.
                std::uint32_t moved = old_at;
                if (old != kUnassignedTopic) {
                    ROTOR_ASSERT(old_at < dh->topic && dh[1 + old_at].topic == old,
                                 "stale doc row");
                    moved = detail::sorted_row_decrement_at(dh + 1, dh->topic, old_at);
                }
                if (chosen_at < nq) {
                    detail::sorted_row_increment_at(dh + 1,
                                                    chosen_at == moved ? old_at : chosen_at);
                } else {
                    detail::sorted_row_increment(dh + 1, dh->topic, dh->count, chosen);
                }
                if (in_nz[chosen] == 0) {
                    in_nz[chosen] = 1;
                    word_nz_.push_back(chosen);
                }
                update_topic(chosen, +1);
                topics[t] = chosen;
            }
            prev_doc = d;
            prev_old = old;
            prev_new = chosen;
        }
        sampled += te - tb;

        // Pack the word row back and clear the scratch.
        for (TopicId k : word_nz_) {
            coef[k] = beta * inv[k];
            in_nz[k] = 0;
            if (grouped) {
                rgroup[k / kGroup] = 0;
                rsuper[k / kSuper] = 0;
            }
        }
        if (!dense) {
            word_topic.store_sparse_row(w, word_nz_, nw);
            for (TopicId k : word_nz_) nw[k] = 0;
        }
    }
    return sampled;
}

}  // namespace rotor::lda
