// Small AVX-512 helpers shared by the *_avx512.cpp translation units, the only files
// compiled with AVX-512 enabled. Internal linkage only, as in avx2_util.h.
#pragma once

#include <immintrin.h>

#include "cpu/avx2_util.h"  // HEARTH_UNROLL

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

// Transposes a 16 × 16 matrix of int32 (row i in r[i]) in place.
static inline void transpose16(__m512i* r) {
    __m512i t[16];
    HEARTH_UNROLL
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    // r[4i + c], 128-bit lane L: rows 4i..4i+3 at column 4L + c.
    HEARTH_UNROLL
    for (int i = 0; i < 4; ++i) {
        r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    // Column 4L + c: the L-th 128-bit lanes of r[c], r[4 + c], r[8 + c], r[12 + c].
    HEARTH_UNROLL
    for (int c = 0; c < 4; ++c) {
        const __m512i x0 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0x44);
        const __m512i x1 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0xee);
        const __m512i y0 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0x44);
        const __m512i y1 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0xee);
        t[c] = _mm512_shuffle_i32x4(x0, y0, 0x88);
        t[4 + c] = _mm512_shuffle_i32x4(x0, y0, 0xdd);
        t[8 + c] = _mm512_shuffle_i32x4(x1, y1, 0x88);
        t[12 + c] = _mm512_shuffle_i32x4(x1, y1, 0xdd);
    }
    HEARTH_UNROLL
    for (int i = 0; i < 16; ++i) r[i] = t[i];
}

// Lane i of the result: the sum of v[i]'s 8 lanes (exact int32 adds).
static inline __m256i lane_sums(const __m256i* v) {
    const __m256i h01 = _mm256_hadd_epi32(v[0], v[1]);
    const __m256i h23 = _mm256_hadd_epi32(v[2], v[3]);
    const __m256i h45 = _mm256_hadd_epi32(v[4], v[5]);
    const __m256i h67 = _mm256_hadd_epi32(v[6], v[7]);
    // Per 128-bit half: rows 0-3 (h03) and 4-7 (h47), each half one half of the lanes.
    const __m256i h03 = _mm256_hadd_epi32(h01, h23);
    const __m256i h47 = _mm256_hadd_epi32(h45, h67);
    return _mm256_add_epi32(_mm256_permute2x128_si256(h03, h47, 0x20),
                            _mm256_permute2x128_si256(h03, h47, 0x31));
}

}  // namespace hearth::kernels::cpu::avx512
