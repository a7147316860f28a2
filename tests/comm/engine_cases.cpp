#include "tests/comm/engine_cases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "comm/agreed.h"
#include "comm/collectives.h"
#include "comm/ring_pipeline.h"
#include "comm/wire.h"
#include "core/base/error.h"
#include "core/base/timer.h"

namespace rotor::comm::testing {
namespace engine_types {

/// A user struct carried by the typed collectives.
struct Report {
    std::int32_t rank = 0;
    std::uint64_t tokens = 0;
    double seconds = 0;
    std::string host;
    bool operator==(const Report&) const = default;
};

void wire_encode(WireWriter& w, const Report& r) {
    w.put(r.rank);
    w.put(r.tokens);
    w.put(r.seconds);
    w.put(r.host);
}

void wire_decode(WireReader& r, Report& out) {
    r.get(out.rank);
    r.get(out.tokens);
    r.get(out.seconds);
    r.get(out.host);
}

}  // namespace engine_types

namespace {

using engine_types::Report;

Report report_of(int q) {
    return Report{q, 1000u * static_cast<std::uint64_t>(q) + 7, 0.1 * q + 1e-17,
                  "host-" + std::string(static_cast<std::size_t>(q), 'x')};
}

/// Values of rank q that vary in size with q (rank 0 sends an empty vector).
std::vector<std::uint32_t> words_of(int q) {
    std::vector<std::uint32_t> v(static_cast<std::size_t>(q) * 3);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint32_t>(q * 100 + i);
    return v;
}

}  // namespace

void case_typed_collectives(Communicator& comm) {
    const int p = comm.size();
    const int me = comm.rank();
    const auto ints = allgather(comm, static_cast<std::int64_t>(-me), "ints");
    ASSERT_EQ(ints.size(), static_cast<std::size_t>(p));
    for (int q = 0; q < p; ++q) EXPECT_EQ(ints[q], -q);

    const auto reports = allgather(comm, report_of(me), "reports");
    ASSERT_EQ(reports.size(), static_cast<std::size_t>(p));
    for (int q = 0; q < p; ++q) EXPECT_EQ(reports[q], report_of(q));

    const auto words = allgather(comm, words_of(me), "words");
    for (int q = 0; q < p; ++q) EXPECT_EQ(words.at(q), words_of(q));

    for (int root = 0; root < p; ++root) {
        const auto got = gather(comm, std::vector<Report>{report_of(me), report_of(me + 1)}, root,
                                "report pairs");
        if (me != root) {
            EXPECT_TRUE(got.empty()) << "non-root " << me << " got data";
            continue;
        }
        ASSERT_EQ(got.size(), static_cast<std::size_t>(p));
        for (int q = 0; q < p; ++q)
            EXPECT_EQ(got[q], (std::vector<Report>{report_of(q), report_of(q + 1)}));
    }

    // Broadcast: root's value everywhere, bit for bit (NaN payloads and -0.0 included).
    const std::vector<double> specials{-0.0, std::numeric_limits<double>::infinity(),
                                       std::bit_cast<double>(std::uint64_t{0x7ff8000000000abc}),
                                       std::numeric_limits<double>::denorm_min()};
    for (int root = 0; root < p; ++root) {
        std::vector<double> v = me == root ? specials : std::vector<double>{1, 2, 3, 4, 5};
        broadcast(comm, v, root, "specials");
        ASSERT_EQ(v.size(), specials.size());
        for (std::size_t i = 0; i < v.size(); ++i)
            EXPECT_EQ(std::bit_cast<std::uint64_t>(v[i]),
                      std::bit_cast<std::uint64_t>(specials[i]));
        Report r = me == root ? report_of(root) : Report{};
        broadcast(comm, r, root, "report");
        EXPECT_EQ(r, report_of(root));
        std::string s = me == root ? std::string("from root ") + std::to_string(root) : "";
        broadcast(comm, s, root, "text");
        EXPECT_EQ(s, "from root " + std::to_string(root));
    }
}

void case_message_collectives(Communicator& comm) {
    const int p = comm.size();
    const int me = comm.rank();
    WireWriter mine;
    mine.put(static_cast<std::uint32_t>(me));
    mine.put(words_of(me));
    std::vector<int> order;
    allgather_messages(comm, mine.bytes(), "pairs", [&](int q, WireReader& r) {
        order.push_back(q);
        EXPECT_EQ(r.message(), "pairs of rank " + std::to_string(q));
        EXPECT_EQ(r.get<std::uint32_t>(), static_cast<std::uint32_t>(q));
        EXPECT_EQ(r.get<std::vector<std::uint32_t>>(), words_of(q));
    });
    std::vector<int> want(static_cast<std::size_t>(p));
    for (int q = 0; q < p; ++q) want[q] = q;
    EXPECT_EQ(order, want);

    // A reader that leaves the vector unread: the last rank's message has trailing bytes (every
    // rank's but rank 0's has: rank 0's vector is empty, so its 8-byte length is left over).
    const int root = p - 1;
    bool threw = false;
    try {
        gather_messages(comm, mine.bytes(), root, "short read",
                        [&](int, WireReader& r) { (void)r.get<std::uint32_t>(); });
    } catch (const CommError& e) {
        threw = true;
        EXPECT_EQ(e.rank(), me);
        EXPECT_NE(
            std::string(e.what()).find("short read of rank 0: 8 trailing bytes after offset 4"),
            std::string::npos)
            << e.what();
    }
    EXPECT_EQ(threw, me == root) << "only the root reads the gathered messages";
    comm.barrier();
}

namespace {

/// A slice on the wire: its id, then the ranks that computed on it, in order.
struct Slice {
    std::uint32_t id = 0;
    std::vector<std::int32_t> visitors;
};

/// After an iteration: exactly the home slices are back, each computed on by every rank once,
/// in ring order from its home.
void check_home_slices(std::map<int, Slice>& held, int me, int p) {
    ASSERT_EQ(held.size(), 2u);
    for (int slot = 0; slot < 2; ++slot) {
        const int s = 2 * me + slot;
        ASSERT_EQ(held.count(s), 1u) << "home slice " << s << " is not back";
        std::vector<std::int32_t> want;
        for (int j = 0; j < p; ++j) want.push_back((me + j) % p);
        EXPECT_EQ(held[s].visitors, want) << "slice " << s;
    }
}

/// One RingPipeline::run with the test's callbacks; checks what each callback sees.
void run_pipeline_once(Communicator& comm, int iteration) {
    const int p = comm.size();
    const int me = comm.rank();
    RingPipeline ring(comm);
    EXPECT_EQ(ring.num_slices(), 2 * p);
    std::map<int, Slice> held;
    for (int s : {2 * me, 2 * me + 1}) held[s] = Slice{static_cast<std::uint32_t>(s), {}};

    // The documented order: A_0, B_0, A_1, B_1, ..., A_{P-1}, B_{P-1}.
    std::vector<int> expected;
    for (int j = 0; j < p; ++j) {
        expected.push_back(RingPipeline::slice_at(me, p, 0, j));
        expected.push_back(RingPipeline::slice_at(me, p, 1, j));
    }
    std::vector<int> computed;
    std::vector<bool> active;
    std::uint64_t packed_bytes = 0;
    const RingCallbacks callbacks{
        .compute =
            [&](int slice, RingProgress& progress) {
                computed.push_back(slice);
                active.push_back(progress.active());
                auto it = held.find(slice);
                ASSERT_NE(it, held.end()) << "compute on a slice rank " << me << " lacks";
                EXPECT_EQ(it->second.id, static_cast<std::uint32_t>(slice));
                it->second.visitors.push_back(me);
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                // progress() is callable; the transfer in flight completes while we poll.
                Stopwatch watch;
                bool arrived = progress();
                while (!arrived && watch.seconds() < 30) {
                    std::this_thread::sleep_for(std::chrono::microseconds(100));
                    arrived = progress();
                }
                EXPECT_TRUE(arrived) << "the transfer in flight never completed";
            },
        .pack =
            [&](int slice) {
                auto it = held.find(slice);
                EXPECT_NE(it, held.end()) << "pack of a slice rank " << me << " lacks";
                WireWriter w;
                if (it != held.end()) {
                    w.put(it->second.id);
                    w.put(it->second.visitors);
                    held.erase(it);
                }
                packed_bytes += w.size();
                return w.take();
            },
        .unpack =
            [&](int slice, std::span<const std::byte> bytes) {
                EXPECT_EQ(held.count(slice), 0u) << "slice " << slice << " arrived twice";
                WireReader r(bytes, "test slice", me);
                Slice got;
                r.get(got.id);
                r.get(got.visitors);
                r.finish();
                EXPECT_EQ(got.id, static_cast<std::uint32_t>(slice)) << "unpack of another slice";
                held[slice] = std::move(got);
            },
    };
    Stopwatch wall;
    const RingStats stats = ring.run(callbacks);
    const double elapsed = wall.seconds();

    EXPECT_EQ(computed, expected) << "iteration " << iteration;
    ASSERT_EQ(active.size(), static_cast<std::size_t>(2 * p));
    EXPECT_FALSE(active[0]) << "nothing travels during the first compute";
    for (std::size_t i = 1; i < active.size(); ++i)
        EXPECT_TRUE(active[i]) << "compute " << i << " overlaps a transfer";
    check_home_slices(held, me, p);
    EXPECT_EQ(stats.rotations, static_cast<std::uint64_t>(2 * p));
    EXPECT_EQ(stats.bytes_sent, packed_bytes);
    EXPECT_GE(stats.comm_s, 0.0);
    EXPECT_GE(stats.wait_s, 0.0);
    EXPECT_GE(stats.compute_s, 2 * p * 0.001);
    EXPECT_LE(stats.comm_s + stats.wait_s + stats.compute_s, elapsed + 1e-3);
}

}  // namespace

void case_ring_pipeline(Communicator& comm) {
    const int p = comm.size();
    // The slice formula on every rank: slot s of rank q after j rotations.
    for (int q = 0; q < p; ++q)
        for (int j = 0; j <= p; ++j)
            for (int s = 0; s < 2; ++s)
                EXPECT_EQ(RingPipeline::slice_at(q, p, s, j), 2 * (((q - j) % p + p) % p) + s);
    EXPECT_EQ(RingPipeline::slice_at(0, 3, 1, 1), 5);
    EXPECT_EQ(RingPipeline::slice_at(2, 3, 0, 2), 0);
    for (int iteration = 0; iteration < 2; ++iteration) run_pipeline_once(comm, iteration);
}

void case_run_agreed(Communicator& comm) {
    const int p = comm.size();
    const int me = comm.rank();
    run_agreed(comm, [] {});  // nothing failed: nothing thrown
    for (int bad = 0; bad < p; ++bad) {
        try {
            run_agreed(comm, [&] {
                if (me == bad) throw ConfigError("--topics", "rank " + std::to_string(me));
            });
            ADD_FAILURE() << "run_agreed did not throw";
        } catch (const AgreedError& e) {
            EXPECT_EQ(e.failed_rank(), bad);
            EXPECT_EQ(e.exit_code(), ExitCode::kConfig);
            EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(bad)), std::string::npos)
                << e.what();
        }
    }
    // Several ranks fail with different errors: the lowest one's message and code everywhere,
    // a '|' in the message included.
    try {
        run_agreed(comm, [&] {
            if (me == p - 1) throw InputError("a|b.txt", 3, 4, "bad count");
            if (me == p - 2) throw CommError(me, "lost | link");
        });
        ADD_FAILURE() << "run_agreed did not throw";
    } catch (const AgreedError& e) {
        const int lowest = p == 1 ? 0 : p - 2;
        EXPECT_EQ(e.failed_rank(), lowest);
        if (p == 1) {
            EXPECT_EQ(e.exit_code(), ExitCode::kInput);
            EXPECT_EQ(std::string(e.what()), "a|b.txt:3:4: bad count");
        } else {
            EXPECT_EQ(e.exit_code(), ExitCode::kComm);
            EXPECT_EQ(std::string(e.what()), "rank " + std::to_string(lowest) + ": lost | link");
        }
    }
}

}  // namespace rotor::comm::testing
