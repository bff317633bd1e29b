#include "cpu/bench/int8_peak.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace hearth::kernels::bench {

namespace {

constexpr int64_t kIterations = int64_t{1} << 22;

}  // namespace

Int8Peak measure_int8_peak(cpu::SimdLevel level, int threads, int reps) {
    Int8Peak peak;
    int64_t (*chains)(int64_t, int) = nullptr;
    double macs_per_instruction = 0.0;
#if defined(HEARTH_INT8_PEAK_X86)
    if (level == cpu::SimdLevel::Avx512 && cpu::cpu_has_avx512()) {
        chains = int8_chains_avx512;
        macs_per_instruction = 64.0;
        peak.instruction = "vpdpbusd zmm";
    } else if (cpu::uses_avx2(level) && cpu::cpu_has_avx2()) {
        chains = int8_chains_avx2;
        macs_per_instruction = 32.0;
        peak.instruction = "vpmaddubsw ymm";
    }
#else
    (void)level;
#endif
    if (!chains) return peak;
    threads = std::max(threads, 1);
    std::vector<int64_t> sink(static_cast<std::size_t>(threads) * 8);
    for (int r = 0; r < reps; ++r) {
        std::vector<std::thread> pool;
        const auto t0 = std::chrono::steady_clock::now();
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&sink, chains, t] {
                sink[static_cast<std::size_t>(t) * 8] = chains(kIterations, t);
            });
        for (auto& th : pool) th.join();
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double macs =
            macs_per_instruction * static_cast<double>(kIterations) * kInt8Chains * threads;
        peak.macs_per_s = std::max(peak.macs_per_s, macs / s);
    }
    volatile int64_t keep = 0;
    for (int64_t v : sink) keep = keep + v;
    (void)keep;
    return peak;
}

double measure_int8_tile(int rows, int groups, int threads, int reps) {
#if defined(HEARTH_INT8_PEAK_X86)
    if (!cpu::cpu_has_avx512()) return 0.0;
    constexpr int64_t kTileIterations = int64_t{1} << 16;  // × 64 steps of K
    threads = std::max(threads, 1);
    double best = 0.0;
    std::vector<int64_t> sink(static_cast<std::size_t>(threads) * 8);
    for (int r = 0; r < reps; ++r) {
        std::vector<std::thread> pool;
        const auto t0 = std::chrono::steady_clock::now();
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&sink, rows, groups, t] {
                sink[static_cast<std::size_t>(t) * 8] =
                    int8_tile_avx512(rows, groups, kTileIterations, t);
            });
        for (auto& th : pool) th.join();
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double macs = 64.0 * 64.0 * static_cast<double>(kTileIterations) * rows * groups *
                            static_cast<double>(threads);
        best = std::max(best, macs / s);
    }
    volatile int64_t keep = 0;
    for (int64_t v : sink) keep = keep + v;
    (void)keep;
    return best;
#else
    (void)rows, (void)groups, (void)threads, (void)reps;
    return 0.0;
#endif
}

}  // namespace hearth::kernels::bench
