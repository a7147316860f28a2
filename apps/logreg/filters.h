// The filters of the delayed block proximal gradient (docs/logreg.md, "Filters"): the names of
// `--filters a,b,c` and their options, and the comm::KvFilterStack built from them for one
// rank. The generic filters are comm's (comm/kv_filter.h); the KKT rule is core/logreg's
// (core/logreg/kkt_screen.h), wired in here as a predicate on a worker's pushes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "comm/kv_filter.h"
#include "core/logreg/kkt_screen.h"

namespace rotor::logreg {

/// Which filters, in order, and their parameters. A plain struct.
struct FilterOptions {
    std::vector<std::string> stack;  ///< of kkt, sigmod, skip, keycache, zstd; each at most once
    double kkt_delta = 0;            ///< δ of the KKT rule (>= 0)
    std::uint32_t kkt_refresh = 16;  ///< every kkt_refresh-th pass pushes every key; 0: never
    double sigmod_threshold = 0.01;  ///< c: entries change by more than c / (t + 1) to be sent
    double skip_rate = 0.1;          ///< p in [0, 1): the share of push entries skipped
    std::uint64_t seed = 1;          ///< of the random skip

    bool has(const std::string& name) const;
    /// The pull answers carry ĝ_k after w_k (the KKT filter needs it).
    bool pulls_gradient() const { return has("kkt"); }
    /// A filter may leave a worker's w behind the servers' (a final exact pull is needed).
    bool lossy_pulls() const { return has("sigmod"); }
};

/// Splits "a,b,c" into names ("all": every filter, in the documented order; "none" or "": no
/// filter); throws ConfigError("--filters") on an unknown or repeated name.
std::vector<std::string> parse_filters(const std::string& list);

/// The stack of one rank. `screen` (a worker's, or null on a pure server) is read by the KKT
/// filter when it pushes; it must outlive the stack. Pull answers are w_k (and the screen value
/// of ĝ_k) and pushes g_k then u_k, as core::ExactSum limbs (kLimbs each) when `exact_pushes`,
/// else plain: sigmod measures the change of w_k (or of the screen value) on pulls and of g_k
/// and u_k on pushes.
/// `blocks`: the key cache holds at least 2 × blocks + 16 lists a peer and channel (one a block,
/// and the final exact pull's), so a pass never cycles through more lists than it holds: a
/// least-recently-used cache one list short of the cycle misses on every list.
comm::KvFilterStack make_filter_stack(const FilterOptions& options, const KktScreen* screen,
                                      bool exact_pushes = true, std::size_t blocks = 0);

}  // namespace rotor::logreg
