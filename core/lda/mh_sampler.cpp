#include "core/lda/mh_sampler.h"

#include <algorithm>
#include <string>

#include "core/base/error.h"

namespace rotor::lda {

namespace {
// How many tokens ahead the doc row and the doc's topic array are prefetched.
constexpr TokenIndex kPrefetch = 4;
// At most this many cache lines of a doc row are prefetched beyond its header.
constexpr std::uint32_t kRowLines = 8;

// A doc proposal that read the token's own slot: its topic is the chain's current one.
constexpr TopicId kOwnSlot = ~TopicId{0};
// The doc-row position of a marked topic the row does not hold.
constexpr std::uint32_t kAbsent = ~std::uint32_t{0};

/// An index in [0, n) from u in [0, n) (u may round up to n).
inline std::uint64_t floor_index(double u, std::uint64_t n) {
    const auto i = static_cast<std::uint64_t>(u);
    return i < n ? i : n - 1;
}
}  // namespace

MhSampler::MhSampler(const LdaParams& params, std::uint32_t vocab_size, DocTokenIndex& index,
                     std::uint32_t cycles)
    : index_(index),
      num_topics_(params.num_topics),
      cycles_(cycles),
      beta_(params.beta),
      vbeta_(static_cast<double>(vocab_size) * params.beta),
      symmetric_(params.symmetric_alpha()) {
    params.validate();
    if (cycles == 0 || cycles > kMaxCycles)
        throw ConfigError("--mh-steps", "must be in [1, " + std::to_string(kMaxCycles) + "]");
    alpha_ = params.topic_alphas();
    alpha_sym_ = alpha_[0];
    alpha_sum_ = 0;
    for (double a : alpha_) alpha_sum_ += a;
    if (!symmetric_) alpha_table_.build(alpha_);
    inv_.assign(num_topics_, 0.0);
    word_dense_.assign(num_topics_, 0);
    in_nz_.assign(num_topics_, 0);
    local_.assign(num_topics_, 0);
    word_nz_.reserve(num_topics_);
    out_topics_.reserve(num_topics_);
    out_weights_.reserve(num_topics_);
    predrawn_.assign((kPrefetch + 1) * cycles_, 0.0);
    mark_.assign(num_topics_, 0);
    // A token marks at most 2 cycles + 1 topics (slots from 1); mark() writes one slot past
    // the last marked.
    marked_.assign(2 * cycles_ + 3, 0);
    row_count_.assign(2 * cycles_ + 3, 0);
    row_at_.assign(2 * cycles_ + 3, 0);
    doc_prop_.assign(cycles_, 0);
    word_prop_.assign(cycles_, 0);
}

Count* MhSampler::load_word(const TokenBlock& block, std::size_t wi, WordTopicTable& word_topic) {
    const WordId w = block.words[wi];
    word_nz_.clear();
    Count* const nw = word_topic.open_row(w, word_dense_.data(), word_nz_, in_nz_.data());
    // The counts outside the block's tokens of w do not change while w is sampled here.
    const TokenIndex tb = block.word_offsets[wi];
    const TokenIndex te = block.word_offsets[wi + 1];
    for (TokenIndex t = tb; t < te; ++t) ++local_[block.topics[t]];
    out_topics_.clear();
    out_weights_.clear();
    out_total_ = 0;
    for (TopicId k : word_nz_) {
        const Count outside = nw[k] - local_[k];
        if (outside > 0) {
            out_topics_.push_back(k);
            out_weights_.push_back(outside);
            out_total_ += outside;
        }
    }
    for (TokenIndex t = tb; t < te; ++t) local_[block.topics[t]] = 0;
    if (out_total_ > 0) out_table_.build(out_weights_);
    return nw;
}

void MhSampler::store_word(WordId w, Count* nw, WordTopicTable& word_topic) {
    for (TopicId k : word_nz_) in_nz_[k] = 0;
    if (!word_topic.is_dense(w)) {
        word_topic.store_sparse_row(w, word_nz_, nw);
        for (TopicId k : word_nz_) nw[k] = 0;
    }
}

std::uint64_t MhSampler::sample_block(TokenBlock& block, DocTopicTable& doc_topic,
                                      WordTopicTable& word_topic,
                                      std::span<TotalCount> topic_totals, Rng& rng,
                                      const std::atomic<bool>* stop) {
    const std::uint32_t K = num_topics_;
    ROTOR_ASSERT(topic_totals.size() == K, "topic_totals must have K entries");
    ROTOR_ASSERT(doc_topic.num_topics() == K && word_topic.num_topics() == K,
                 "tables and sampler disagree on K");
    const std::span<const std::uint32_t> slots = index_.slots(block.row, block.col);
    ROTOR_ASSERT(slots.size() == block.docs.size(), "the doc-token index is not of this grid");
    const double beta = beta_;
    const double vbeta = vbeta_;
    const double kbeta = K * beta;
    const double* const alpha = alpha_.data();
    double* const inv = inv_.data();
    TotalCount* const totals = topic_totals.data();
    for (std::uint32_t k = 0; k < K; ++k) inv[k] = 1.0 / (static_cast<double>(totals[k]) + vbeta);
    const auto set_total = [&](TopicId k, int delta) {
        totals[k] += delta;
        inv[k] = 1.0 / (static_cast<double>(totals[k]) + vbeta);
    };

    std::uint64_t sampled = 0;
    const DocId* const docs = block.docs.data();
    TopicId* const topics = block.topics.data();
    for (std::size_t wi = 0; wi < block.words.size(); ++wi) {
        if (stop != nullptr && stop->load(std::memory_order_relaxed)) break;
        const WordId w = block.words[wi];
        const TokenIndex tb = block.word_offsets[wi];
        const TokenIndex te = block.word_offsets[wi + 1];
        Count* const nw = load_word(block, wi, word_topic);
        const TokenIndex others = te - tb - 1;  // the word's other tokens in the block
        const double word_mass = out_total_ + static_cast<double>(others) + kbeta;

        // The doc proposals' uniforms are drawn kPrefetch tokens ahead, so that the doc row and
        // the drawn slots of the doc's topic array (the kernel's cache misses: word-major order
        // visits docs at random) are fetched in time: a row's header 2·kPrefetch tokens ahead,
        // its used lines (the size is in the header) kPrefetch ahead.
        const auto predraw = [&](TokenIndex ta) {
            const DocId da = docs[ta];
            const std::uint32_t na = index_.doc_length(da);
            doc_topic.prefetch_entries<kRowLines>(da);
            const TopicId* const za = index_.doc_topics(da);
            double* const out = predrawn_.data() + (ta - tb) % (kPrefetch + 1) * cycles_;
            for (std::uint32_t c = 0; c < cycles_; ++c) {
                out[c] = rng.uniform() * (na + alpha_sum_);
                // Also for a draw from α (a slot of d, harmless): no branch on a coin toss.
                __builtin_prefetch(za + floor_index(out[c], na));
            }
        };
        for (TokenIndex t = tb; t < te && t < tb + 2 * kPrefetch; ++t)
            prefetch_line(doc_topic.header(docs[t]));
        for (TokenIndex t = tb; t < te && t < tb + kPrefetch; ++t) predraw(t);

        for (TokenIndex t = tb; t < te; ++t) {
            if (t + 2 * kPrefetch < te) prefetch_line(doc_topic.header(docs[t + 2 * kPrefetch]));
            if (t + kPrefetch < te) predraw(t + kPrefetch);
            const double* const doc_u = predrawn_.data() + (t - tb) % (kPrefetch + 1) * cycles_;
            const DocId d = docs[t];
            const TopicId z0 = topics[t];
            TopicCount* const dh = doc_topic.header(d);
            TopicId* const zd = index_.doc_topics(d);
            const std::uint32_t nd = index_.doc_length(d);
            const std::uint32_t own = slots[t];
            ROTOR_ASSERT(zd[own] == z0, "the doc-token index is stale");

            // Take the token out of the word row and the totals; the doc row keeps it and the
            // lookups subtract it.
            --nw[z0];
            set_total(z0, -1);
            // Every proposal is drawn first (they do not depend on the chain's acceptances,
            // except a doc proposal of the token's own slot, which reads the chain's topic), so
            // that ONE pass over the doc row finds n_dk of every topic the chain can visit.
            // Whether a proposal repeats a topic is a coin toss: no branch on it, the next slot
            // is written either way and taken only by a new topic.
            std::uint32_t marked = 0;
            const auto mark = [&](TopicId k) {
                const std::uint32_t next = marked + 1;
                const std::uint32_t fresh = mark_[k] == 0;
                marked_[next] = k;
                row_count_[next] = 0;
                row_at_[next] = kAbsent;
                mark_[k] = static_cast<std::uint8_t>(mark_[k] | (next & (0u - fresh)));
                marked += fresh;
            };
            mark(z0);
            for (std::uint32_t c = 0; c < cycles_; ++c) {
                // Doc proposal: q(k | s) ∝ n_dk + [k = s] + α_k; kOwnSlot reads s.
                const double u = doc_u[c];
                TopicId tp;
                if (u < nd) {
                    const auto j = static_cast<std::uint32_t>(floor_index(u, nd));
                    tp = j == own ? kOwnSlot : zd[j];
                } else if (symmetric_) {
                    tp = static_cast<TopicId>(floor_index((u - nd) / alpha_sym_, K));
                } else {
                    tp = alpha_table_.sample(rng);
                }
                doc_prop_[c] = tp;
                if (tp != kOwnSlot) mark(tp);
                // Word proposal: q(k) ∝ n_wk + β, the live row without the token (fixed while
                // the token's chain runs).
                double v = rng.uniform() * word_mass;
                if (v < out_total_) {
                    tp = out_topics_[out_table_.sample(rng)];
                } else if ((v -= out_total_) < static_cast<double>(others)) {
                    const TokenIndex j = tb + floor_index(v, others);
                    tp = topics[j < t ? j : j + 1];
                } else {
                    tp = static_cast<TopicId>(
                        floor_index((v - static_cast<double>(others)) / beta, K));
                }
                word_prop_[c] = tp;
                mark(tp);
            }
            {
                // The doc row is sorted by decreasing count: present topics end the scan early;
                // an absent one (likely for a word proposal while the model is dense) reads it
                // all.
                const TopicCount* e = dh + 1;
                const std::uint32_t n = dh->topic;
                std::uint32_t found = 0;
                std::uint32_t i = 0;
                for (; i < n; ++i) {
                    const std::uint8_t m = mark_[e[i].topic];
                    if (m != 0) {
                        row_count_[m] = e[i].count;
                        row_at_[m] = i;
                        if (++found == marked) break;
                    }
                }
                stats_.lookup_steps += i;
                ++stats_.lookups;
            }
            // n_dk without the token.
            const auto ndk = [&](TopicId k) {
                return row_count_[mark_[k]] - (k == z0 ? 1.0 : 0.0);
            };

            TopicId s = z0;
            for (std::uint32_t c = 0; c < cycles_; ++c) {
                TopicId tp = doc_prop_[c] == kOwnSlot ? s : doc_prop_[c];
                ++stats_.doc_proposals;
                if (tp != s) {
                    // The doc terms cancel.
                    const double a = (nw[tp] + beta) * inv[tp] / ((nw[s] + beta) * inv[s]);
                    if (a >= 1 || rng.uniform() < a) {
                        s = tp;
                        ++stats_.doc_accepted;
                    }
                }
                tp = word_prop_[c];
                ++stats_.word_proposals;
                if (tp != s) {
                    // The word terms cancel.
                    const double a =
                        (ndk(tp) + alpha[tp]) * inv[tp] / ((ndk(s) + alpha[s]) * inv[s]);
                    if (a >= 1 || rng.uniform() < a) {
                        s = tp;
                        ++stats_.word_accepted;
                    }
                }
            }
            // The row positions the pass found: z0 took slot 1 (marked first) and is in the row.
            const std::uint32_t old_at = row_at_[1];
            const std::uint32_t new_at = row_at_[mark_[s]];
            // Every slot a token can use, a fixed count (each holds a topic < K; unused ones are
            // unmarked already): no loop exit that depends on how many topics were new.
            for (std::uint32_t m = 1; m < marked_.size(); ++m) mark_[marked_[m]] = 0;

            if (s != z0) {
                // At the positions the pass found (as SparseLdaSampler does), no search: the
                // same row operations.
                ROTOR_ASSERT(old_at < dh->topic && dh[1 + old_at].topic == z0, "stale doc row");
                const std::uint32_t moved =
                    detail::sorted_row_decrement_at(dh + 1, dh->topic, old_at);
                if (new_at != kAbsent) {
                    detail::sorted_row_increment_at(dh + 1, new_at == moved ? old_at : new_at);
                } else {
                    detail::sorted_row_append(dh + 1, dh->topic, dh->count, s);
                }
                zd[own] = s;
                topics[t] = s;
                if (in_nz_[s] == 0) {
                    in_nz_[s] = 1;
                    word_nz_.push_back(s);
                }
            }
            ++nw[s];
            set_total(s, +1);
        }
        sampled += te - tb;
        store_word(w, nw, word_topic);
    }
    return sampled;
}

}  // namespace rotor::lda
