// How core kernels run in parallel without depending on a threads library: a kernel takes a
// RangeLoop and the app passes one over its threads (sched::Runtime::parallel_for, or a team's
// shares), or serial_loop. Models whose results must not depend on the thread count cut the
// range into parts that depend on the problem only, and keep one result per part.
#pragma once

#include <cstdint>
#include <functional>

namespace rotor::core {

/// Runs body(lo, hi) over disjoint subranges covering [begin, end), possibly in parallel; body
/// is safe to call concurrently on disjoint ranges.
using RangeLoop = std::function<void(std::int64_t begin, std::int64_t end,
                                     const std::function<void(std::int64_t, std::int64_t)>& body)>;

/// The serial RangeLoop: body(begin, end) when the range is not empty.
inline void serial_loop(std::int64_t begin, std::int64_t end,
                        const std::function<void(std::int64_t, std::int64_t)>& body) {
    if (begin < end) body(begin, end);
}

}  // namespace rotor::core
