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

// The AVX-512 tile kernels' inner loop on L1-resident data (rows × groups: 8 × 1, the
// first layout, or 4 × 3, the one kept), as multiply-accumulates per second over
// `threads` threads, best of `reps`; 0 without AVX-512 or for another shape. Why the tile
// kernels take 4 rows × 3 token registers: on Zen 5 one token register against 8
// broadcast rows ran vpdpbusd at ~85 % of the chains' peak, 3 against 4 at ~100 %.
double measure_int8_tile(int rows, int groups, int threads, int reps);
int64_t int8_tile_avx512(int rows, int groups, int64_t iterations, int seed);

}  // namespace hearth::kernels::bench
