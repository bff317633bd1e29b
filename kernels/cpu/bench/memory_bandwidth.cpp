#include "cpu/bench/memory_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace hearth::kernels::bench {

namespace {

using Clock = std::chrono::steady_clock;

// Runs f(thread, begin, end) over [0, n) split evenly into `threads` parts; the seconds.
template <typename F>
double timed_split(int threads, std::size_t n, F&& f) {
    std::vector<std::thread> pool;
    const auto t0 = Clock::now();
    for (int t = 0; t < threads; ++t) {
        const std::size_t b = n * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
        const std::size_t e =
            n * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(threads);
        pool.emplace_back([&f, t, b, e] { f(t, b, e); });
    }
    for (auto& th : pool) th.join();
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

Bandwidth measure_memory_bandwidth(int threads, std::size_t bytes_per_array, int reps) {
    threads = std::max(threads, 1);
    const std::size_t n = bytes_per_array / sizeof(double);
    std::vector<double> a(n, 0.0), b(n, 1.0), c(n, 2.0);
    std::vector<double> partial(static_cast<std::size_t>(threads) * 8, 0.0);  // no false sharing
    Bandwidth best;
    for (int r = 0; r < reps; ++r) {
        const double read_s = timed_split(threads, n, [&](int t, std::size_t lo, std::size_t hi) {
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;  // independent chains: not latency-bound
            std::size_t i = lo;
            for (; i + 4 <= hi; i += 4) {
                s0 += b[i];
                s1 += b[i + 1];
                s2 += b[i + 2];
                s3 += b[i + 3];
            }
            for (; i < hi; ++i) s0 += b[i];
            partial[static_cast<std::size_t>(t) * 8] = s0 + s1 + s2 + s3;
        });
        const double triad_s = timed_split(threads, n, [&](int, std::size_t lo, std::size_t hi) {
            for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] + 3.0 * c[i];
        });
        best.read_gb_per_s =
            std::max(best.read_gb_per_s, static_cast<double>(n * sizeof(double)) / read_s / 1e9);
        best.triad_gb_per_s = std::max(
            best.triad_gb_per_s, 3.0 * static_cast<double>(n * sizeof(double)) / triad_s / 1e9);
    }
    // Keep the sums alive.
    volatile double sink = 0;
    for (double p : partial) sink = sink + p;
    (void)sink;
    return best;
}

}  // namespace hearth::kernels::bench
