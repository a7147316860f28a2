// The memory bound of the Lasso's thread scaling (docs/BENCHMARKS.md, "Lasso"): how much faster
// 2 threads stream through memory than 1 on this machine, for the two access patterns of a
// push/pull round (core/lasso/cd.h):
//
// - "stream": a plain sum of a large array of doubles, each thread over its half (the bound:
//   no kernel that reads its data once can scale better than this);
// - "push": the push's pattern, Σ v_e q[r_e] into an core::ExactSum over a column-major part
// (values
//   and row indices streamed, the residuals gathered), each thread over its own part.
//
//   bench_lasso_stream [MEGABYTES=256] [REPEATS=5]
//
// Prints, per pattern, the median seconds of REPEATS passes at 1 and 2 threads, GB/s and the
// speedup. Plain std::thread: this measures the machine, not rotor's runtime.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

#include "core/base/exact_sum.h"

namespace {

using Clock = std::chrono::steady_clock;

/// Median wall seconds of `repeats` runs of fn(t, threads) on `threads` threads at once.
double median_seconds(int threads, int repeats, const std::function<void(int, int)>& fn) {
    std::vector<double> s;
    for (int r = 0; r < repeats; ++r) {
        const auto t0 = Clock::now();
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t) pool.emplace_back(fn, t, threads);
        for (auto& th : pool) th.join();
        s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::sort(s.begin(), s.end());
    return s[s.size() / 2];
}

void report(const char* what, double bytes, double one, double two) {
    std::printf("%-7s 1 thread %.4f s (%.1f GB/s)  2 threads %.4f s (%.1f GB/s)  speedup %.2fx\n",
                what, one, bytes / one / 1e9, two, bytes / two / 1e9, one / two);
}

}  // namespace

int main(int argc, char** argv) {
    const double mb = argc > 1 ? std::atof(argv[1]) : 256;
    const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
    const auto n = static_cast<std::size_t>(mb * 1e6 / 8);
    std::vector<double> data(n);
    for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<double>(i % 1000) * 1e-3;
    volatile double sink = 0;
    const auto stream = [&](int t, int threads) {
        const std::size_t lo = n * t / threads, hi = n * (t + 1) / threads;
        double a = 0, b = 0, c = 0, d = 0;
        std::size_t i = lo;
        for (; i + 4 <= hi; i += 4) {
            a += data[i];
            b += data[i + 1];
            c += data[i + 2];
            d += data[i + 3];
        }
        for (; i < hi; ++i) a += data[i];
        sink = sink + a + b + c + d;
    };
    report("stream", double(n) * 8, median_seconds(1, repeats, stream),
           median_seconds(2, repeats, stream));

    // The push: entries of 12 bytes (value + row) over 200,000 rows of residuals per part.
    const std::size_t entries = n * 8 / 12, rows = 200000;
    std::vector<double> values(entries);
    std::vector<std::uint32_t> row(entries);
    std::vector<double> q(2 * rows);
    std::uint64_t x = 88172645463325252ULL;
    for (std::size_t e = 0; e < entries; ++e) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        values[e] = static_cast<double>(x % 1000) * 1e-3;
        row[e] = static_cast<std::uint32_t>(x % rows);
    }
    for (std::size_t i = 0; i < q.size(); ++i) q[i] = static_cast<double>(i % 7) * 0.1;
    const auto push = [&](int t, int threads) {
        const std::size_t lo = entries * t / threads, hi = entries * (t + 1) / threads;
        const double* part = q.data() + static_cast<std::size_t>(t % 2) * rows;
        rotor::core::ExactSum s;
        for (std::size_t e = lo; e < hi; ++e) s.add(values[e] * part[row[e]]);
        sink = sink + s.value();
    };
    report("push", double(entries) * 12, median_seconds(1, repeats, push),
           median_seconds(2, repeats, push));
    return 0;
}
