// Small AVX-512 helpers shared by the *_avx512.cpp translation units, the only files
// compiled with AVX-512 enabled. Internal linkage only, as in avx2_util.h.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <type_traits>

#include "cpu/avx2_lanes.h"    // thread_scratch
#include "cpu/avx2_util.h"     // HEARTH_UNROLL
#include "cpu/gemm_kernels.h"  // kAvx512TileTokens

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

// Tokens-in-lanes tiles: acc[r][t] holds row r's results for 16 tokens (a float[16] per
// row); rows [0, n_r ≤ 16) × tokens [0, n_t ≤ 16) go to out[t · out_stride + r],
// transposed 16 × 16 at a time with masked stores.
static inline void store_rows_x16(const float (*acc)[16], int n_r, int n_t, float* out,
                                  std::size_t out_stride) {
    __m512i v[16];
    HEARTH_UNROLL
    for (int i = 0; i < 16; ++i)
        v[i] = i < n_r ? _mm512_castps_si512(_mm512_load_ps(acc[i])) : _mm512_setzero_si512();
    transpose16(v);
    const auto mask = static_cast<__mmask16>((1u << n_r) - 1u);
    for (int t = 0; t < n_t; ++t)
        _mm512_mask_storeu_ps(out + static_cast<std::size_t>(t) * out_stride, mask,
                              _mm512_castsi512_ps(v[t]));
}

// The tokens-in-lanes tile kernels (gemm_avx512_kquant.cpp, gemm_avx512_q8_0.cpp): 16
// tokens per register; a matmul tile is run in passes of up to kTileRows rows ×
// kTileGroups groups of tokens.
inline constexpr int kLanes = 16;
inline constexpr int kTileRows = 64;  // the matmul's row chunks have ≤ 64
inline constexpr int kTileGroups = kAvx512TileTokens / kLanes;

// Runs pass(r0, nr, t0, nt) over a tile of n_rows × n_tokens: whole groups of 16 tokens,
// and a last group of 8 or more; returns the tokens covered. The rest (fewer than 8) are
// left to a few-token kernel, which gives the same bits, rather than to a group of
// mostly idle lanes.
template <typename Pass>
static inline int run_tile_passes(int n_rows, int n_tokens, Pass&& pass) {
    const int rest = n_tokens % kLanes;
    const int here = rest >= 8 ? n_tokens : n_tokens - rest;
    constexpr int kPassTokens = kTileGroups * kLanes;
    for (int r0 = 0; r0 < n_rows; r0 += kTileRows) {
        const int nr = n_rows - r0 < kTileRows ? n_rows - r0 : kTileRows;
        for (int t0 = 0; t0 < here; t0 += kPassTokens)
            pass(r0, nr, t0, here - t0 < kPassTokens ? here - t0 : kPassTokens);
    }
    return here;
}

// f(std::integral_constant<int, G>{}) for the G = n (1, 2 or 3) token groups a
// micro-kernel takes at a time.
template <typename F>
static inline void with_groups(int n, F&& f) {
    if (n == 3) {
        f(std::integral_constant<int, 3>{});
    } else if (n == 2) {
        f(std::integral_constant<int, 2>{});
    } else {
        f(std::integral_constant<int, 1>{});
    }
}

// This thread's scratch of type S (avx2_lanes.h).
using avx2::thread_scratch;

}  // namespace hearth::kernels::cpu::avx512
