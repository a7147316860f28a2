// Test bodies of the key-value push/pull engine (comm/kv.h), shared by the in-process tests
// (test_kv.cpp, P ranks as threads) and the MPI tests (test_kv_mpi.cpp under mpiexec). Every
// rank of the communicator runs the same case at the same time.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/communicator.h"
#include "comm/kv.h"

namespace rotor::comm::testing {

/// The layouts the cases run on for P ranks: every rank both server and worker, and (P >= 2)
/// servers the first P / 2 ranks, workers the others.
std::vector<KvLayout> kv_layouts(int ranks);

/// Per worker, its schedule: (kind 0 begin / 1 end, iteration, time_ns) triples.
using Schedules = std::vector<std::vector<KvEvent>>;

/// The largest lead of any begin(t) over the iterations finished on every worker at that time:
/// max over begin events of t − min_w (ends of w recorded at or before it). The delay bound τ
/// holds iff this is <= τ.
std::int64_t max_lead(const Schedules& schedules);

/// What a run of case_kv_sum saw, on every rank.
struct KvSumResult {
    Schedules schedules;           ///< every worker's schedule (allgathered)
    std::uint64_t bytes_sent = 0;  ///< this rank's
    KvStats stats;                 ///< this rank's
};

/// Workers push, for `iterations` iterations, range pushes of keys spread over every server
/// (values (w + 1)(t + 1) and 1) into servers that add them up; every pull is checked against the
/// sums it must see (exactly the pushes of iterations <= t with τ = 0; between those and all
/// pushes otherwise), the servers check on_complete's order and that every push of t arrived
/// first. `slow_worker` (index, or -1) sleeps 3 ms per iteration. `direct_self`: KvOptions'.
KvSumResult case_kv_sum(Communicator& comm, const KvLayout& layout, std::int64_t delay,
                        int iterations, int slow_worker, bool direct_self = true);

}  // namespace rotor::comm::testing
