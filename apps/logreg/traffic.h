// The bytes a training run sent, summed over its ranks by role (docs/logreg.md, "Filters"):
// servers' (pull answers and clocks) and workers' (pushes, pull requests, done and stop
// messages), and per filter of the stack the bytes it saw and let through in each direction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/kv.h"

namespace rotor::logreg {

/// The sums over every rank. A plain struct.
struct Traffic {
    std::uint64_t server_bytes = 0;  ///< sent as servers
    std::uint64_t worker_bytes = 0;  ///< sent as workers
    std::uint64_t messages = 0;
    /// Each rank's seconds blocked in the kv engine (KvStats::wait_s: a worker's waits for the
    /// delay bound and for pulls; a pure server's whole run but its handlers), by rank.
    std::vector<double> rank_wait_s;
    std::vector<comm::KvFilterStats> filters;  ///< summed per filter, in stack order
};

/// Collective over `world`: sums every rank's stats; the result is complete on `root` only.
Traffic gather_traffic(comm::Communicator& world, const comm::KvStats& mine, int root = 0);

/// One line: "bytes sent: servers S, workers W; kkt push A -> B; ...".
std::string traffic_line(const Traffic& t);

/// A JSON object {"server_bytes":..,"worker_bytes":..,"messages":..,"rank_wait_s":[..],
/// "filters":[{"name":..,"push_in":..,"push_out":..,"pull_in":..,"pull_out":..,
/// "entries_dropped":..}]}.
std::string traffic_json(const Traffic& t);

}  // namespace rotor::logreg
