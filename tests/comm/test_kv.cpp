// The key-value push/pull engine (comm/kv.h) on 1..4 in-process ranks: sums pushed and pulled
// exactly, the delay bound kept (and seen exceeded with τ = ∞ and a slow worker, so the check can
// fail), a failing rank turned into the same AgreedError everywhere, a silent rank into a
// CommError within the timeout. The shared case also runs under mpiexec (test_kv_mpi.cpp).
#include "comm/kv.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "comm/agreed.h"
#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "tests/comm/kv_cases.h"

namespace rotor::comm {
namespace {

TEST(KvLayout, EvenRangesCoverTheKeySpace) {
    const KvLayout l = KvLayout::even({0, 2, 3}, {1});
    ASSERT_EQ(l.bounds.size(), 4u);
    EXPECT_EQ(l.server_of(0), 0u);
    EXPECT_EQ(l.server_of(l.bounds[1] - 1), 0u);
    EXPECT_EQ(l.server_of(l.bounds[1]), 1u);
    EXPECT_EQ(l.server_of(l.bounds[2]), 2u);
    EXPECT_EQ(l.server_of(~std::uint64_t{0}), 2u);
    EXPECT_NO_THROW(l.validate(4));
    EXPECT_THROW(l.validate(3), ConfigError);
    EXPECT_THROW(KvLayout::even({0, 0}, {1}).validate(2), ConfigError);
    EXPECT_THROW(KvLayout::even({0}, {}).validate(2), ConfigError);
}

class KvRanks : public ::testing::TestWithParam<std::tuple<int, std::int64_t>> {};

TEST_P(KvRanks, PushAndPullSumsWithinTheDelayBound) {
    const auto [p, delay] = GetParam();
    for (const KvLayout& layout : testing::kv_layouts(p)) {
        run_ranks(p, [&](Communicator& c) { testing::case_kv_sum(c, layout, delay, 12, 0); });
    }
}

INSTANTIATE_TEST_SUITE_P(RanksAndDelays, KvRanks,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4),
                                            ::testing::Values(std::int64_t{0}, std::int64_t{2},
                                                              kInfiniteDelay)));

TEST(Kv, DirectDeliveryToItselfCountsTheSameMessagesAsSending) {
    // A rank that is server and worker handles its own messages at once (KvOptions::direct_self);
    // the case still checks every pulled sum, and the stats must equal those of sending them.
    for (const int p : {1, 2, 3}) {
        for (const KvLayout& layout : testing::kv_layouts(p)) {
            for (const std::int64_t delay : {std::int64_t{0}, std::int64_t{2}}) {
                std::vector<KvStats> direct(static_cast<std::size_t>(p));
                std::vector<KvStats> sent(static_cast<std::size_t>(p));
                for (const bool d : {true, false}) {
                    run_ranks(p, [&](Communicator& c) {
                        const testing::KvSumResult r =
                            testing::case_kv_sum(c, layout, delay, 12, -1, d);
                        (d ? direct : sent)[static_cast<std::size_t>(c.rank())] = r.stats;
                    });
                }
                for (std::size_t r = 0; r < direct.size(); ++r) {
                    SCOPED_TRACE(::testing::Message()
                                 << p << " ranks, rank " << r << ", delay " << delay << ", "
                                 << layout.servers.size() << " servers");
                    EXPECT_GT(sent[r].messages_sent, 0u);
                    EXPECT_EQ(direct[r].bytes_sent, sent[r].bytes_sent);
                    EXPECT_EQ(direct[r].request_bytes_sent, sent[r].request_bytes_sent);
                    EXPECT_EQ(direct[r].reply_bytes_sent, sent[r].reply_bytes_sent);
                    EXPECT_EQ(direct[r].messages_sent, sent[r].messages_sent);
                    EXPECT_EQ(direct[r].bytes_received, sent[r].bytes_received);
                    EXPECT_EQ(direct[r].messages_received, sent[r].messages_received);
                }
            }
        }
    }
}

TEST(Kv, InfiniteDelayLetsAFastWorkerRunAhead) {
    // Without a bound the fast worker does not wait for the slow one: the checker of the bound
    // sees a lead well above 0, so it would catch a broken bound.
    std::mutex mu;
    std::int64_t lead = 0;
    run_ranks(3, [&](Communicator& c) {
        const testing::KvSumResult r =
            testing::case_kv_sum(c, KvLayout::even({0}, {1, 2}), kInfiniteDelay, 10, 0);
        const std::lock_guard lock(mu);
        lead = testing::max_lead(r.schedules);
    });
    EXPECT_GE(lead, 3);
}

TEST(Kv, AFailingRankEndsEveryRankWithTheSameAgreedError) {
    constexpr int kP = 3;
    std::mutex mu;
    std::vector<std::string> errors(kP);
    std::vector<int> failed(kP, -1);
    run_ranks(kP, [&](Communicator& c) {
        KvServerHandler h{
            .on_push = [](std::uint64_t, int, std::span<const std::uint64_t>,
                          std::span<const double>) {},
            .on_complete = [](std::uint64_t) {},
            .on_pull = [](std::span<const std::uint64_t> keys,
                          std::vector<double>& out) { out.assign(keys.size(), 0.0); },
        };
        KvNode node(c, KvLayout::even({0}, {1, 2}), KvOptions{}, std::move(h));
        try {
            if (c.rank() == 2) {
                const InputError e("part-2.svm", 7, 3, "label \"x\" is not a finite number");
                node.fail(e);
                throw AgreedError(e.exit_code(), 2, e.what());
            }
            if (node.is_worker()) {
                for (std::uint64_t t = 0; t < 5; ++t) {
                    node.begin_iteration(t);
                    node.push(t, {}, {});
                    node.end_iteration(t);
                }
            }
            node.finish();
        } catch (const AgreedError& e) {
            const std::lock_guard lock(mu);
            errors[static_cast<std::size_t>(c.rank())] = e.what();
            failed[static_cast<std::size_t>(c.rank())] = e.failed_rank();
            EXPECT_EQ(e.exit_code(), ExitCode::kInput);
        }
    });
    for (int r = 0; r < kP; ++r) {
        EXPECT_EQ(failed[r], 2) << "rank " << r;
        EXPECT_NE(errors[r].find("part-2.svm:7:3: label"), std::string::npos) << errors[r];
    }
}

TEST(Kv, ASilentRankIsACommErrorNotAHang) {
    const auto start = std::chrono::steady_clock::now();
    std::atomic<int> timed_out{0};
    run_ranks(3, [&](Communicator& c) {
        if (c.rank() == 2) return;  // never joins: as if killed before its first message
        KvServerHandler h{
            .on_push = [](std::uint64_t, int, std::span<const std::uint64_t>,
                          std::span<const double>) {},
            .on_complete = [](std::uint64_t) {},
            .on_pull = [](std::span<const std::uint64_t>, std::vector<double>&) {},
        };
        KvOptions o;
        o.timeout_s = 0.3;
        KvNode node(c, KvLayout::even({0}, {1, 2}), o, std::move(h));
        try {
            if (node.is_worker()) {
                for (std::uint64_t t = 0; t < 3; ++t) {
                    node.begin_iteration(t);
                    node.push(t, {}, {});
                    node.end_iteration(t);
                }
            }
            node.finish();
        } catch (const CommError& e) {
            if (std::string(e.what()).find("no message for 0.3 s") != std::string::npos) {
                timed_out.fetch_add(1);
            }
        }
    });
    EXPECT_EQ(timed_out.load(), 2);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace rotor::comm
