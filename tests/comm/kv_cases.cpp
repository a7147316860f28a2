#include "tests/comm/kv_cases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <limits>
#include <map>
#include <thread>

#include "comm/collectives.h"
#include "comm/wire.h"

namespace rotor::comm {

void wire_encode(WireWriter& w, const KvEvent& e) {
    w.put(static_cast<std::uint8_t>(e.kind));
    w.put(e.iteration);
    w.put(e.time_ns);
    w.put(e.finished);
}

void wire_decode(WireReader& r, KvEvent& e) {
    e.kind = static_cast<KvEvent::Kind>(r.get<std::uint8_t>());
    e.iteration = r.get<std::uint64_t>();
    e.time_ns = r.get<std::int64_t>();
    e.finished = r.get<std::uint64_t>();
}

namespace testing {
namespace {

/// The keys of iteration t: 12 keys spread over the whole 64-bit range, shifted with t.
std::vector<std::uint64_t> keys_of(std::uint64_t t) {
    std::vector<std::uint64_t> keys;
    for (std::uint64_t i = 0; i < 12; ++i) {
        if ((i + t) % 3 == 0) continue;  // each iteration leaves a third out
        keys.push_back(i * (~std::uint64_t{0} / 12) + 5);
    }
    keys.push_back(~std::uint64_t{0});  // the last key of the last server
    return keys;
}

/// The sum every key should hold after iterations 0..t of every worker.
double expected_sum(std::uint64_t key, std::int64_t t, std::size_t workers) {
    double s = 0;
    for (std::int64_t u = 0; u <= t; ++u) {
        const auto k = keys_of(static_cast<std::uint64_t>(u));
        if (!std::binary_search(k.begin(), k.end(), key)) continue;
        for (std::size_t w = 0; w < workers; ++w) s += static_cast<double>((w + 1) * (u + 1));
    }
    return s;
}

}  // namespace

std::vector<KvLayout> kv_layouts(int ranks) {
    std::vector<int> all(ranks);
    for (int r = 0; r < ranks; ++r) all[r] = r;
    std::vector<KvLayout> out{KvLayout::even(all, all)};
    if (ranks >= 2) {
        const int s = ranks / 2;
        out.push_back(KvLayout::even(std::vector<int>(all.begin(), all.begin() + s),
                                     std::vector<int>(all.begin() + s, all.end())));
    }
    return out;
}

std::int64_t max_lead(const Schedules& schedules) {
    std::int64_t lead = std::numeric_limits<std::int64_t>::min();
    for (const auto& mine : schedules) {
        for (const KvEvent& b : mine) {
            if (b.kind != KvEvent::Kind::kBegin) continue;
            std::int64_t finished = std::numeric_limits<std::int64_t>::max();
            for (const auto& other : schedules) {
                std::int64_t ends = 0;
                for (const KvEvent& e : other) {
                    ends += e.kind == KvEvent::Kind::kEnd && e.time_ns <= b.time_ns;
                }
                finished = std::min(finished, ends);
            }
            lead = std::max(lead, static_cast<std::int64_t>(b.iteration) - finished);
        }
    }
    return lead;
}

KvSumResult case_kv_sum(Communicator& comm, const KvLayout& layout, std::int64_t delay,
                        int iterations, int slow_worker, bool direct_self) {
    const std::size_t workers = layout.workers.size();
    std::map<std::uint64_t, double> sums, counts;
    std::map<std::uint64_t, std::size_t> pushes;
    std::uint64_t next_complete = 0;
    KvServerHandler handler{
        .on_push =
            [&](std::uint64_t t, int, std::span<const std::uint64_t> keys,
                std::span<const double> values) {
                EXPECT_GE(t, next_complete);
                ++pushes[t];
                for (std::size_t i = 0; i < keys.size(); ++i) {
                    sums[keys[i]] += values[2 * i];
                    counts[keys[i]] += values[2 * i + 1];
                }
            },
        .on_complete =
            [&](std::uint64_t t) {
                EXPECT_EQ(t, next_complete++);
                EXPECT_EQ(pushes[t], workers);
            },
        .on_pull =
            [&](std::span<const std::uint64_t> keys, std::vector<double>& out) {
                for (const std::uint64_t k : keys) out.push_back(sums[k]);
            },
    };
    KvOptions options;
    options.delay = delay;
    options.push_width = 2;
    options.timeout_s = 30;
    options.direct_self = direct_self;
    KvNode node(comm, layout, options, std::move(handler));
    if (node.is_worker()) {
        const auto me = static_cast<std::size_t>(
            std::find(layout.workers.begin(), layout.workers.end(), comm.rank()) -
            layout.workers.begin());
        std::deque<std::pair<std::int64_t, std::uint64_t>> pending;  // (iteration, pull id)
        const auto check = [&](std::int64_t t, std::uint64_t id) {
            const std::vector<std::uint64_t> keys = keys_of(static_cast<std::uint64_t>(t));
            const std::vector<double> got = node.wait_pull(id);
            ASSERT_EQ(got.size(), keys.size());
            for (std::size_t i = 0; i < keys.size(); ++i) {
                const double low = expected_sum(keys[i], t, workers);
                if (delay == 0) {
                    EXPECT_EQ(got[i], low) << "key " << keys[i] << " iteration " << t;
                } else {
                    EXPECT_GE(got[i], low);
                    EXPECT_LE(got[i], expected_sum(keys[i], iterations - 1, workers));
                }
            }
        };
        for (std::int64_t t = 0; t < iterations; ++t) {
            const auto ut = static_cast<std::uint64_t>(t);
            node.begin_iteration(ut);
            if (static_cast<int>(me) == slow_worker) {
                std::this_thread::sleep_for(std::chrono::milliseconds(3));
            }
            const std::vector<std::uint64_t> keys = keys_of(ut);
            std::vector<double> values;
            for (std::size_t i = 0; i < keys.size(); ++i) {
                values.push_back(static_cast<double>((me + 1) * (ut + 1)));
                values.push_back(1);
            }
            node.push(ut, keys, values);
            pending.emplace_back(t, node.pull(ut, keys));
            while (!pending.empty() && delay != kInfiniteDelay &&
                   pending.front().first <= t - delay) {
                check(pending.front().first, pending.front().second);
                pending.pop_front();
            }
            node.end_iteration(ut);
        }
        for (const auto& [t, id] : pending) check(t, id);
    }
    node.finish();
    KvSumResult result;
    result.stats = node.stats();
    result.bytes_sent = result.stats.bytes_sent;
    const std::vector<KvEvent> mine = node.is_worker() ? node.schedule() : std::vector<KvEvent>{};
    const std::vector<std::vector<KvEvent>> all = allgather(comm, mine, "kv schedule");
    for (const int w : layout.workers) result.schedules.push_back(all[static_cast<std::size_t>(w)]);
    for (const auto& s : result.schedules) {
        EXPECT_EQ(s.size(), 2u * static_cast<std::size_t>(iterations));
        for (const KvEvent& e : s) {
            if (e.kind == KvEvent::Kind::kBegin && delay != kInfiniteDelay) {
                EXPECT_GE(static_cast<std::int64_t>(e.finished) + delay,
                          static_cast<std::int64_t>(e.iteration));
            }
        }
    }
    if (delay != kInfiniteDelay) {
        EXPECT_LE(max_lead(result.schedules), delay);
    }
    return result;
}

}  // namespace testing
}  // namespace rotor::comm
