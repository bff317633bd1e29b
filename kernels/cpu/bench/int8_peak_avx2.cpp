// vpmaddubsw chains for int8_peak.h. Built with AVX2 enabled; no std:: templates here (an
// AVX2 copy of one could be merged with the portable one, see avx2_util.h).
#include <immintrin.h>

#include "cpu/bench/int8_peak.h"

namespace hearth::kernels::bench {

// Every loop over the chains is unrolled, so that acc[] lives in registers (a loop left
// rolled keeps it on the stack, and every instruction then waits on a store and a load).
int64_t int8_chains_avx2(int64_t iterations, int seed) {
    __m256i acc[kInt8Chains];
    __m256i a = _mm256_set1_epi8(static_cast<char>(3 + seed));
    const __m256i b = _mm256_set1_epi8(static_cast<char>(-5));
#if defined(__GNUC__)
#pragma GCC unroll 16
#endif
    for (int c = 0; c < kInt8Chains; ++c) acc[c] = _mm256_set1_epi16(static_cast<int16_t>(c));
    for (int64_t i = 0; i < iterations; ++i) {
#if defined(__GNUC__)
#pragma GCC unroll 16
#endif
        for (int c = 0; c < kInt8Chains; ++c) {
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
#if defined(__GNUC__)
#pragma GCC unroll 16
#endif
    for (int c = 1; c < kInt8Chains; ++c) s = _mm256_add_epi16(s, acc[c]);
    alignas(32) int16_t lanes[16];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
    int64_t total = 0;
    for (int i = 0; i < 16; ++i) total += lanes[i];
    return total;
}

}  // namespace hearth::kernels::bench
