// vpdpbusd (AVX-512 VNNI) chains for int8_peak.h. Built with AVX-512 enabled; no std::
// templates here (see avx2_util.h).
#include <immintrin.h>

#include "cpu/bench/int8_peak.h"

namespace hearth::kernels::bench {

// Every loop over the chains is unrolled, so that acc[] lives in registers (a loop left
// rolled keeps it on the stack, and every instruction then waits on a store and a load).
int64_t int8_chains_avx512(int64_t iterations, int seed) {
    __m512i acc[kInt8Chains];
    __m512i a = _mm512_set1_epi8(static_cast<char>(3 + seed));
    const __m512i b = _mm512_set1_epi8(static_cast<char>(-5));
#if defined(__GNUC__)
#pragma GCC unroll 16
#endif
    for (int c = 0; c < kInt8Chains; ++c) acc[c] = _mm512_set1_epi32(c);
    for (int64_t i = 0; i < iterations; ++i) {
#if defined(__GNUC__)
#pragma GCC unroll 16
#endif
        for (int c = 0; c < kInt8Chains; ++c) {
#if defined(__GNUC__)
            __asm__("" : "+v"(a));  // a new operand each time: no product is shared or hoisted
#endif
            acc[c] = _mm512_dpbusd_epi32(acc[c], a, b);
#if defined(__GNUC__)
            __asm__("" : "+v"(acc[c]));  // each chain stays in its register
#endif
        }
    }
    __m512i s = acc[0];
#if defined(__GNUC__)
#pragma GCC unroll 16
#endif
    for (int c = 1; c < kInt8Chains; ++c) s = _mm512_add_epi32(s, acc[c]);
    alignas(64) int32_t lanes[16];
    _mm512_store_si512(lanes, s);
    int64_t total = 0;
    for (int i = 0; i < 16; ++i) total += lanes[i];
    return total;
}

}  // namespace hearth::kernels::bench

namespace hearth::kernels::bench {

namespace {

// The tile micro-kernels' inner loop (gemm_avx512_kquant.cpp, gemm_avx512_q8_0.cpp) on
// L1-resident data: per 4 bytes of K, G token registers loaded, R weight words broadcast,
// R × G vpdpbusd into R × G accumulators; 64 steps of K per iteration.
alignas(64) uint8_t g_weights[8][256];
alignas(64) uint8_t g_tokens[3][64][64];

template <int R, int G>
int64_t tile_loop(int64_t iterations, int seed) {
    __m512i acc[R][G];
#if defined(__GNUC__)
#pragma GCC unroll 8
#endif
    for (int i = 0; i < R; ++i)
#if defined(__GNUC__)
#pragma GCC unroll 3
#endif
        for (int q = 0; q < G; ++q) acc[i][q] = _mm512_set1_epi32(seed + i + q);
    for (int64_t it = 0; it < iterations; ++it) {
        const uint8_t* w = &g_weights[0][0];
        const uint8_t* x = &g_tokens[0][0][0];
#if defined(__GNUC__)
        __asm__("" : "+r"(w), "+r"(x));  // reloaded every iteration: nothing is hoisted
#endif
#if defined(__GNUC__)
#pragma GCC unroll 64
#endif
        for (int k = 0; k < 64; ++k) {
            __m512i xv[G];
#if defined(__GNUC__)
#pragma GCC unroll 3
#endif
            for (int q = 0; q < G; ++q) xv[q] = _mm512_load_si512(x + q * 4096 + 64 * k);
#if defined(__GNUC__)
#pragma GCC unroll 8
#endif
            for (int i = 0; i < R; ++i) {
                int32_t word;
                __builtin_memcpy(&word, w + 256 * i + 4 * k, 4);
                const __m512i wq = _mm512_set1_epi32(word);
#if defined(__GNUC__)
#pragma GCC unroll 3
#endif
                for (int q = 0; q < G; ++q) acc[i][q] = _mm512_dpbusd_epi32(acc[i][q], wq, xv[q]);
            }
        }
    }
    __m512i s = _mm512_setzero_si512();
    for (int i = 0; i < R; ++i)
        for (int q = 0; q < G; ++q) s = _mm512_add_epi32(s, acc[i][q]);
    alignas(64) int32_t lanes[16];
    _mm512_store_si512(lanes, s);
    int64_t total = 0;
    for (int i = 0; i < 16; ++i) total += lanes[i];
    return total;
}

}  // namespace

int64_t int8_tile_avx512(int rows, int groups, int64_t iterations, int seed) {
    if (rows == 8 && groups == 1) return tile_loop<8, 1>(iterations, seed);
    if (rows == 4 && groups == 3) return tile_loop<4, 3>(iterations, seed);
    return 0;
}

}  // namespace hearth::kernels::bench
