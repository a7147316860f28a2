// The filters of the key-value engine (comm/kv_filter.h), in process: key caching and zstd
// round-trip exactly through the wire format (random messages, repeated ranges = cache hits,
// changed ranges, evictions and signature collisions = keys sent again); a receiver missing a
// list throws instead of guessing; significantly-modified and random skip drop only what their
// rules allow; a KvNode with filters delivers what it is given.
#include "comm/kv_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "comm/inprocess_communicator.h"
#include "comm/kv.h"
#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::comm {
namespace {

/// Sender and receiver of one direction (separate stacks, as on two ranks).
struct Link {
    KvFilterStack sender;
    KvFilterStack receiver;
    std::uint64_t wire_bytes = 0;

    /// Sends through the wire format and returns what the receiver gets.
    KvEntries carry(const KvFilterContext& ctx, KvEntries e,
                    std::span<const std::uint64_t> request_keys = {}) {
        const std::size_t width = e.width;
        const KvWire wire = sender.send(ctx, e);
        WireWriter w;
        write_kv_wire(w, wire);
        const std::vector<std::byte> bytes = w.take();
        wire_bytes += bytes.size();
        EXPECT_EQ(bytes.size(), wire.bytes());
        WireReader r(bytes, "test message", 1);
        KvWire back = read_kv_wire(r);
        r.finish();
        KvFilterContext rctx = ctx;
        rctx.peer = 0;
        return receiver.receive(rctx, std::move(back), request_keys, width);
    }
};

std::vector<std::unique_ptr<KvFilter>> lossless(std::size_t capacity,
                                                KvKeyCacheFilter::Signature sig = {}) {
    std::vector<std::unique_ptr<KvFilter>> f;
    f.push_back(std::make_unique<KvKeyCacheFilter>(capacity, sig));
    f.push_back(std::make_unique<KvZstdFilter>());
    return f;
}

/// Random doubles, special values included, compared by bits.
double random_value(Rng& rng) {
    switch (rng.below(8)) {
        case 0:
            return 0.0;
        case 1:
            return -0.0;
        case 2:
            return std::numeric_limits<double>::denorm_min() * rng.below(1000);
        case 3:
            return static_cast<double>(rng.below(1u << 20)) - 500000;  // limb-like
        case 4:
            return std::numeric_limits<double>::infinity();
        default:
            return (rng.uniform() - 0.5) * std::ldexp(1.0, static_cast<int>(rng.below(80)) - 40);
    }
}

KvEntries random_entries(Rng& rng, std::size_t n, std::size_t width) {
    std::set<std::uint64_t> keys;
    while (keys.size() < n) keys.insert(rng.next() >> (1 + rng.below(60)));
    KvEntries e;
    e.keys.assign(keys.begin(), keys.end());
    e.width = width;
    for (std::size_t i = 0; i < n * width; ++i) e.values.push_back(random_value(rng));
    return e;
}

void expect_same(const KvEntries& got, const KvEntries& want) {
    ASSERT_EQ(got.keys, want.keys);
    ASSERT_EQ(got.values.size(), want.values.size());
    for (std::size_t i = 0; i < want.values.size(); ++i) {
        ASSERT_EQ(std::bit_cast<std::uint64_t>(got.values[i]),
                  std::bit_cast<std::uint64_t>(want.values[i]))
            << i;
    }
    ASSERT_EQ(got.kept(), got.size());
}

TEST(KvFilter, KeyCacheAndZstdRoundTripExactlyOverRepeatedAndChangedRanges) {
    Rng rng(3);
    Link link{KvFilterStack(lossless(3)), KvFilterStack(lossless(3))};
    std::vector<KvEntries> ranges;
    for (std::size_t n : {0, 1, 17, 200, 1000}) ranges.push_back(random_entries(rng, n, 3));
    std::uint64_t plain = 0;
    for (int round = 0; round < 60; ++round) {
        // Mostly repeated ranges (new values), sometimes a changed one (a key added).
        KvEntries e = ranges[rng.below(ranges.size())];
        if (rng.below(5) == 0 && !e.keys.empty()) {
            e.keys.back() += 1 + rng.below(7);
            e.keys.erase(std::unique(e.keys.begin(), e.keys.end()), e.keys.end());
            e.values.resize(e.keys.size() * e.width);
        }
        for (double& v : e.values) v = random_value(rng);
        const KvEntries want = e;
        // Flags, the keys and the values, each vector after its varint count (comm/wire.h); the
        // values as doubles or, when shorter, each a mask byte and its nonzero bytes.
        std::uint64_t suppressed = 0;
        for (const double v : e.values) {
            suppressed += 1;
            for (int j = 0; j < 8; ++j)
                suppressed += (std::bit_cast<std::uint64_t>(v) >> (8 * j) & 0xFF) != 0;
        }
        plain += 1 + (e.keys.empty() ? 0 : counted_bytes(e.size(), 8)) +
                 varint_bytes(e.values.size()) +
                 std::min<std::uint64_t>(8 * e.values.size(), suppressed);
        const KvFilterContext ctx{KvChannel::kPush, 0, 1, static_cast<std::uint64_t>(round), false};
        expect_same(link.carry(ctx, e), want);
    }
    const auto stats = link.sender.stats();
    ASSERT_EQ(stats.size(), 2u);
    EXPECT_EQ(stats[0].name, "keycache");
    EXPECT_LT(stats[0].push_out, stats[0].push_in);  // hits happened
    EXPECT_EQ(stats[0].push_in, plain);
    EXPECT_EQ(stats[1].push_in, stats[0].push_out);
}

TEST(KvFilter, DropCodesTravelInTheSmallestFormAndOneCodeOrEachCode) {
    // 13 keys, 2 values each; the wire form of the entries as a filter stack leaves it.
    KvWire wire;
    for (std::uint64_t k = 0; k < 13; ++k) wire.keys.push_back(100 + 3 * k);
    wire.has_dropped = true;
    wire.dropped_by = {0, 2, 2, 0, 0, 0, 2, 0, 0, 2, 0, 0, 2};  // one filter dropped 5
    const auto kept_values = [&] {
        const auto kept = std::count(wire.dropped_by.begin(), wire.dropped_by.end(), 0);
        wire.values.assign(static_cast<std::size_t>(kept) * 2, 0.25);
    };
    kept_values();
    const auto round_trip = [](const KvWire& in) {
        WireWriter w;
        write_kv_wire(w, in);
        const std::vector<std::byte> bytes = w.take();
        EXPECT_EQ(bytes.size(), in.bytes());
        WireReader r(bytes, "test message", 1);
        KvWire back = read_kv_wire(r);
        r.finish();
        EXPECT_EQ(back.keys, in.keys);
        EXPECT_EQ(back.dropped_by, in.dropped_by);
        EXPECT_EQ(back.values, in.values);
        return bytes;
    };
    const std::size_t head = 1 + counted_bytes(13, 8);  // flags, keys
    // The count, the common code, the form 0 and two bytes of bitmap (a list of the 5 dropped
    // would take 6, of the 8 kept 9); then the values.
    std::vector<std::byte> one = round_trip(wire);
    EXPECT_EQ(one.size(), head + (1 + 1 + 1 + 2) + counted_bytes(16, 8));
    // Two filters dropped: the code of each dropped key follows the bitmap.
    wire.dropped_by[6] = 1;
    std::vector<std::byte> each = round_trip(wire);
    EXPECT_EQ(each.size(), one.size() + 5);
    // One key kept (the 4th): its position, the form 4 * 1 + 1.
    wire.dropped_by.assign(13, 2);
    wire.dropped_by[3] = 0;
    kept_values();
    EXPECT_EQ(round_trip(wire).size(), head + (1 + 1 + 1 + 1) + counted_bytes(2, 8));
    // None kept: the count, the code and the form 1 (an empty list of kept keys).
    wire.dropped_by.assign(13, 2);
    kept_values();
    std::vector<std::byte> none = round_trip(wire);
    EXPECT_EQ(none.size(), head + 3 + counted_bytes(0, 8));
    // One dropped (the last): the form 4 * 1 + 3 and its position; two codes: each follows.
    wire.dropped_by.assign(13, 0);
    wire.dropped_by[12] = 1;
    kept_values();
    std::vector<std::byte> dropped = round_trip(wire);
    EXPECT_EQ(dropped.size(), head + (1 + 1 + 1 + 1) + counted_bytes(24, 8));
    wire.dropped_by[0] = 2;
    kept_values();
    EXPECT_EQ(round_trip(wire).size(), head + (1 + 1 + 1 + 2 + 2) + counted_bytes(22, 8));
    // Malformed: a bit past the 13th key; a dropped key whose code is 0; a listed position past
    // the last key; an unknown form.
    const auto fails = [](std::vector<std::byte> bytes, const std::string& what) {
        WireReader r(bytes, "test message", 1);
        try {
            read_kv_wire(r);
            ADD_FAILURE() << "no error for " << what;
        } catch (const CommError& e) {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    };
    const std::size_t bitmap = head + 3;
    one[bitmap + 1] |= std::byte{0x80};
    fails(one, "drop codes: bits past the last key");
    each[bitmap + 2] = std::byte{0};
    fails(each, "drop codes: a dropped key with code 0");
    dropped[head + 3] = std::byte{13};
    fails(dropped, "drop codes: a position past the last key");
    none[head + 2] = std::byte{2};
    fails(none, "drop codes: an unknown form");
}

TEST(KvFilter, DoublesTravelWithoutTheirZeroBytesBitForBit) {
    KvWire wire;
    wire.zero_bytes = true;
    wire.values = {0.0,
                   -0.0,
                   std::numeric_limits<double>::infinity(),
                   1.0,
                   std::numeric_limits<double>::denorm_min(),
                   std::bit_cast<double>(0x7FF8000000000123ULL),
                   0.1};
    WireWriter w;
    write_kv_wire(w, wire);
    std::vector<std::byte> bytes = w.take();
    // Flags, the count; then 0 and -0 in 1 and 2 bytes, +inf 3, 1.0 3, denorm_min 2, the NaN 5,
    // 0.1 9 (all 8 bytes of it nonzero).
    EXPECT_EQ(bytes.size(), 1 + 1 + (1 + 2 + 3 + 3 + 2 + 5 + 9));
    EXPECT_EQ(bytes.size(), wire.bytes());
    {
        WireReader r(bytes, "test message", 1);
        const KvWire back = read_kv_wire(r);
        r.finish();
        ASSERT_EQ(back.values.size(), wire.values.size());
        for (std::size_t i = 0; i < wire.values.size(); ++i) {
            EXPECT_EQ(std::bit_cast<std::uint64_t>(back.values[i]),
                      std::bit_cast<std::uint64_t>(wire.values[i]));
        }
    }
    bytes[1 + 1 + 1 + 1 + 1 + 1] = std::byte{0};  // +inf's first byte (0xF0)
    WireReader r(bytes, "test message", 1);
    EXPECT_THROW(read_kv_wire(r), CommError);
}

TEST(KvFilter, EvictionsAndSignatureCollisionsSendTheKeysAgain) {
    Rng rng(4);
    // Capacity 2 with 3 ranges in turn: every list was evicted before it comes back.
    auto cache_tx = std::make_unique<KvKeyCacheFilter>(2);
    KvKeyCacheFilter* tx = cache_tx.get();
    std::vector<std::unique_ptr<KvFilter>> f;
    f.push_back(std::move(cache_tx));
    Link evicting{KvFilterStack(std::move(f)), KvFilterStack(lossless(2))};
    std::vector<KvEntries> ranges;
    for (int i = 0; i < 3; ++i) ranges.push_back(random_entries(rng, 50, 1));
    // the receiver has zstd too but the sender never packs: decoding passes
    for (int round = 0; round < 9; ++round) {
        const KvEntries e = ranges[round % 3];
        expect_same(evicting.carry({KvChannel::kPush, 0, 1, 0, false}, e), e);
    }
    EXPECT_EQ(tx->hits(), 0u);
    EXPECT_EQ(tx->misses(), 9u);
    // Every list has the same signature: a different list under it is sent in full, the same
    // list again is a hit, and the receiver never confuses the two.
    const auto same = [](std::span<const std::uint64_t>) { return std::uint64_t{42}; };
    auto colliding = std::make_unique<KvKeyCacheFilter>(8, same);
    KvKeyCacheFilter* c = colliding.get();
    std::vector<std::unique_ptr<KvFilter>> g;
    g.push_back(std::move(colliding));
    std::vector<std::unique_ptr<KvFilter>> h;
    h.push_back(std::make_unique<KvKeyCacheFilter>(8, same));
    Link link{KvFilterStack(std::move(g)), KvFilterStack(std::move(h))};
    for (const int i : {0, 0, 1, 1, 0, 2, 2, 1}) {
        expect_same(link.carry({KvChannel::kPullRequest, 0, 1, 0, false}, ranges[i]), ranges[i]);
    }
    EXPECT_EQ(c->hits(), 3u);
    EXPECT_EQ(c->misses(), 5u);
}

TEST(KvFilter, AReceiverWithoutTheListThrowsInsteadOfGuessing) {
    Rng rng(5);
    KvFilterStack sender(lossless(4));
    KvFilterStack receiver(lossless(4));
    KvEntries e = random_entries(rng, 20, 2);
    for (std::size_t j = 0; j < e.values.size(); ++j) e.values[j] = static_cast<double>(j % 3);
    KvEntries copy = e;
    const KvFilterContext ctx{KvChannel::kPush, 0, 1, 0, false};
    (void)sender.send(ctx, copy);  // lost: the receiver never stores the list
    copy = e;
    const KvWire cached = sender.send(ctx, copy);
    ASSERT_TRUE(cached.keys_cached);
    EXPECT_THROW((void)receiver.receive(ctx, cached, {}, 2), CommError);
    // A corrupt zstd payload.
    KvWire bad = cached;
    bad.keys_cached = false;
    bad.keys = e.keys;
    ASSERT_TRUE(bad.packed);
    bad.payload[bad.payload.size() / 2] ^= std::uint8_t{0x5a};
    bad.payload.resize(bad.payload.size() - 1);
    EXPECT_THROW((void)receiver.receive(ctx, bad, {}, 2), CommError);
}

TEST(KvFilter, SigmodSendsOnlySignificantChangesAndTheReceiverRestoresTheRest) {
    Rng rng(6);
    const double c = 2.0;
    std::vector<std::unique_ptr<KvFilter>> tx, rx;
    tx.push_back(std::make_unique<KvSigmodFilter>(c));
    rx.push_back(std::make_unique<KvSigmodFilter>(c));
    Link link{KvFilterStack(std::move(tx)), KvFilterStack(std::move(rx))};
    const KvEntries keys = random_entries(rng, 300, 2);
    std::map<std::uint64_t, std::vector<double>> last_sent;  // the rule, kept independently
    std::uint64_t dropped = 0;
    for (std::uint64_t t = 0; t < 40; ++t) {
        KvEntries e = keys;
        for (std::size_t j = 0; j < e.values.size(); ++j) {
            e.values[j] = std::sin(static_cast<double>(t) * 0.1 + static_cast<double>(j)) *
                          (1 + rng.uniform());
        }
        const KvEntries truth = e;
        const KvEntries got = link.carry({KvChannel::kPullReply, 0, 1, t, false}, e, keys.keys);
        ASSERT_EQ(got.kept(), got.size());
        const double threshold = c / static_cast<double>(t + 1);
        for (std::size_t i = 0; i < truth.size(); ++i) {
            auto& old = last_sent[truth.keys[i]];
            if (old.empty()) old.assign(2, 0.0);
            double change = 0;
            for (std::size_t j = 0; j < 2; ++j) {
                change = std::max(change, std::fabs(truth.values_of(i)[j] - old[j]));
            }
            const bool sent = change > threshold;
            for (std::size_t j = 0; j < 2; ++j) {
                // Sent: exact. Not sent: the last value sent, within the threshold.
                ASSERT_EQ(got.values_of(i)[j], sent ? truth.values_of(i)[j] : old[j]);
                ASSERT_LE(std::fabs(got.values_of(i)[j] - truth.values_of(i)[j]), threshold);
            }
            if (sent) {
                old.assign(truth.values_of(i).begin(), truth.values_of(i).end());
            } else {
                ++dropped;
            }
        }
    }
    EXPECT_GT(dropped, 1000u);  // the rule did drop (and the checks above saw it)
    EXPECT_EQ(link.sender.stats()[0].entries_dropped, dropped);
    EXPECT_LT(link.sender.stats()[0].pull_out, link.sender.stats()[0].pull_in);
    // An exact pull lets everything through and keeps both memories in step.
    KvEntries e = keys;
    const KvEntries got = link.carry({KvChannel::kPullReply, 0, 1, 99, true}, e, keys.keys);
    expect_same(got, keys);
    // Another exact pull, every other entry changed (to -0.0, bitwise not +0.0, or 0.5): the
    // entries with the very bits last sent travel as drop codes and come back with those bits.
    KvEntries next = keys;
    std::uint64_t unchanged = 0;
    for (std::size_t i = 0; i < next.size(); ++i) {
        if (i % 2 == 0) next.values[2 * i] = i % 4 == 0 ? -0.0 : 0.5;
        const auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
        unchanged += bits(next.values[2 * i]) == bits(keys.values[2 * i]) &&
                     bits(next.values[2 * i + 1]) == bits(keys.values[2 * i + 1]);
    }
    EXPECT_GE(unchanged, keys.size() / 2);
    const KvEntries want = next;
    const std::uint64_t before = link.sender.stats()[0].entries_dropped;
    expect_same(link.carry({KvChannel::kPullReply, 0, 1, 100, true}, next, keys.keys), want);
    EXPECT_EQ(link.sender.stats()[0].entries_dropped - before, unchanged);
}

TEST(KvFilter, RandomSkipIsDeterministicForASeedAndNearItsRate) {
    const KvSkipFilter a(0.3, 17), b(0.3, 17), other(0.3, 18);
    std::size_t skipped = 0, differ = 0;
    const std::size_t n = 200000;
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t t = i % 97, key = i * 0x9E3779B97F4A7C15ULL;
        ASSERT_EQ(a.skips(t, key), b.skips(t, key));
        skipped += a.skips(t, key) ? 1 : 0;
        differ += a.skips(t, key) != other.skips(t, key) ? 1 : 0;
    }
    const double rate = static_cast<double>(skipped) / n;
    EXPECT_NEAR(rate, 0.3, 5 * std::sqrt(0.3 * 0.7 / n));
    EXPECT_GT(differ, n / 4);  // another seed, other entries
    // Through a stack: pushes lose exactly the skipped keys; pulls pass.
    Rng rng(8);
    std::vector<std::unique_ptr<KvFilter>> f;
    f.push_back(std::make_unique<KvSkipFilter>(0.3, 17));
    KvFilterStack stack(std::move(f));
    KvEntries e = random_entries(rng, 1000, 1);
    const KvEntries before = e;
    (void)stack.send({KvChannel::kPush, 0, 1, 5, false}, e);
    for (std::size_t i = 0; i < e.size(); ++i) {
        ASSERT_EQ(e.dropped_by[i] != 0, a.skips(5, e.keys[i]));
    }
    KvEntries p = before;
    (void)stack.send({KvChannel::kPullReply, 0, 1, 5, false}, p);
    EXPECT_EQ(p.kept(), p.size());
    EXPECT_THROW(KvSkipFilter(1.0, 1), ConfigError);
}

TEST(KvFilter, APredicateDropsPushEntriesItNamesAndTheServerLearnsWhich) {
    Rng rng(9);
    const auto odd = [](std::uint64_t, std::uint64_t key, std::span<const double>) {
        return key % 2 == 1;
    };
    std::vector<std::unique_ptr<KvFilter>> tx, rx;
    tx.push_back(std::make_unique<KvPredicateFilter>("odd", odd));
    tx.push_back(std::make_unique<KvZstdFilter>());
    rx.push_back(std::make_unique<KvPredicateFilter>("odd", odd));
    rx.push_back(std::make_unique<KvZstdFilter>());
    Link link{KvFilterStack(std::move(tx)), KvFilterStack(std::move(rx))};
    const KvEntries e = random_entries(rng, 500, 2);
    const KvEntries got = link.carry({KvChannel::kPush, 0, 1, 0, false}, e);
    ASSERT_EQ(got.keys, e.keys);
    for (std::size_t i = 0; i < e.size(); ++i) {
        ASSERT_EQ(got.dropped_by[i] != 0, e.keys[i] % 2 == 1);
        if (got.dropped_by[i] == 0) {
            ASSERT_EQ(got.values_of(i)[0], e.values_of(i)[0]);
            ASSERT_EQ(got.values_of(i)[1], e.values_of(i)[1]);
        }
    }
    // A pull answer may not lose entries nobody restores.
    struct DropAll final : KvFilter {
        std::string name() const override { return "all"; }
        void select(const KvFilterContext&, KvEntries& x, std::uint8_t self) override {
            std::fill(x.dropped_by.begin(), x.dropped_by.end(), self);
        }
    };
    std::vector<std::unique_ptr<KvFilter>> a, b;
    a.push_back(std::make_unique<DropAll>());
    b.push_back(std::make_unique<DropAll>());
    Link lossy{KvFilterStack(std::move(a)), KvFilterStack(std::move(b))};
    KvEntries answer = e;
    EXPECT_THROW((void)lossy.carry({KvChannel::kPullReply, 0, 1, 0, false}, answer, e.keys),
                 CommError);
}

TEST(KvFilter, ANodeWithKeyCacheAndZstdDeliversPushesAndPullsExactly) {
    // 3 ranks: server 0, workers 1 and 2; every worker pushes the same key range each iteration
    // (cache hits after the first) and pulls the servers' running sums.
    const KvLayout layout = KvLayout::even({0}, {1, 2});
    KvOptions o;
    o.push_width = 2;
    std::mutex mu;
    std::vector<double> pulled;
    std::vector<KvStats> stats(3);
    run_ranks(3, [&](Communicator& c) {
        std::map<std::uint64_t, double> sums;
        KvServerHandler h{
            .on_push =
                [&](std::uint64_t, int, std::span<const std::uint64_t> keys,
                    std::span<const double> values) {
                    for (std::size_t i = 0; i < keys.size(); ++i) {
                        sums[keys[i]] += values[2 * i] + values[2 * i + 1];
                    }
                },
            .on_complete = [](std::uint64_t) {},
            .on_pull =
                [&](std::span<const std::uint64_t> keys, std::vector<double>& out) {
                    for (const std::uint64_t k : keys) out.push_back(sums[k]);
                },
        };
        KvNode node(c, layout, o, h, KvFilterStack(lossless(4)));
        if (node.is_worker()) {
            const std::vector<std::uint64_t> keys = {3, 1u << 20, 7ull << 40};
            std::vector<double> last;
            for (std::uint64_t t = 0; t < 5; ++t) {
                node.begin_iteration(t);
                node.push(t, keys, std::vector<double>{1, 0.5, 2, 0.25, 3, 0.125});
                last = node.wait_pull(node.pull(t, keys));
                node.end_iteration(t);
            }
            const std::lock_guard lock(mu);
            pulled = last;
        }
        node.finish();
        const std::lock_guard lock(mu);
        stats[static_cast<std::size_t>(c.rank())] = node.stats();
    });
    EXPECT_EQ(pulled, (std::vector<double>{15, 22.5, 31.25}));  // 5 rounds × 2 workers
    ASSERT_EQ(stats[1].filters.size(), 2u);
    EXPECT_LT(stats[1].filters[0].push_out, stats[1].filters[0].push_in);
    EXPECT_GT(stats[0].filters[1].pull_in, 0u);
    EXPECT_EQ(stats[0].request_bytes_sent, 0u);
    EXPECT_EQ(stats[1].reply_bytes_sent, 0u);
}

/// One run of 3 ranks (server 0; workers 0, 1 and 2) pushing two values a key for 3 iterations;
/// returns what server 0 received, each rank's stats, and each rank's filters afterwards.
struct Float32Run {
    std::vector<double> received;  ///< every value pushed, in order of (worker, iteration)
    std::vector<KvStats> stats = std::vector<KvStats>(3);
    std::vector<KvFilterStack> left = std::vector<KvFilterStack>(3);
};

Float32Run run_float32(bool float32, std::vector<KvFilterStack> stacks) {
    const KvLayout layout = KvLayout::even({0}, {0, 1, 2});
    KvOptions o;
    o.push_width = 2;
    o.push_float32 = float32;
    Float32Run out;
    std::mutex mu;
    std::map<std::pair<int, std::uint64_t>, std::vector<double>> got;
    run_ranks(3, [&](Communicator& c) {
        const auto r = static_cast<std::size_t>(c.rank());
        KvServerHandler h{
            .on_push =
                [&](std::uint64_t t, int w, std::span<const std::uint64_t>,
                    std::span<const double> values) {
                    got[{w, t}].assign(values.begin(), values.end());  // server 0's thread only
                },
            .on_complete = [](std::uint64_t) {},
            .on_pull = [](std::span<const std::uint64_t> keys,
                          std::vector<double>& v) { v.resize(v.size() + keys.size(), 1.0); },
        };
        KvNode node(c, layout, o, h, std::move(stacks[r]));
        const std::vector<std::uint64_t> keys = {5, 1u << 30, 9ull << 50};
        for (std::uint64_t t = 0; t < 3; ++t) {
            node.begin_iteration(t);
            const double x = static_cast<double>(c.rank() + 1) / 3 + static_cast<double>(t);
            node.push(t, keys, std::vector<double>{x, 0.1 * x, -x, 1e-30 * x, 1e30 * x, 0.0});
            node.wait_pull(node.pull(t, keys));
            node.end_iteration(t);
        }
        node.finish();
        const std::lock_guard lock(mu);
        out.stats[r] = node.stats();
        out.left[r] = node.release_filters();
    });
    for (const auto& [at, v] : got) out.received.insert(out.received.end(), v.begin(), v.end());
    return out;
}

std::vector<KvFilterStack> lossless_stacks() {
    std::vector<KvFilterStack> s;
    for (int r = 0; r < 3; ++r) s.emplace_back(lossless(8));
    return s;
}

TEST(KvFilter, Float32PushesArriveRoundedAndTakeHalfTheValueBytes) {
    const Float32Run doubles = run_float32(false, std::vector<KvFilterStack>(3));
    const Float32Run floats = run_float32(true, std::vector<KvFilterStack>(3));
    const Float32Run filtered = run_float32(true, lossless_stacks());
    ASSERT_EQ(doubles.received.size(), 3u * 3u * 6u);
    ASSERT_EQ(floats.received.size(), doubles.received.size());
    ASSERT_EQ(filtered.received.size(), doubles.received.size());
    std::size_t inexact = 0;
    for (std::size_t i = 0; i < doubles.received.size(); ++i) {
        const double want = static_cast<float>(doubles.received[i]);
        // Rank 0's own push (direct), the plain messages and the filtered ones alike.
        ASSERT_EQ(std::bit_cast<std::uint64_t>(floats.received[i]),
                  std::bit_cast<std::uint64_t>(want))
            << i;
        ASSERT_EQ(std::bit_cast<std::uint64_t>(filtered.received[i]),
                  std::bit_cast<std::uint64_t>(want))
            << i;
        inexact += want != doubles.received[i];
    }
    EXPECT_GT(inexact, 30u);  // the values do need rounding
    // A worker's requests: the same messages, 4 bytes fewer a value (3 pushes of 6 values).
    for (const std::size_t r : {0, 1, 2}) {
        EXPECT_EQ(doubles.stats[r].request_bytes_sent - floats.stats[r].request_bytes_sent,
                  3u * 6u * 4u)
            << r;
    }
    // A message of the other width is refused, not misread.
    std::vector<KvFilterStack> one;
    one.emplace_back(lossless(8));
    KvEntries e;
    e.keys = {1, 2};
    e.values = {0.5, 0.25};
    e.width = 1;
    const KvWire wire = one[0].send({KvChannel::kPush, 0, 1, 0, false, true}, e);
    KvFilterStack receiver(lossless(8));
    EXPECT_THROW(receiver.receive({KvChannel::kPush, 1, 0, 0, false, false}, wire, {}, 1),
                 CommError);
}

TEST(KvFilter, ReleasedFiltersGoOnWithTheirKeyCaches) {
    Float32Run first = run_float32(true, lossless_stacks());
    for (KvFilterStack& stack : first.left) stack.clear_stats();  // the second run's bytes only
    const Float32Run again = run_float32(true, std::move(first.left));
    // The second run's first pushes hit the caches the first run filled: every push of it is a
    // hit, where the first run missed on its first push to each server.
    for (const std::size_t r : {1, 2}) {
        ASSERT_EQ(again.stats[r].filters[0].name, "keycache");
        EXPECT_LT(again.stats[r].filters[0].push_out, first.stats[r].filters[0].push_out) << r;
    }
    EXPECT_EQ(again.received, first.received);
}

}  // namespace
}  // namespace rotor::comm
