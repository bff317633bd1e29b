// The machine's integer dot-product peak, the yardstick of prefill (a compute-bound
// product of quantised weights and 8-bit activations), measured with the instruction the
// backend's kernels build their dot products on at its SIMD level:
//   AVX2     vpmaddubsw on 256-bit registers (32 u8 × s8 products summed in pairs); sums
//            of the pairs into 32-bit lanes cost a further instruction per 2 to 16 of them
//            in the kernels, so real products reach a fraction of this.
//   AVX-512  vpdpbusd on 512-bit registers (64 u8 × s8 products summed in fours into
//            32-bit lanes and accumulated, VNNI).
// Independent chains on every thread, as multiply-accumulates per second.
#pragma once

#include <cstdint>

#include "cpu/cpu_features.h"

namespace hearth::kernels::bench {

struct Int8Peak {
    double macs_per_s = 0.0;  // 0 at the scalar level (no SIMD kernel to measure)
    const char* instruction = "none";
};

// Best of `reps` runs over `threads` threads at a resolved SIMD level.
Int8Peak measure_int8_peak(cpu::SimdLevel level, int threads, int reps);

// The chains themselves (int8_peak_avx2.cpp, int8_peak_avx512.cpp, each built for its
// instruction set): `iterations` × kInt8Chains instructions; returns a sum of the lanes
// so that nothing is optimised away.
inline constexpr int kInt8Chains = 12;
int64_t int8_chains_avx2(int64_t iterations, int seed);    // 32 MACs per instruction
int64_t int8_chains_avx512(int64_t iterations, int seed);  // 64 MACs per instruction

}  // namespace hearth::kernels::bench
