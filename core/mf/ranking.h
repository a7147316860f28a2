// Ranking metrics of a factor model on held-out items (docs/mf.md, "Implicit feedback"): for each
// user with held-out items, the model's top k items among those the user did not have in
// training (scores w_u·h_j, ties to the lower item index, as `rotor mf recommend` ranks them),
// compared with the held-out set T_u (scores in float: ials_scores):
//     precision@k = |hits| / k
//     AP@k        = Σ_(hit at rank n ≤ k) (hits among the first n) / n  /  min(k, |T_u|)
//     NDCG@k      = Σ_(hit at rank n) 1 / log2(n + 1)  /  Σ_(n ≤ min(k, |T_u|)) 1 / log2(n + 1)
// each averaged over those users (MAP@k is the mean AP@k). Ranks n count from 1.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/base/exact_sum.h"
#include "core/mf/factors.h"
#include "core/mf/sparse_view.h"

namespace rotor::mf {

/// One user's scores.
struct UserRanking {
    double precision = 0;
    double ap = 0;
    double ndcg = 0;
};

/// Memory rank_user reuses from call to call.
struct RankScratch {
    std::vector<float> scores;
    std::vector<std::pair<float, std::uint32_t>> top;
};

/// The metrics of user row `w_u` against every row of h, leaving out `seen` (sorted item ids)
/// and scoring `heldout` (sorted, non-empty, ids < h.rows()). k >= 1. O(M K + M log k).
UserRanking rank_user(std::span<const float> w_u, const Factors& h,
                      std::span<const std::uint32_t> seen, std::span<const std::uint32_t> heldout,
                      std::uint32_t k, RankScratch& scratch);

/// Sums of the per-user metrics, exact (core::ExactSum), so that parts over users combine to
/// the same bits however they are split.
struct RankingSums {
    core::ExactSum precision, ap, ndcg;
    std::uint64_t users = 0;

    void add(const UserRanking& r);
    void add(const RankingSums& o);
    double mean_precision() const;
    double mean_ap() const;
    double mean_ndcg() const;
    /// 3 ExactSum limb sets and the user count, for an integer allreduce.
    std::vector<std::int64_t> to_limbs() const;
    static RankingSums from_limbs(std::span<const std::int64_t> limbs);
};

/// The metrics of users [begin, end): `seen` and `heldout` are CSR views by user (outer size
/// >= end); users without held-out items are skipped.
RankingSums rank_users(const Factors& w, const Factors& h, const SparseView& seen,
                       const SparseView& heldout, std::uint32_t k, std::uint32_t begin,
                       std::uint32_t end);

}  // namespace rotor::mf
