#include "apps/lasso/rank_sums.h"

#include <algorithm>

namespace rotor::lasso {

void RankSums::reset(std::size_t n, std::size_t tail, const comm::Communicator& comm) {
    rank_ = comm.rank();
    tail_ = tail;
    wide_ = false;
    const auto ranks = static_cast<std::size_t>(comm.size());
    first_.resize(ranks + 1);
    for (std::size_t q = 0; q <= ranks; ++q) first_[q] = n * q / ranks;  // detail::share's cut
    layout(kNarrow);
}

void RankSums::layout(std::size_t width) {
    const std::size_t ranks = first_.size() - 1;
    offset_.resize(ranks);
    counts_.resize(ranks);
    std::size_t at = 0;
    for (std::size_t q = 0; q < ranks; ++q) {
        offset_[q] = at;
        // The block's sums, the tail, and (narrow) the count of sums that did not fit.
        counts_[q] = width * (first_[q + 1] - first_[q] + tail_) + (width == kNarrow ? 1 : 0);
        at += counts_[q];
    }
    send_.resize(at);
    mine_.resize(counts_[static_cast<std::size_t>(rank_)]);
}

std::size_t RankSums::block_of(std::size_t i) const {
    // The last q with first_[q] <= i (empty blocks skipped).
    return static_cast<std::size_t>(std::upper_bound(first_.begin(), first_.end() - 1, i) -
                                    first_.begin()) -
           1;
}

std::uint64_t RankSums::encode_tail(std::size_t t, const core::ExactSum& s) {
    bool fits = true;
    for (std::size_t q = 0; q + 1 < first_.size(); ++q) {
        std::int64_t* out = send_.data() + offset_[q] + kNarrow * (first_[q + 1] - first_[q] + t);
        fits = s.to_narrow_limbs(out);
    }
    return fits ? 0 : 1;
}

std::uint64_t RankSums::narrow_reduce(comm::Communicator& comm, std::uint64_t misfits) {
    for (std::size_t q = 0; q + 1 < first_.size(); ++q)
        send_[offset_[q] + counts_[q] - 1] = static_cast<std::int64_t>(misfits);
    comm.reduce_scatter_sum(send_, counts_, mine_);
    const auto all = static_cast<std::uint64_t>(mine_.back());
    if (all != 0) layout(core::ExactSum::kLimbs);
    return all;
}

core::ExactSum RankSums::decode_wide(std::size_t at) const {
    std::array<std::int64_t, core::ExactSum::kLimbs> l{};
    std::copy_n(mine_.begin() + static_cast<std::ptrdiff_t>(at), l.size(), l.begin());
    return core::ExactSum::from_limbs(l);
}

}  // namespace rotor::lasso
