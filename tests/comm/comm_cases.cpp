#include "tests/comm/comm_cases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "comm/ring.h"

namespace rotor::comm::testing {

namespace {

/// A deterministic byte pattern that differs for every (seed, index).
std::vector<std::byte> pattern(std::size_t n, std::uint32_t seed) {
    std::vector<std::byte> out(n);
    std::uint32_t x = seed * 2654435761u + 12345u;
    for (auto& b : out) {
        x = x * 1664525u + 1013904223u;
        b = static_cast<std::byte>(x >> 24);
    }
    return out;
}

std::vector<std::byte> to_bytes(const std::vector<std::int32_t>& v) {
    std::vector<std::byte> out(v.size() * sizeof(std::int32_t));
    if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
    return out;
}

std::vector<std::int32_t> to_ints(const std::vector<std::byte>& b) {
    std::vector<std::int32_t> out(b.size() / sizeof(std::int32_t));
    if (!out.empty()) std::memcpy(out.data(), b.data(), out.size() * sizeof(std::int32_t));
    return out;
}

/// Size of the message rank `src` sends to rank `dst` (0 included; one > 8 KiB so MPI uses
/// its rendezvous protocol: the shared-memory eager limit is 4 KiB).
std::size_t p2p_size(int src, int dst, int which) {
    if (src == 1 && dst == 0 && which == 0) return 0;
    if (src == 0 && which == 1) return 9'000 + static_cast<std::size_t>(dst);
    return static_cast<std::size_t>(src * 31 + dst * 7 + which * 3 + 1);
}

}  // namespace

void case_rank_and_size(Communicator& comm) {
    const int p = comm.size();
    const int me = comm.rank();
    ASSERT_GE(p, 1);
    EXPECT_GE(me, 0);
    EXPECT_LT(me, p);
    const std::int32_t mine = me;
    const auto all = comm.allgather(std::as_bytes(std::span(&mine, 1)));
    ASSERT_EQ(all.size(), static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) EXPECT_EQ(to_ints(all[static_cast<std::size_t>(r)]).at(0), r);
}

void case_allreduce(Communicator& comm) {
    const int p = comm.size();
    const std::int64_t me = comm.rank();
    // Values beyond 2^31 so a 32-bit reduction would be caught.
    std::vector<std::int64_t> ints(257);
    for (std::size_t i = 0; i < ints.size(); ++i) {
        ints[i] = (me + 1) * (std::int64_t{1} << 33) + static_cast<std::int64_t>(i) * (me - 1);
    }
    comm.allreduce_sum(ints);
    const std::int64_t rank_sum = static_cast<std::int64_t>(p) * (p - 1) / 2;
    for (std::size_t i = 0; i < ints.size(); ++i) {
        const std::int64_t want = (rank_sum + p) * (std::int64_t{1} << 33) +
                                  static_cast<std::int64_t>(i) * (rank_sum - p);
        if (ints[i] != want) {
            ADD_FAILURE() << "element " << i << ": " << ints[i] << " != " << want;
            break;
        }
    }

    std::vector<double> d = {0.5 * static_cast<double>(me), -1.0 * static_cast<double>(me), 3.0};
    auto dmax = d;
    auto dmin = d;
    comm.allreduce_sum(d);
    EXPECT_DOUBLE_EQ(d[0], 0.5 * static_cast<double>(rank_sum));
    EXPECT_DOUBLE_EQ(d[1], -1.0 * static_cast<double>(rank_sum));
    EXPECT_DOUBLE_EQ(d[2], 3.0 * p);
    comm.allreduce_max(dmax);
    EXPECT_DOUBLE_EQ(dmax[0], 0.5 * (p - 1));
    EXPECT_DOUBLE_EQ(dmax[1], 0.0);
    comm.allreduce_min(dmin);
    EXPECT_DOUBLE_EQ(dmin[0], 0.0);
    EXPECT_DOUBLE_EQ(dmin[1], -1.0 * (p - 1));

    std::vector<std::int64_t> imax = {me * 10 - 7, -me};
    auto imin = imax;
    comm.allreduce_max(imax);
    EXPECT_EQ(imax[0], (p - 1) * 10 - 7);
    EXPECT_EQ(imax[1], 0);
    comm.allreduce_min(imin);
    EXPECT_EQ(imin[0], -7);
    EXPECT_EQ(imin[1], -(p - 1));

    std::vector<double> empty;
    comm.allreduce_sum(empty);  // a zero-length reduction is legal
    EXPECT_TRUE(empty.empty());
}

void case_reduce_scatter(Communicator& comm) {
    const int p = comm.size();
    const int me = comm.rank();
    // Uneven blocks, one of them empty when p > 1 (rank 1's), values beyond 2^31.
    std::vector<std::size_t> counts(static_cast<std::size_t>(p));
    for (int q = 0; q < p; ++q) counts[static_cast<std::size_t>(q)] = q == 1 ? 0 : 5 + 3 * q;
    std::size_t total = 0, first = 0;
    for (int q = 0; q < p; ++q) {
        if (q < me) first += counts[static_cast<std::size_t>(q)];
        total += counts[static_cast<std::size_t>(q)];
    }
    const auto value = [](int rank, std::size_t i) {
        return (rank + 1) * (std::int64_t{1} << 35) - static_cast<std::int64_t>(i) * (rank + 2);
    };
    std::vector<std::int64_t> data(total);
    for (std::size_t i = 0; i < total; ++i) data[i] = value(me, i);
    std::vector<std::int64_t> mine(counts[static_cast<std::size_t>(me)], -1);
    comm.reduce_scatter_sum(data, counts, mine);
    for (std::size_t k = 0; k < mine.size(); ++k) {
        std::int64_t want = 0;
        for (int q = 0; q < p; ++q) want += value(q, first + k);
        if (mine[k] != want) {
            ADD_FAILURE() << "rank " << me << " element " << k << ": " << mine[k] << " != " << want;
            break;
        }
    }
    std::vector<std::size_t> none(static_cast<std::size_t>(p), 0);
    comm.reduce_scatter_sum({}, none, {});  // a zero-length reduction is legal
}

void case_allgather_blocks(Communicator& comm) {
    const int p = comm.size();
    const int me = comm.rank();
    // Uneven blocks, one of them empty when p > 1 (rank 1's); bit patterns of doubles.
    std::vector<std::size_t> counts(static_cast<std::size_t>(p));
    for (int q = 0; q < p; ++q) counts[static_cast<std::size_t>(q)] = q == 1 ? 0 : 4 + 5 * q;
    std::size_t total = 0;
    for (const std::size_t c : counts) total += c;
    const auto value = [](int rank, std::size_t i) {
        return std::bit_cast<std::int64_t>(-0.1 * static_cast<double>(i) - rank);
    };
    std::vector<std::int64_t> data(total, -7);
    std::size_t first = 0;
    for (int q = 0; q < p; ++q) {
        for (std::size_t i = first; i < first + counts[static_cast<std::size_t>(q)]; ++i)
            if (q == me) data[i] = value(q, i);
        first += counts[static_cast<std::size_t>(q)];
    }
    comm.allgather_blocks(data, counts);
    first = 0;
    for (int q = 0; q < p; ++q) {
        for (std::size_t i = first; i < first + counts[static_cast<std::size_t>(q)]; ++i) {
            if (data[i] != value(q, i)) {
                ADD_FAILURE() << "rank " << me << " element " << i << " of rank " << q;
                return;
            }
        }
        first += counts[static_cast<std::size_t>(q)];
    }
    std::vector<std::size_t> none(static_cast<std::size_t>(p), 0);
    comm.allgather_blocks({}, none);  // a zero-length exchange is legal
}

void case_any(Communicator& comm) {
    const int p = comm.size();
    EXPECT_FALSE(comm.any(false));
    EXPECT_TRUE(comm.any(true));
    for (int r = 0; r < p; ++r) EXPECT_TRUE(comm.any(comm.rank() == r)) << "only rank " << r;
}

void case_broadcast_uneven(Communicator& comm) {
    const int p = comm.size();
    for (int root = 0; root < p; ++root) {
        const std::size_t n = root == 0 ? 0 : static_cast<std::size_t>(root) * 1000 + 3;
        const auto want = pattern(n, static_cast<std::uint32_t>(root));
        // Non-roots start with sizes that differ from root's: root's size must win.
        std::vector<std::byte> buf =
            comm.rank() == root
                ? want
                : std::vector<std::byte>(static_cast<std::size_t>(comm.rank()) * 17 + 5,
                                         std::byte{0xEE});
        comm.broadcast(buf, root);
        EXPECT_EQ(buf, want) << "root " << root;
    }
}

void case_gather_uneven(Communicator& comm) {
    const int p = comm.size();
    const int me = comm.rank();
    // Rank 0 sends nothing; the others send sizes that differ per rank.
    const auto mine = pattern(static_cast<std::size_t>(me) * 513, static_cast<std::uint32_t>(me));
    for (int root = 0; root < p; ++root) {
        const auto got = comm.gather(mine, root);
        if (me != root) {
            EXPECT_TRUE(got.empty()) << "non-root " << me << " got data from gather";
            continue;
        }
        EXPECT_EQ(got.size(), static_cast<std::size_t>(p));
        for (int r = 0; r < p && got.size() == static_cast<std::size_t>(p); ++r) {
            EXPECT_EQ(got[static_cast<std::size_t>(r)],
                      pattern(static_cast<std::size_t>(r) * 513, static_cast<std::uint32_t>(r)))
                << "root " << root << " from rank " << r;
        }
    }
}

void case_allgather_uneven(Communicator& comm) {
    const int p = comm.size();
    const int me = comm.rank();
    const auto mine =
        pattern(static_cast<std::size_t>((p - me) % 3) * 999, static_cast<std::uint32_t>(me + 50));
    const auto got = comm.allgather(mine);
    ASSERT_EQ(got.size(), static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) {
        EXPECT_EQ(got[static_cast<std::size_t>(r)],
                  pattern(static_cast<std::size_t>((p - r) % 3) * 999,
                          static_cast<std::uint32_t>(r + 50)))
            << "from rank " << r;
    }
}

void case_point_to_point_unknown_sizes(Communicator& comm) {
    const int p = comm.size();
    const int me = comm.rank();
    constexpr int kTag = 7;
    // Every rank sends two messages to every rank (itself included) on one tag, back to back;
    // the receiver does not know their sizes and must get them in order.
    std::vector<std::vector<std::byte>> outgoing;
    std::vector<Request> sends;
    for (int dst = 0; dst < p; ++dst) {
        for (int which = 0; which < 2; ++which) {
            outgoing.push_back(pattern(p2p_size(me, dst, which),
                                       static_cast<std::uint32_t>(me * 100 + dst * 10 + which)));
        }
    }
    for (int dst = 0; dst < p; ++dst) {
        for (int which = 0; which < 2; ++which) {
            sends.push_back(
                comm.isend(outgoing[static_cast<std::size_t>(dst * 2 + which)], dst, kTag));
        }
    }
    // One receive per (src, tag) at a time; receives from different sources overlap.
    std::vector<std::vector<std::byte>> bufs(static_cast<std::size_t>(p));
    for (int which = 0; which < 2; ++which) {
        std::vector<Request> recvs;
        for (int src = 0; src < p; ++src) {
            recvs.push_back(comm.irecv(bufs[static_cast<std::size_t>(src)], src, kTag));
        }
        // Poll with test() first, then wait: both paths must complete the request.
        for (int spin = 0; spin < 100; ++spin) {
            bool all = true;
            for (auto& r : recvs) all = comm.test(r) && all;
            if (all) break;
        }
        for (auto& r : recvs) {
            comm.wait(r);
            EXPECT_FALSE(r.pending());
        }
        for (int src = 0; src < p; ++src) {
            EXPECT_EQ(bufs[static_cast<std::size_t>(src)],
                      pattern(p2p_size(src, me, which),
                              static_cast<std::uint32_t>(src * 100 + me * 10 + which)))
                << "message " << which << " from rank " << src;
        }
    }
    for (auto& s : sends) comm.wait(s);
    Request empty;
    EXPECT_TRUE(comm.test(empty));
    comm.wait(empty);
}

void case_ring_returns_home(Communicator& comm) {
    const int p = comm.size();
    const int me = comm.rank();
    RingRotator ring(comm, kRingTagBase);
    EXPECT_EQ(ring.next(), (me + 1) % p);
    EXPECT_EQ(ring.prev(), (me - 1 + p) % p);
    // Buffer: [origin, visitor...]; its length differs per origin so sizes vary in flight.
    std::vector<std::int32_t> slice = {me};
    for (int round = 0; round < p; ++round) {
        slice.push_back(me);  // "compute" on the slice we hold
        ring.start_rotate(to_bytes(slice));
        slice = to_ints(ring.finish_rotate());
        EXPECT_FALSE(slice.empty());
        if (slice.empty()) slice.push_back(-1);
        EXPECT_EQ(slice[0], ((me - round - 1) % p + p) % p) << "round " << round;
    }
    ASSERT_EQ(slice.size(), static_cast<std::size_t>(p) + 1);
    EXPECT_EQ(slice[0], me) << "after P rotations the slice is home";
    std::vector<std::int32_t> visitors(slice.begin() + 1, slice.end());
    std::sort(visitors.begin(), visitors.end());
    for (int r = 0; r < p; ++r) EXPECT_EQ(visitors[static_cast<std::size_t>(r)], r);
    EXPECT_EQ(ring.rotations(), static_cast<std::uint64_t>(p));
    EXPECT_GE(ring.wait_seconds(), 0.0);
    EXPECT_FALSE(ring.in_flight());
}

void case_ring_two_slices_pipelined(Communicator& comm) {
    const int p = comm.size();
    const int me = comm.rank();
    // Slices 2*me (slot 0) and 2*me + 1 (slot 1); a slice is [id, visitor...] plus padding so
    // the payload is several chunks when the communicator chunks.
    auto make = [](std::int32_t id) { return std::vector<std::int32_t>{id}; };
    auto compute = [&](std::vector<std::int32_t>& s) { s.push_back(me); };
    RingRotator rot_a(comm, kRingTagBase);
    RingRotator rot_b(comm, kRingTagBase + 1);
    std::vector<std::int32_t> a = make(2 * me);
    std::vector<std::int32_t> b = make(2 * me + 1);

    compute(a);
    rot_a.start_rotate(to_bytes(a));
    for (int round = 0; round < p; ++round) {
        compute(b);  // overlaps slice a's transfer
        rot_b.start_rotate(to_bytes(b));
        EXPECT_TRUE(rot_a.in_flight() && rot_b.in_flight()) << "both slices in flight";
        rot_a.progress();
        a = to_ints(rot_a.finish_rotate());
        if (round < p - 1) {
            compute(a);  // overlaps slice b's transfer
            rot_a.start_rotate(to_bytes(a));
        }
        b = to_ints(rot_b.finish_rotate());
    }
    for (const auto* s : {&a, &b}) {
        ASSERT_EQ(s->size(), static_cast<std::size_t>(p) + 1);
        std::vector<std::int32_t> visitors(s->begin() + 1, s->end());
        std::sort(visitors.begin(), visitors.end());
        for (int r = 0; r < p; ++r) EXPECT_EQ(visitors[static_cast<std::size_t>(r)], r);
    }
    EXPECT_EQ(a[0], 2 * me) << "slot 0 slice is home";
    EXPECT_EQ(b[0], 2 * me + 1) << "slot 1 slice is home";
    EXPECT_EQ(rot_a.rotations(), static_cast<std::uint64_t>(p));
    EXPECT_EQ(rot_b.rotations(), static_cast<std::uint64_t>(p));
    EXPECT_GT(rot_a.bytes_sent(), 0u);
}

void case_agree_on_failure(Communicator& comm) {
    const int p = comm.size();
    const int me = comm.rank();
    EXPECT_EQ(comm.agree_on_failure(false, "ignored"), std::nullopt);
    for (int bad = 0; bad < p; ++bad) {
        const bool i_failed = me == bad;
        const auto got = comm.agree_on_failure(
            i_failed, i_failed ? "rank " + std::to_string(me) + " could not read x.txt" : "");
        EXPECT_TRUE(got.has_value()) << "failing rank " << bad;
        EXPECT_EQ(got.value_or(""), "rank " + std::to_string(bad) + " could not read x.txt");
    }
    // Several ranks fail: everyone sees the lowest one's message.
    const bool odd_fails = me % 2 == 1 || me == p - 1;
    const auto got =
        comm.agree_on_failure_detail(odd_fails, "failure of rank " + std::to_string(me));
    ASSERT_TRUE(got.has_value());
    const int lowest = p == 1 ? 0 : 1;
    EXPECT_EQ(got->rank, lowest);
    EXPECT_EQ(got->message, "failure of rank " + std::to_string(lowest));
}

void run_all_cases(Communicator& comm) {
    case_rank_and_size(comm);
    case_allreduce(comm);
    case_reduce_scatter(comm);
    case_allgather_blocks(comm);
    case_any(comm);
    case_broadcast_uneven(comm);
    case_gather_uneven(comm);
    case_allgather_uneven(comm);
    case_point_to_point_unknown_sizes(comm);
    case_ring_returns_home(comm);
    case_ring_two_slices_pipelined(comm);
    case_agree_on_failure(comm);
}

}  // namespace rotor::comm::testing
