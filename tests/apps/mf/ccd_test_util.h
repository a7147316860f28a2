// Shared by the CCD trainer's in-process and MPI tests: small ratings matrices with empty rows
// and columns, a run of the trainer on any communicator, and bitwise model comparison.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "apps/mf/trainer.h"
#include "comm/communicator.h"
#include "comm/inprocess_communicator.h"
#include "core/mf/ratings.h"
#include "sched/runtime.h"
#include "tests/core/mf/mf_test_util.h"

namespace rotor::mf::testing {

/// The CSR matrix `m` as Ratings with `extra_users` users and `extra_items` items that have no
/// rating (empty rows and columns at the end).
inline Ratings to_ratings(const Csr& m, std::uint32_t extra_users = 0,
                          std::uint32_t extra_items = 0) {
    std::vector<std::uint64_t> offsets = m.offsets;
    offsets.resize(offsets.size() + extra_users, offsets.back());
    return Ratings::from_csr(m.rows() + extra_users, m.cols + extra_items, std::move(offsets),
                             m.ids, m.values, "test");
}

/// A random matrix: 40 users, 30 items, 3 users and 2 items without ratings.
inline Ratings small_ratings(std::uint64_t seed = 7) {
    return to_ratings(random_csr(37, 28, 0.2, seed), 3, 2);
}

inline TrainOptions ccd_options(std::uint32_t k = 4) {
    TrainOptions o;
    o.solver = Solver::kCcd;
    o.rank = k;
    o.inner = 2;
    o.seed = 5;
    return o;
}

/// Trains `iterations` on this rank of `comm` with `threads` workers, starting from `state`
/// when given; the gathered model (rank 0), the objective after each iteration and the final
/// state.
struct CcdRun {
    Model model;
    std::vector<double> objectives;
    TrainerState state;
    std::vector<train::Record> records;
};

inline CcdRun run_ccd(comm::Communicator& comm, const Ratings& train, const TrainOptions& options,
                      int threads, int iterations, const TrainerState* from = nullptr,
                      const TestRatings* test = nullptr) {
    sched::Runtime runtime(threads, sched::PinMode::kNone);
    const TrainerInputs in{train, test, options, runtime, comm};
    auto trainer = make_trainer(in);  // the options' solver (ccd, or als for its tests)
    if (from != nullptr) trainer->restore(*from);
    CcdRun run;
    for (int it = 0; it < iterations; ++it) {
        train::Record r = trainer->iterate();
        trainer->evaluate_record(r);
        run.objectives.push_back(*r.get("objective"));
        run.records.push_back(std::move(r));
    }
    run.state = trainer->gather_state();
    run.model = trainer->gather_model();
    return run;
}

/// run_ccd on `ranks` in-process ranks; rank 0's result.
inline CcdRun run_ccd_ranks(const Ratings& train, const TrainOptions& options, int ranks,
                            int threads, int iterations, const TrainerState* from = nullptr,
                            const TestRatings* test = nullptr) {
    CcdRun out;
    comm::run_ranks(ranks, [&](comm::Communicator& c) {
        CcdRun run = run_ccd(c, train, options, threads, iterations, from, test);
        if (c.rank() == 0) out = std::move(run);
    });
    return out;
}

inline bool same_bits(std::span<const float> a, std::span<const float> b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

/// W, H, b, c and μ bitwise equal (0.0 and -0.0 differ, NaN equals itself).
inline void expect_bitwise_equal(const Model& a, const Model& b, const std::string& what) {
    EXPECT_EQ(a.w.rows(), b.w.rows()) << what;
    EXPECT_EQ(a.h.rows(), b.h.rows()) << what;
    EXPECT_TRUE(same_bits(a.w.values(), b.w.values())) << what << ": W";
    EXPECT_TRUE(same_bits(a.h.values(), b.h.values())) << what << ": H";
    EXPECT_TRUE(same_bits(a.row_bias, b.row_bias)) << what << ": b";
    EXPECT_TRUE(same_bits(a.col_bias, b.col_bias)) << what << ": c";
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a.mu), std::bit_cast<std::uint64_t>(b.mu)) << what;
}

}  // namespace rotor::mf::testing
