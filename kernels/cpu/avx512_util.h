// Small AVX-512 helpers shared by the *_avx512.cpp translation units, the only files
// compiled with AVX-512 enabled. Internal linkage only, as in avx2_util.h.
#pragma once

#include <immintrin.h>

namespace hearth::kernels::cpu::avx512 {

// Two 256-bit halves as one 512-bit register: a below, b above.
static inline __m512i join(__m256i a, __m256i b) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
}
static inline __m512 join(__m256 a, __m256 b) {
    return _mm512_castpd_ps(
        _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(a)), _mm256_castps_pd(b), 1));
}

// The upper 256 bits.
static inline __m256 upper(__m512 v) {
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

}  // namespace hearth::kernels::cpu::avx512
