// The STRADS correlation check's pair dots, remembered across rounds (docs/lasso.md, "The
// correlation check's cost").
//
// x̃_aᵀx̃_b is a property of the data alone: it never changes during a run. Pushed once (as the
// exact total over every part, the same bits for any split), it can be reused whenever the pair
// of candidates is drawn again, and STRADS draws the same pairs again and again once its
// priorities concentrate on the active coordinates. The trainer then pushes only the pairs the
// cache lacks (several ranks), or computes on demand only the pairs the greedy scan reaches (one
// rank: at most L'·L, usually far fewer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/lasso/schedule.h"

namespace rotor::lasso {

/// Two coordinates whose dot x̃_aᵀx̃_b is wanted (a ≠ b; the dot is symmetric).
struct CoordinatePair {
    std::uint32_t a = 0;
    std::uint32_t b = 0;
};

/// Pair dots keyed by the unordered pair, direct-mapped: 2^bits slots, a pair's slot fixed by a
/// hash of it, a newer pair overwriting an older one in its slot (O(1), no allocation after
/// construction; a dot found is always the pair's own). The values never depend on what the
/// cache holds. A value type; not thread-safe.
class PairDotCache {
  public:
    static constexpr int kDefaultBits = 12;  // 64 KiB: lookups stay in cache

    explicit PairDotCache(int bits = kDefaultBits);

    /// The remembered dot of (a, b), or nullptr (never cached, or overwritten since).
    const double* find(std::uint32_t a, std::uint32_t b) const;
    void insert(std::uint32_t a, std::uint32_t b, double dot);
    /// find() calls that found / did not find their pair.
    std::uint64_t hits() const { return hits_; }
    std::uint64_t misses() const { return misses_; }

  private:
    struct Slot {
        std::uint64_t key = ~std::uint64_t{0};  // no pair
        double dot = 0;
    };
    static std::uint64_t key(std::uint32_t a, std::uint32_t b);
    std::size_t slot(std::uint64_t key) const;

    int bits_;
    std::vector<Slot> slots_;
    mutable std::uint64_t hits_ = 0;
    mutable std::uint64_t misses_ = 0;
};

/// The dots of every pair of candidates, in pair_index order (schedule.h), as far as a cache
/// holds them; the pairs it lacks are listed (grouped by first coordinate) for a push.
struct CandidateDots {
    std::vector<double> dots;                ///< pair_count(m) values; the missing ones 0
    std::vector<CoordinatePair> missing;     ///< (c_a, c_b), a < b, not in the cache
    std::vector<std::size_t> missing_index;  ///< their pair_index
};
CandidateDots cached_candidate_dots(std::span<const std::uint32_t> candidates,
                                    const PairDotCache& cache);

/// PUSH over one part: sums[t] += Σ over the part's rows of x̃_{i,pairs[t].a} x̃_{i,pairs[t].b}
/// (the same terms, bit for bit, as push_candidate_dots). Consecutive pairs with the same first
/// coordinate scatter it once. scratch: zero, at least the part's rows long (or grown), and
/// left zeroed.
void push_pair_dots(const PartView& part, std::span<const CoordinatePair> pairs,
                    std::span<core::ExactSum> sums, std::vector<double>& scratch);

/// The greedy check of select_uncorrelated with the dots read from `dot(a, b)` (coordinates),
/// called only for the pairs the scan reaches: (kept, candidate) until a conflict or L kept.
Selection select_uncorrelated(const ProblemView& problem, std::span<const std::uint32_t> candidates,
                              const StradsParams& params,
                              const std::function<double(std::uint32_t, std::uint32_t)>& dot);

}  // namespace rotor::lasso
