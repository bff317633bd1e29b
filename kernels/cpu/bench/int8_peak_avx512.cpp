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
