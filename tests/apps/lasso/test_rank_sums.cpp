#include "apps/lasso/rank_sums.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "comm/inprocess_communicator.h"

namespace rotor::lasso {
namespace {

/// Rank r's sum i: terms of both signs, and (when `big`) one above the narrow range on rank 1.
core::ExactSum part(int r, std::size_t i, bool big) {
    core::ExactSum s;
    s.add(0.1 * static_cast<double>(i + 1) * (r % 2 == 0 ? 1.0 : -3.0));
    s.add(1e-9 * static_cast<double>(r + 1));
    if (big && r == 1 && i == 2) s.add(1e12);  // above 2^38
    return s;
}

/// On `ranks` in-process ranks: every rank's block of n sums and 2 tail sums equal the
/// core::ExactSum of every rank's parts, bit for bit; `wide` says which reduction it took.
void check(int ranks, std::size_t n, bool big, bool invalid) {
    comm::run_ranks(ranks, [&](comm::Communicator& comm) {
        const int me = comm.rank();
        const auto get = [&](std::size_t i) {
            core::ExactSum s = part(me, i, big);
            if (invalid && me == 0 && i == 1) s.add(std::nan(""));
            return s;
        };
        const auto tail = [&](std::size_t t) {
            return core::ExactSum::of(static_cast<double>(t + me));
        };
        RankSums sums;
        sums.reset(n, 2, comm);
        // Encoded in two ranges, as two workers would.
        std::uint64_t misfits = sums.encode(0, n / 2, get) + sums.encode(n / 2, n, get);
        for (std::size_t t = 0; t < 2; ++t) misfits += sums.encode_tail(t, tail(t));
        sums.reduce(comm, misfits, get, tail);
        EXPECT_EQ(sums.wide(), big || invalid);
        EXPECT_EQ(sums.first(), n * static_cast<std::size_t>(me) / static_cast<std::size_t>(ranks));
        EXPECT_EQ(sums.last(),
                  n * static_cast<std::size_t>(me + 1) / static_cast<std::size_t>(ranks));
        for (std::size_t i = sums.first(); i < sums.last(); ++i) {
            core::ExactSum want;
            for (int r = 0; r < ranks; ++r) want.add(part(r, i, big));
            if (invalid && i == 1) {
                EXPECT_FALSE(sums.total(i).valid()) << i;
            } else {
                EXPECT_TRUE(sums.total(i) == want) << "rank " << me << " sum " << i;
            }
        }
        for (std::size_t t = 0; t < 2; ++t) {
            core::ExactSum want;
            for (int r = 0; r < ranks; ++r) want.add(static_cast<double>(t + r));
            EXPECT_TRUE(sums.tail_total(t) == want) << "tail " << t;
        }
    });
}

TEST(RankSums, EveryRankGetsTheExactTotalsOfItsBlockInTwoLimbs) {
    for (int ranks = 1; ranks <= 3; ++ranks) {
        check(ranks, 11, false, false);
        check(ranks, 2, false, false);  // fewer sums than ranks: an empty block
    }
}

TEST(RankSums, ASumOutOfTheNarrowRangeOnOneRankMakesEveryRankReduceFourLimbs) {
    for (int ranks = 2; ranks <= 3; ++ranks) check(ranks, 11, true, false);
}

TEST(RankSums, AnInvalidSumStaysInvalid) {
    for (int ranks = 1; ranks <= 3; ++ranks) check(ranks, 7, false, true);
}

}  // namespace
}  // namespace rotor::lasso
