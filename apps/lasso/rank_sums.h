// Exact totals over ranks of per-rank ExactSums when each rank needs only its block of them
// (docs/lasso.md, "Training on ranks x threads"): a round's gradient sums, of which each rank
// pulls its share, and an evaluation's column sums, of which each rank computes its share of the
// gradients and terms.
//
// One int64 reduce-scatter (comm::Communicator::reduce_scatter_sum) of TWO limbs a sum
// (core::ExactSum::to_narrow_limbs) instead of an allreduce of four: on 2 ranks each rank sends and
// receives a quarter of the bytes. The sums are cut into one block per rank (block q =
// detail::share(n, q, ranks)), followed in every rank's block by `tail` sums every rank receives
// and a count of the sums some rank could not narrow (|value| ≥ 2^38 or invalid). When that count
// is not zero, every rank sees it and the ranks reduce again with four limbs a sum (to_limbs):
// either way the totals are bitwise the core::ExactSum of every rank's sums.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "core/base/exact_sum.h"
#include "core/base/huge_pages.h"

namespace rotor::lasso {

/// The send and receive buffers of one reduction and their layout. Reused across reductions
/// (reset() keeps the capacity). encode() may run on several threads over disjoint ranges;
/// everything else on one thread (the rank's comm thread).
class RankSums {
  public:
    /// Lays out `n` sums in one block per rank of comm (this rank: comm.rank()) plus `tail`
    /// sums every rank receives, two limbs each.
    void reset(std::size_t n, std::size_t tail, const comm::Communicator& comm);
    /// This rank's block of the n sums: [first(), last()).
    std::size_t first() const { return first_[static_cast<std::size_t>(rank_)]; }
    std::size_t last() const { return first_[static_cast<std::size_t>(rank_) + 1]; }

    /// Encodes sums [lo, hi) of the n, sum i being get(i) (an core::ExactSum). Returns how many did
    /// not fit two limbs. Thread-safe for disjoint ranges.
    template <class Get>
    std::uint64_t encode(std::size_t lo, std::size_t hi, const Get& get) {
        std::uint64_t misfits = 0;
        for (std::size_t q = block_of(lo); lo < hi; ++q) {
            const std::size_t end = std::min(hi, first_[q + 1]);
            std::int64_t* out = send_.data() + offset_[q] + kNarrow * (lo - first_[q]);
            for (; lo < end; ++lo, out += kNarrow) misfits += get(lo).to_narrow_limbs(out) ? 0 : 1;
        }
        return misfits;
    }
    /// Encodes tail sum t (in every block). Returns 1 when it did not fit two limbs, else 0.
    std::uint64_t encode_tail(std::size_t t, const core::ExactSum& s);

    /// Collective: the reduction, after encode() of every sum and encode_tail() of every tail
    /// sum; `misfits` is this rank's count of sums that did not fit. When any rank has one,
    /// every rank re-encodes with four limbs a sum (get(i) again, and tail(t)) and reduces again.
    template <class Get, class Tail>
    void reduce(comm::Communicator& comm, std::uint64_t misfits, const Get& get, const Tail& tail) {
        if (narrow_reduce(comm, misfits) == 0) return;
        wide_ = true;
        std::array<std::int64_t, core::ExactSum::kLimbs> l{};
        for (std::size_t q = 0; q + 1 < first_.size(); ++q) {
            std::int64_t* out = send_.data() + offset_[q];
            for (std::size_t i = first_[q]; i < first_[q + 1]; ++i, out += core::ExactSum::kLimbs) {
                l = get(i).to_limbs();
                std::copy(l.begin(), l.end(), out);
            }
            for (std::size_t t = 0; t < tail_; ++t, out += core::ExactSum::kLimbs) {
                l = tail(t).to_limbs();
                std::copy(l.begin(), l.end(), out);
            }
        }
        comm.reduce_scatter_sum(send_, counts_, mine_);
    }

    /// After reduce(): the total of sum i (first() <= i < last()), and of tail sum t.
    core::ExactSum total(std::size_t i) const { return decode(width() * (i - first())); }
    core::ExactSum tail_total(std::size_t t) const {
        return decode(width() * (last() - first() + t));
    }
    /// Whether the last reduction needed four limbs a sum.
    bool wide() const { return wide_; }

  private:
    static constexpr std::size_t kNarrow = core::ExactSum::kNarrowLimbs;
    std::size_t width() const { return wide_ ? core::ExactSum::kLimbs : kNarrow; }
    /// The block holding sum i.
    std::size_t block_of(std::size_t i) const;
    /// Lays the buffers out for `width` limbs a sum.
    void layout(std::size_t width);
    /// The narrow reduction; returns the count of sums that did not fit, over every rank.
    std::uint64_t narrow_reduce(comm::Communicator& comm, std::uint64_t misfits);
    core::ExactSum decode(std::size_t at) const {
        if (!wide_) return core::ExactSum::from_narrow_limbs(mine_[at], mine_[at + 1]);
        return decode_wide(at);
    }
    core::ExactSum decode_wide(std::size_t at) const;

    int rank_ = 0;
    std::size_t tail_ = 0;
    bool wide_ = false;
    std::vector<std::size_t> first_;   ///< block q holds sums [first_[q], first_[q + 1])
    std::vector<std::size_t> offset_;  ///< block q's first limb in send_
    std::vector<std::size_t> counts_;  ///< limbs of each block (the reduce-scatter's counts)
    HugeVector<std::int64_t> send_;    ///< an evaluation's are 16 MB at 10^6 columns
    HugeVector<std::int64_t> mine_;    ///< this rank's block of the totals
};

}  // namespace rotor::lasso
