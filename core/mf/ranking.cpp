#include "core/mf/ranking.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/base/error.h"
#include "core/mf/ials.h"

namespace rotor::mf {

UserRanking rank_user(std::span<const float> w_u, const Factors& h,
                      std::span<const std::uint32_t> seen, std::span<const std::uint32_t> heldout,
                      std::uint32_t k, RankScratch& scratch) {
    ROTOR_ASSERT(k >= 1 && !heldout.empty(), "rank_user: k = 0 or no held-out item");
    scratch.scores.resize(h.rows());
    ials_scores(h, w_u, scratch.scores);
    // The k best (score, item) by score, then the lower item: a heap whose top is the worst kept.
    const auto better = [](const std::pair<float, std::uint32_t>& a,
                           const std::pair<float, std::uint32_t>& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    };
    auto& top = scratch.top;
    top.clear();
    std::size_t s = 0;
    for (std::uint32_t j = 0; j < h.rows(); ++j) {
        while (s < seen.size() && seen[s] < j) ++s;
        if (s < seen.size() && seen[s] == j) continue;
        const std::pair<float, std::uint32_t> c{scratch.scores[j], j};
        if (top.size() < k) {
            top.push_back(c);
            std::push_heap(top.begin(), top.end(), better);
        } else if (better(c, top.front())) {
            std::pop_heap(top.begin(), top.end(), better);
            top.back() = c;
            std::push_heap(top.begin(), top.end(), better);
        }
    }
    std::sort_heap(top.begin(), top.end(), better);  // best first
    UserRanking r;
    std::uint32_t hits = 0;
    double dcg = 0;
    for (std::size_t rank = 1; rank <= top.size(); ++rank) {
        if (!std::binary_search(heldout.begin(), heldout.end(), top[rank - 1].second)) continue;
        ++hits;
        r.ap += static_cast<double>(hits) / static_cast<double>(rank);
        dcg += 1.0 / std::log2(static_cast<double>(rank) + 1.0);
    }
    const std::size_t ideal = std::min<std::size_t>(k, heldout.size());
    double idcg = 0;
    for (std::size_t rank = 1; rank <= ideal; ++rank)
        idcg += 1.0 / std::log2(static_cast<double>(rank) + 1.0);
    r.precision = static_cast<double>(hits) / static_cast<double>(k);
    r.ap /= static_cast<double>(ideal);
    r.ndcg = dcg / idcg;
    return r;
}

void RankingSums::add(const UserRanking& r) {
    precision.add(r.precision);
    ap.add(r.ap);
    ndcg.add(r.ndcg);
    ++users;
}

void RankingSums::add(const RankingSums& o) {
    precision.add(o.precision);
    ap.add(o.ap);
    ndcg.add(o.ndcg);
    users += o.users;
}

namespace {
double mean(const core::ExactSum& s, std::uint64_t n) {
    return n == 0 ? 0.0 : s.value() / static_cast<double>(n);
}
}  // namespace

double RankingSums::mean_precision() const { return mean(precision, users); }
double RankingSums::mean_ap() const { return mean(ap, users); }
double RankingSums::mean_ndcg() const { return mean(ndcg, users); }

std::vector<std::int64_t> RankingSums::to_limbs() const {
    std::vector<std::int64_t> out;
    for (const core::ExactSum* s : {&precision, &ap, &ndcg}) {
        const auto l = s->to_limbs();
        out.insert(out.end(), l.begin(), l.end());
    }
    out.push_back(static_cast<std::int64_t>(users));
    return out;
}

RankingSums RankingSums::from_limbs(std::span<const std::int64_t> limbs) {
    constexpr std::size_t n = core::ExactSum::kLimbs;
    ROTOR_ASSERT(limbs.size() == 3 * n + 1, "RankingSums::from_limbs: wrong size");
    RankingSums s;
    core::ExactSum* sums[] = {&s.precision, &s.ap, &s.ndcg};
    for (std::size_t q = 0; q < 3; ++q) {
        std::array<std::int64_t, n> l{};
        std::copy_n(limbs.begin() + static_cast<std::ptrdiff_t>(q * n), n, l.begin());
        *sums[q] = core::ExactSum::from_limbs(l);
    }
    s.users = static_cast<std::uint64_t>(limbs[3 * n]);
    return s;
}

RankingSums rank_users(const Factors& w, const Factors& h, const SparseView& seen,
                       const SparseView& heldout, std::uint32_t k, std::uint32_t begin,
                       std::uint32_t end) {
    RankingSums sums;
    RankScratch scratch;
    for (std::uint32_t u = begin; u < end; ++u) {
        const auto held = heldout.ids.subspan(heldout.offsets[u], heldout.count(u));
        if (held.empty()) continue;
        const auto s = seen.offsets.empty() ? std::span<const std::uint32_t>{}
                                            : seen.ids.subspan(seen.offsets[u], seen.count(u));
        sums.add(rank_user(w.row(u), h, s, held, k, scratch));
    }
    return sums;
}

}  // namespace rotor::mf
