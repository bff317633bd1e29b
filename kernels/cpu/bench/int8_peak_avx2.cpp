#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "cpu/bench/int8_peak.h"
#include "cpu/cpu_features.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define HEARTH_INT8_PEAK 1
#endif

namespace hearth::kernels::bench {

#if defined(HEARTH_INT8_PEAK)
namespace {

constexpr int kChains = 12;  // independent accumulators: throughput-, not latency-bound
constexpr int64_t kIterations = int64_t{1} << 22;

// kIterations × kChains maddubs (+ an int16 add each, on other ports); the lanes' sum.
int64_t run_chains(int seed) {
    __m256i acc[kChains];
    __m256i a = _mm256_set1_epi8(static_cast<char>(3 + seed));
    const __m256i b = _mm256_set1_epi8(static_cast<char>(-5));
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_epi16(static_cast<int16_t>(c));
    for (int64_t i = 0; i < kIterations; ++i) {
#if defined(__GNUC__)
#pragma GCC unroll 16
#endif
        for (int c = 0; c < kChains; ++c) {
#if defined(__GNUC__)
            __asm__("" : "+x"(a));  // a new operand each time: no product is shared or hoisted
#endif
            acc[c] = _mm256_add_epi16(acc[c], _mm256_maddubs_epi16(a, b));
#if defined(__GNUC__)
            __asm__("" : "+x"(acc[c]));  // each chain stays in its register
#endif
        }
    }
    __m256i s = acc[0];
    for (int c = 1; c < kChains; ++c) s = _mm256_add_epi16(s, acc[c]);
    alignas(32) int16_t lanes[16];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
    int64_t total = 0;
    for (int16_t v : lanes) total += v;
    return total;
}

}  // namespace

double measure_int8_peak(int threads, int reps) {
    if (!cpu::cpu_has_avx2()) return 0.0;
    threads = std::max(threads, 1);
    double best = 0.0;
    std::vector<int64_t> sink(static_cast<std::size_t>(threads) * 8);
    for (int r = 0; r < reps; ++r) {
        std::vector<std::thread> pool;
        const auto t0 = std::chrono::steady_clock::now();
        for (int t = 0; t < threads; ++t)
            pool.emplace_back(
                [&sink, t] { sink[static_cast<std::size_t>(t) * 8] = run_chains(t); });
        for (auto& th : pool) th.join();
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double macs = 32.0 * static_cast<double>(kIterations) * kChains * threads;
        best = std::max(best, macs / s);
    }
    volatile int64_t keep = 0;
    for (int64_t v : sink) keep = keep + v;
    (void)keep;
    return best;
}
#else
double measure_int8_peak(int, int) {
    return 0.0;
}
#endif

}  // namespace hearth::kernels::bench
