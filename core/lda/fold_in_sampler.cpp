#include "core/lda/fold_in_sampler.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "core/base/error.h"
#include "core/lda/alias_table.h"

namespace rotor::lda {

namespace {

/// Vose's alias method over `weights` (n ≥ 1, total > 0): fills prob[i] ∈ [0, 1] and next[i]
/// so that picking i uniformly, then i with probability prob[i] and next[i] otherwise, draws i
/// with probability weights[i] / total. Deterministic in its input. `scaled`, `small`, `large`
/// are scratch.
template <class Next>
void build_alias(std::span<const double> weights, double total, double* prob, Next* next,
                 std::vector<double>& scaled, std::vector<std::uint32_t>& small,
                 std::vector<std::uint32_t>& large) {
    const auto n = static_cast<std::uint32_t>(weights.size());
    scaled.resize(n);
    for (std::uint32_t i = 0; i < n; ++i) scaled[i] = weights[i] * static_cast<double>(n) / total;
    pair_alias<Next>(scaled, prob, next, small, large);
}

/// Picks from an alias table of n entries with u uniform in [0, mass): the integer part of
/// u·n/mass chooses the column, its fraction the side (one uniform serves both).
template <class Next>
inline std::uint32_t alias_pick(double u, double mass, std::uint32_t n, const double* prob,
                                const Next* next) {
    double x = u / mass * static_cast<double>(n);
    if (!(x > 0)) x = 0;
    auto i = static_cast<std::uint32_t>(x);
    if (i >= n) i = n - 1;
    const double frac = x - static_cast<double>(i);
    return frac < prob[i] ? i : static_cast<std::uint32_t>(next[i]);
}

/// The global part of the smoothing bucket: weights alpha[k] * smooth[k] over the K topics.
/// Sets prob and alias (size K) to their alias table (all prob 1, alias k -> k when the total
/// is 0) and returns the total.
double build_global_alias(std::span<const double> alpha, std::span<const double> smooth,
                          std::vector<double>& prob, std::vector<TopicId>& alias) {
    const auto k_count = static_cast<std::uint32_t>(alpha.size());
    std::vector<double> global(k_count);
    for (std::uint32_t k = 0; k < k_count; ++k) global[k] = alpha[k] * smooth[k];
    const double mass = std::accumulate(global.begin(), global.end(), 0.0);
    prob.assign(k_count, 1.0);
    alias.resize(k_count);
    std::iota(alias.begin(), alias.end(), TopicId{0});
    std::vector<double> scaled;
    std::vector<std::uint32_t> small, large;
    if (mass > 0)
        build_alias<TopicId>(global, mass, prob.data(), alias.data(), scaled, small, large);
    return mass;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// FoldInTables

FoldInTables::FoldInTables(const TopicWordDistribution& phi, std::span<const double> alpha,
                           std::span<const WordId> words, const RangeLoop& loop, Layout layout)
    : phi_(phi), alpha_(alpha.begin(), alpha.end()), k_count_(phi.num_topics()) {
    build(words, loop, layout);
}

FoldInTables::FoldInTables(const TopicWordDistribution& phi, std::span<const double> alpha,
                           Layout layout)
    : phi_(phi), alpha_(alpha.begin(), alpha.end()), k_count_(phi.num_topics()) {
    std::vector<WordId> all(phi.num_words());
    std::iota(all.begin(), all.end(), WordId{0});
    build(all, serial_loop, layout);
}

void FoldInTables::build(std::span<const WordId> words, const RangeLoop& loop, Layout layout) {
    ROTOR_ASSERT(k_count_ > 0, "phi without topics");
    ROTOR_ASSERT(alpha_.size() == k_count_, "alpha size != K");
    for (const double a : alpha_) ROTOR_ASSERT(a > 0, "alpha must be positive");
    alpha_sum_ = std::accumulate(alpha_.begin(), alpha_.end(), 0.0);
    const auto s = phi_.smoothing();
    smooth_.assign(s.begin(), s.end());

    global_mass_ = build_global_alias(alpha_, smooth_, global_prob_, global_alias_);

    // Slots and offsets (serial, cheap), then the rows (over `loop`).
    slot_of_.assign(phi_.num_words(), kNoSlot);
    std::uint64_t entries = 0;
    std::uint32_t dense_rows = 0;
    for (const WordId w : words) {
        ROTOR_ASSERT(w < phi_.num_words(), "word id out of range");
        if (slot_of_[w] != kNoSlot) continue;
        slot_of_[w] = static_cast<std::uint32_t>(slots_.size());
        Slot slot;
        slot.begin = entries;
        slot.nnz = static_cast<std::uint32_t>(phi_.row_topics(w).size());
        const bool dense =
            layout == Layout::kAllDense ||
            (layout == Layout::kAuto && 16 * static_cast<std::uint64_t>(slot.nnz) > k_count_);
        if (dense) slot.dense = dense_rows++;
        entries += slot.nnz;
        slots_.push_back(slot);
    }
    std::vector<WordId> slot_word(slots_.size());
    for (const WordId w : words)
        if (slot_of_[w] != kNoSlot) slot_word[slot_of_[w]] = w;
    topics_.resize(entries);
    values_.resize(entries);
    alias_prob_.resize(entries);
    alias_next_.resize(entries);
    dense_.resize(static_cast<std::size_t>(dense_rows) * k_count_);

    loop(0, static_cast<std::int64_t>(slots_.size()), [&](std::int64_t lo, std::int64_t hi) {
        std::vector<std::pair<TopicId, double>> row;
        std::vector<double> weights, sc;
        std::vector<std::uint32_t> sm, lg;
        for (auto i = static_cast<std::size_t>(lo); i < static_cast<std::size_t>(hi); ++i) {
            Slot& slot = slots_[i];
            const WordId w = slot_word[i];
            const auto rt = phi_.row_topics(w);
            const auto rv = phi_.row_values(w);
            // Sorted by topic, so every sum below runs in topic order whatever the source
            // of φ (a model's rows, a live table's, a file's) listed them in.
            row.clear();
            for (std::size_t j = 0; j < rt.size(); ++j) row.emplace_back(rt[j], rv[j]);
            std::sort(row.begin(), row.end());
            weights.resize(row.size());
            double mass = 0;
            for (std::size_t j = 0; j < row.size(); ++j) {
                topics_[slot.begin + j] = row[j].first;
                values_[slot.begin + j] = row[j].second;
                weights[j] = alpha_[row[j].first] * row[j].second;
                mass += weights[j];
            }
            slot.word_mass = mass;
            if (!row.empty() && mass > 0)
                build_alias<std::uint32_t>(weights, mass, &alias_prob_[slot.begin],
                                           &alias_next_[slot.begin], sc, sm, lg);
            if (slot.dense != kNoSlot) {
                float* f = &dense_[static_cast<std::size_t>(slot.dense) * k_count_];
                for (std::uint32_t k = 0; k < k_count_; ++k) f[k] = static_cast<float>(smooth_[k]);
                for (const auto& [k, r] : row) f[k] = static_cast<float>(smooth_[k] + r);
            }
        }
    });
}

std::size_t FoldInTables::memory_bytes() const noexcept {
    return slot_of_.size() * sizeof(std::uint32_t) + slots_.size() * sizeof(Slot) +
           topics_.size() * (sizeof(TopicId) + 2 * sizeof(double) + sizeof(std::uint32_t)) +
           dense_.size() * sizeof(float) +
           k_count_ * (2 * sizeof(double) + sizeof(double) + sizeof(TopicId));
}

// ---------------------------------------------------------------------------------------------
// FoldInSampler

FoldInSampler::FoldInSampler(const FoldInTables& tables)
    : t_(tables),
      n_dk_(tables.num_topics(), 0),
      pos_(tables.num_topics(), 0),
      cnt_(tables.num_topics(), 0.0),
      cum_(tables.num_topics(), 0.0),
      acc_(tables.num_topics(), 0.0) {
    nz_.reserve(tables.num_topics());
}

void FoldInSampler::clear_counts() {
    for (std::size_t j = 0; j < nz_.size(); ++j) {
        n_dk_[nz_[j]] = 0;
        cnt_[j] = 0.0;
    }
    nz_.clear();
    doc_smooth_ = 0;
}

inline void FoldInSampler::increment(TopicId k) {
    if (n_dk_[k]++ == 0) {
        pos_[k] = static_cast<std::uint32_t>(nz_.size());
        nz_.push_back(k);
    }
    cnt_[pos_[k]] += 1.0;
    doc_smooth_ += t_.smooth_[k];
}

inline void FoldInSampler::decrement(TopicId k) {
    const std::uint32_t j = pos_[k];
    if (--n_dk_[k] == 0) {
        const auto back = static_cast<std::uint32_t>(nz_.size() - 1);
        const TopicId last = nz_[back];
        nz_[j] = last;
        cnt_[j] = cnt_[back];
        cnt_[back] = 0.0;
        pos_[last] = j;
        nz_.pop_back();
    } else {
        cnt_[j] -= 1.0;
    }
    doc_smooth_ -= t_.smooth_[k];
}

void FoldInSampler::set_counts(std::span<const Count> counts) {
    ROTOR_ASSERT(counts.size() == t_.num_topics(), "counts size != K");
    clear_counts();
    for (TopicId k = 0; k < counts.size(); ++k)
        for (Count c = 0; c < counts[k]; ++c) increment(k);
}

TopicId FoldInSampler::draw_word(WordId w, Rng& rng) {
    ROTOR_ASSERT(t_.has_word(w), "word without fold-in tables");
    return draw(t_.slot_of_[w], rng);
}

namespace {

/// Sum of q[0..n) with four partial sums (independent chains: the loop is not bound by the
/// latency of one addition chain). Deterministic: the same inputs give the same bits.
inline double sum4(const double* q, std::size_t n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    std::size_t j = 0;
    for (; j + 4 <= n; j += 4) {
        s0 += q[j];
        s1 += q[j + 1];
        s2 += q[j + 2];
        s3 += q[j + 3];
    }
    for (; j < n; ++j) s0 += q[j];
    return (s0 + s1) + (s2 + s3);
}

/// The index j where u (0 ≤ u < Σ q) falls when q[0..n) is laid end to end; if rounding lets u
/// run past the end, the last j with q[j] > 0.
inline std::size_t walk(const double* q, std::size_t n, double u) {
    for (std::size_t j = 0; j < n; ++j) {
        u -= q[j];
        if (u < 0) return j;
    }
    std::size_t j = n - 1;
    while (j > 0 && !(q[j] > 0)) --j;
    return j;
}

}  // namespace

// p(z = k) ∝ (n_dk + α_k)(s_k + r_kw), drawn bucket by bucket (see the header).
inline TopicId FoldInSampler::draw(std::uint32_t slot_index, Rng& rng) {
    const FoldInTables& t = t_;
    const FoldInTables::Slot& slot = t.slots_[slot_index];
    const std::size_t m = nz_.size();
    double* q = cum_.data();
    double u = 0;
    if (slot.dense != FoldInTables::kNoSlot) {
        // Document bucket Σ_{k: n_dk>0} n_dk φ_kw over the dense row.
        const float* f = t.dense_.data() + static_cast<std::size_t>(slot.dense) * t.k_count_;
        const TopicId* z = nz_.data();
        const double* c = cnt_.data();
        for (std::size_t j = 0; j < m; ++j) q[j] = c[j] * static_cast<double>(f[z[j]]);
        const double doc = sum4(q, m);
        const double total = doc + slot.word_mass + t.global_mass_;
        ROTOR_ASSERT(total > 0, "word with zero probability under every topic");
        u = rng.uniform() * total;
        if (u < doc) return z[walk(q, m, u)];
        u -= doc;
    } else {
        // Document bucket split: Σ_{k ∈ row w} n_dk r_kw (walk the short row) and
        // Σ_k n_dk s_k (kept up to date; walked over the document's topics when drawn).
        const TopicId* rt = t.topics_.data() + slot.begin;
        const double* rv = t.values_.data() + slot.begin;
        for (std::uint32_t i = 0; i < slot.nnz; ++i)
            q[i] = static_cast<double>(n_dk_[rt[i]]) * rv[i];
        const double dw = sum4(q, slot.nnz);
        const double ds = m == 0 ? 0.0 : std::max(doc_smooth_, 0.0);
        const double total = dw + ds + slot.word_mass + t.global_mass_;
        ROTOR_ASSERT(total > 0, "word with zero probability under every topic");
        u = rng.uniform() * total;
        if (u < dw) return rt[walk(q, slot.nnz, u)];
        u -= dw;
        if (u < ds) {
            for (std::size_t j = 0; j + 1 < m; ++j) {
                u -= cnt_[j] * t.smooth_[nz_[j]];
                if (u < 0) return nz_[j];
            }
            return nz_[m - 1];
        }
        u -= ds;
    }
    // Smoothing bucket: the word's own part, then the global part.
    if (slot.nnz > 0 && (u < slot.word_mass || !(t.global_mass_ > 0))) {
        const std::uint32_t i =
            alias_pick(std::min(u, slot.word_mass), slot.word_mass, slot.nnz,
                       t.alias_prob_.data() + slot.begin, t.alias_next_.data() + slot.begin);
        return t.topics_[slot.begin + i];
    }
    u -= slot.word_mass;
    return static_cast<TopicId>(alias_pick(std::min(u, t.global_mass_), t.global_mass_, t.k_count_,
                                           t.global_prob_.data(), t.global_alias_.data()));
}

void FoldInSampler::infer(std::span<const WordId> words, const FoldInOptions& options, Rng& rng,
                          std::span<double> theta) {
    const std::size_t k_count = t_.num_topics();
    ROTOR_ASSERT(theta.size() == k_count, "theta size != K");
    ROTOR_ASSERT(options.burn_in < options.iterations, "FoldInOptions not validated");
    const auto alpha = t_.alpha();
    const std::size_t n = words.size();
    if (n == 0) {
        for (std::size_t k = 0; k < k_count; ++k) theta[k] = alpha[k] / t_.alpha_sum();
        return;
    }
    slots_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        ROTOR_ASSERT(t_.has_word(words[i]), "word without fold-in tables");
        slots_[i] = t_.slot_of_[words[i]];
    }
    z_.resize(n);
    clear_counts();
    for (std::size_t i = 0; i < n; ++i) {
        z_[i] = draw(slots_[i], rng);
        increment(z_[i]);
    }
    std::fill(acc_.begin(), acc_.end(), 0.0);
    for (std::uint32_t it = 0; it < options.iterations; ++it) {
        for (std::size_t i = 0; i < n; ++i) {
            decrement(z_[i]);
            z_[i] = draw(slots_[i], rng);
            increment(z_[i]);
        }
        if (it >= options.burn_in) {
            for (const TopicId k : nz_) acc_[k] += static_cast<double>(n_dk_[k]);
        }
    }
    // θ_k = mean over averaged sweeps of (n_dk + α_k) / (n_d + Σα).
    const double samples = options.iterations - options.burn_in;
    const double norm = 1.0 / (static_cast<double>(n) + t_.alpha_sum());
    for (std::size_t k = 0; k < k_count; ++k) theta[k] = (acc_[k] / samples + alpha[k]) * norm;
    clear_counts();
}

}  // namespace rotor::lda
