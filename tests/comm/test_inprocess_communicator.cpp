// The shared communicator cases on 1..4 in-process ranks, plus what only the in-process
// implementation can show: shared memory across ranks (barrier ordering, bit-identical sums)
// and failure handling of run_ranks.
#include "comm/inprocess_communicator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/base/error.h"
#include "tests/comm/comm_cases.h"

namespace rotor::comm {
namespace {

class InProcessRanks : public ::testing::TestWithParam<int> {};

#define ROTOR_INPROCESS_CASE(name)                                               \
    TEST_P(InProcessRanks, name) {                                               \
        run_ranks(GetParam(), [](Communicator& c) { testing::case_##name(c); }); \
    }

ROTOR_INPROCESS_CASE(rank_and_size)
ROTOR_INPROCESS_CASE(allreduce)
ROTOR_INPROCESS_CASE(reduce_scatter)
ROTOR_INPROCESS_CASE(allgather_blocks)
ROTOR_INPROCESS_CASE(any)
ROTOR_INPROCESS_CASE(broadcast_uneven)
ROTOR_INPROCESS_CASE(gather_uneven)
ROTOR_INPROCESS_CASE(allgather_uneven)
ROTOR_INPROCESS_CASE(point_to_point_unknown_sizes)
ROTOR_INPROCESS_CASE(ring_returns_home)
ROTOR_INPROCESS_CASE(ring_two_slices_pipelined)
ROTOR_INPROCESS_CASE(agree_on_failure)

TEST_P(InProcessRanks, BarrierOrdersEveryRankBeforeAnyoneLeaves) {
    const int p = GetParam();
    std::atomic<int> arrived{0};
    std::atomic<int> early_leavers{0};
    run_ranks(p, [&](Communicator& c) {
        for (int round = 1; round <= 20; ++round) {
            arrived.fetch_add(1);
            c.barrier();
            if (arrived.load() < round * p) early_leavers.fetch_add(1);
            c.barrier();  // nobody starts the next round before all checked this one
        }
    });
    EXPECT_EQ(early_leavers.load(), 0);
    EXPECT_EQ(arrived.load(), 20 * p);
}

TEST_P(InProcessRanks, DoubleSumIsRankOrderAndIdenticalEverywhere) {
    const int p = GetParam();
    // Values whose sum depends on the order of additions.
    auto value = [](int r, std::size_t i) {
        return (r % 2 == 0 ? 1e16 : 1.0) * (r + 1) + 0.1 * static_cast<double>(i);
    };
    std::vector<std::vector<double>> results(static_cast<std::size_t>(p));
    run_ranks(p, [&](Communicator& c) {
        std::vector<double> v(64);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = value(c.rank(), i);
        c.allreduce_sum(v);
        results[static_cast<std::size_t>(c.rank())] = v;
    });
    for (std::size_t i = 0; i < 64; ++i) {
        double want = 0.0;
        for (int r = 0; r < p; ++r) want = r == 0 ? value(r, i) : want + value(r, i);
        for (int r = 0; r < p; ++r) {
            const double got = results[static_cast<std::size_t>(r)][i];
            EXPECT_EQ(std::memcmp(&got, &want, sizeof(double)), 0)
                << "rank " << r << " element " << i << ": " << got << " vs " << want;
        }
    }
}

TEST_P(InProcessRanks, ThrowingRankUnblocksOthersAndIsRethrown) {
    const int p = GetParam();
    const int bad = p - 1;
    std::atomic<int> comm_errors{0};
    try {
        run_ranks(p, [&](Communicator& c) {
            if (c.rank() == bad) {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                throw InputError("corpus.txt", 3, 1, "bad token");
            }
            try {
                c.barrier();  // would wait forever for `bad` without the poisoning
            } catch (const CommError& e) {
                comm_errors.fetch_add(1);
                EXPECT_NE(std::string(e.what()).find("bad token"), std::string::npos) << e.what();
                throw;
            }
        });
        ADD_FAILURE() << "run_ranks did not rethrow";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("corpus.txt:3:1"), std::string::npos) << e.what();
    }
    EXPECT_EQ(comm_errors.load(), p - 1);
}

TEST_P(InProcessRanks, AbortMakesEveryRankThrowCommError) {
    const int p = GetParam();
    std::atomic<int> comm_errors{0};
    EXPECT_THROW(
        run_ranks(p,
                  [&](Communicator& c) {
                      try {
                          if (c.rank() == 0) c.abort(5);
                          std::vector<std::byte> buf;
                          Request r = c.irecv(buf, c.rank(), 3);  // never sent
                          c.wait(r);
                      } catch (const CommError& e) {
                          comm_errors.fetch_add(1);
                          EXPECT_NE(std::string(e.what()).find("abort(5)"), std::string::npos)
                              << e.what();
                          throw;
                      }
                  }),
        CommError);
    EXPECT_EQ(comm_errors.load(), p);
}

INSTANTIATE_TEST_SUITE_P(Ranks, InProcessRanks, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                             return "P" + std::to_string(param_info.param);
                         });

TEST(InProcessGroup, RejectsZeroRanks) {
    try {
        InProcessGroup group(0);
        ADD_FAILURE() << "no ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "ranks");
    }
}

TEST(InProcessGroup, MismatchedCollectivesThrowOnEveryRank) {
    std::atomic<int> errors{0};
    EXPECT_THROW(run_ranks(2,
                           [&](Communicator& c) {
                               try {
                                   if (c.rank() == 0) {
                                       c.barrier();
                                   } else {
                                       std::vector<std::byte> b(3);
                                       c.broadcast(b, 1);
                                   }
                               } catch (const CommError& e) {
                                   errors.fetch_add(1);
                                   throw;
                               }
                           }),
                 CommError);
    EXPECT_EQ(errors.load(), 2);
}

TEST(InProcessGroup, MessagesOnOneTagArriveInOrderAcrossManySends) {
    run_ranks(2, [](Communicator& c) {
        constexpr int kMessages = 200;
        if (c.rank() == 0) {
            std::vector<std::vector<std::byte>> out;
            std::vector<Request> sends;
            for (int i = 0; i < kMessages; ++i) {
                out.emplace_back(static_cast<std::size_t>(i % 13), static_cast<std::byte>(i));
            }
            for (const auto& m : out) sends.push_back(c.isend(m, 1, 9));
            for (auto& s : sends) c.wait(s);
        } else {
            for (int i = 0; i < kMessages; ++i) {
                std::vector<std::byte> buf;
                Request r = c.irecv(buf, 0, 9);
                c.wait(r);
                EXPECT_EQ(buf, std::vector<std::byte>(static_cast<std::size_t>(i % 13),
                                                      static_cast<std::byte>(i)))
                    << "message " << i;
            }
        }
    });
}

}  // namespace
}  // namespace rotor::comm
