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
#include <unordered_map>
#include <vector>

#include "core/lasso/schedule.h"

namespace rotor::lasso {

/// Two coordinates whose dot x̃_aᵀx̃_b is wanted (a ≠ b; the dot is symmetric).
struct CoordinatePair {
    std::uint32_t a = 0;
    std::uint32_t b = 0;
};

/// Pair dots keyed by the unordered pair. At most `capacity` pairs: when an insert would pass
/// it, the cache is emptied first (replicas that insert the same pairs in the same order stay
/// alike; the values never depend on the cache anyway). A value type; not thread-safe.
class PairDotCache {
  public:
    static constexpr std::size_t kDefaultCapacity = std::size_t{1} << 20;

    explicit PairDotCache(std::size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

    /// The remembered dot of (a, b), or nullptr.
    const double* find(std::uint32_t a, std::uint32_t b) const;
    void insert(std::uint32_t a, std::uint32_t b, double dot);
    std::size_t size() const { return map_.size(); }
    /// find() calls that found / did not find their pair.
    std::uint64_t hits() const { return hits_; }
    std::uint64_t misses() const { return misses_; }

  private:
    static std::uint64_t key(std::uint32_t a, std::uint32_t b);

    std::size_t capacity_;
    std::unordered_map<std::uint64_t, double> map_;
    mutable std::uint64_t hits_ = 0;
    mutable std::uint64_t misses_ = 0;
};

/// The pairs of distinct candidates (in draw order: (c_a, c_b), a < b) the cache lacks, grouped
/// by their first coordinate.
std::vector<CoordinatePair> missing_pairs(std::span<const std::uint32_t> candidates,
                                          const PairDotCache& cache);

/// PUSH over one part: sums[t] += Σ over the part's rows of x̃_{i,pairs[t].a} x̃_{i,pairs[t].b}
/// (the same terms, bit for bit, as push_candidate_dots). Consecutive pairs with the same first
/// coordinate scatter it once. scratch: zero, sized to the part's rows (or resized), and left
/// zeroed.
void push_pair_dots(const PartView& part, std::span<const CoordinatePair> pairs,
                    std::span<ExactSum> sums, std::vector<double>& scratch);

/// The greedy check of select_uncorrelated with the dots read from `dot(a, b)` (coordinates),
/// called only for the pairs the scan reaches: (kept, candidate) until a conflict or L kept.
Selection select_uncorrelated(const ProblemView& problem, std::span<const std::uint32_t> candidates,
                              const StradsParams& params,
                              const std::function<double(std::uint32_t, std::uint32_t)>& dot);

}  // namespace rotor::lasso
