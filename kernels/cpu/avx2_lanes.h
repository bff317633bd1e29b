// Helpers of the AVX2 kernels that keep one row or one token per 32-bit lane: the
// K-quant and Q8_0 tiles (8 tokens per register) and their few-token kernels (8 rows per
// register). Internal linkage only, as in avx2_util.h.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

#include "cpu/avx2_util.h"
#include "cpu/gemm_kernels.h"

namespace hearth::kernels::cpu::avx2 {

// Transposes an 8 × 8 matrix of 32-bit elements (row i in r[i]) in place.
static inline void transpose8(__m256i* r) {
    __m256i t[8], u[8];
    HEARTH_UNROLL
    for (int i = 0; i < 4; ++i) {
        t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    // u[4h + c], 128-bit half L: rows 4h..4h+3 at column 4L + c.
    HEARTH_UNROLL
    for (int h = 0; h < 2; ++h) {
        u[4 * h] = _mm256_unpacklo_epi64(t[4 * h], t[4 * h + 2]);
        u[4 * h + 1] = _mm256_unpackhi_epi64(t[4 * h], t[4 * h + 2]);
        u[4 * h + 2] = _mm256_unpacklo_epi64(t[4 * h + 1], t[4 * h + 3]);
        u[4 * h + 3] = _mm256_unpackhi_epi64(t[4 * h + 1], t[4 * h + 3]);
    }
    HEARTH_UNROLL
    for (int c = 0; c < 4; ++c) {
        r[c] = _mm256_permute2x128_si256(u[c], u[4 + c], 0x20);
        r[4 + c] = _mm256_permute2x128_si256(u[c], u[4 + c], 0x31);
    }
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

// The fp16 at byte offset off of 8 rows (a block's scale) as floats, lane i: rows[i].
static inline __m256 row_halves(const uint8_t* const* rows, std::size_t off) {
    return _mm256_cvtph_ps(_mm_setr_epi16(
        static_cast<short>(load_u16(rows[0] + off)), static_cast<short>(load_u16(rows[1] + off)),
        static_cast<short>(load_u16(rows[2] + off)), static_cast<short>(load_u16(rows[3] + off)),
        static_cast<short>(load_u16(rows[4] + off)), static_cast<short>(load_u16(rows[5] + off)),
        static_cast<short>(load_u16(rows[6] + off)), static_cast<short>(load_u16(rows[7] + off))));
}

// Tokens-in-lanes tiles: acc[r] holds row r's results for 8 tokens; rows [0, n_r ≤ 8) ×
// all 8 tokens go to out[t · out_stride + r], transposed.
static inline void store_rows_x8(const float (*acc)[8], int n_r, float* out,
                                 std::size_t out_stride) {
    __m256i v[8];
    HEARTH_UNROLL
    for (int i = 0; i < 8; ++i) v[i] = _mm256_castps_si256(_mm256_load_ps(acc[i < n_r ? i : 0]));
    transpose8(v);
    for (int t = 0; t < 8; ++t) {
        float* dst = out + static_cast<std::size_t>(t) * out_stride;
        if (n_r == 8) {
            _mm256_storeu_ps(dst, _mm256_castsi256_ps(v[t]));
        } else {
            alignas(32) float lanes[8];
            _mm256_store_ps(lanes, _mm256_castsi256_ps(v[t]));
            for (int i = 0; i < n_r; ++i) dst[i] = lanes[i];
        }
    }
}

// Runs f(std::integral_constant<int, N>{}, t0) over tokens [t_begin, n_tokens) in runs of
// N = Max tokens (the last run shorter): the few-token kernels, templated on their token
// count so that their per-token registers stay registers.
template <int N, typename F>
static inline void token_run(int n, int t0, F& f) {
    if constexpr (N > 1) {
        if (n < N) return token_run<N - 1>(n, t0, f);
    }
    f(std::integral_constant<int, N>{}, t0);
}
template <int Max, typename F>
static inline void token_runs(int t_begin, int n_tokens, F&& f) {
    for (int t0 = t_begin; t0 < n_tokens; t0 += Max)
        token_run<Max>(n_tokens - t0 < Max ? n_tokens - t0 : Max, t0, f);
}

// The AVX2 tokens-in-lanes tiles (gemm_avx2_kquant.cpp, gemm_avx2_q8_0.cpp): a matmul
// tile runs in passes of up to kTileRows rows × kTileTokens tokens, whole groups of 8;
// returns the tokens covered (the rest, fewer than 8, go to a few-token kernel, which
// gives the same bits).
inline constexpr int kTileRows = 64;  // the matmul's row chunks have ≤ 64
inline constexpr int kTileTokens = kAvx2TileTokens;
template <typename Pass>
static inline int run_tile_passes(int n_rows, int n_tokens, Pass&& pass) {
    const int here = n_tokens / 8 * 8;
    for (int r0 = 0; r0 < n_rows; r0 += kTileRows) {
        const int nr = n_rows - r0 < kTileRows ? n_rows - r0 : kTileRows;
        for (int t0 = 0; t0 < here; t0 += kTileTokens)
            pass(r0, nr, t0, here - t0 < kTileTokens ? here - t0 : kTileTokens);
    }
    return here;
}

namespace {

// One S per thread, aligned, made on first use (a pool thread runs one tile at a time).
// Not an AlignedBuffer, whose inline members would be compiled with AVX2 enabled in these
// files (see avx2_util.h); in an unnamed namespace, so every file has its own.
template <typename S>
class ThreadScratch {
  public:
    ~ThreadScratch() { ::operator delete (s_, std::align_val_t{alignof(S)}); }
    S& get() {
        if (!s_) s_ = static_cast<S*>(::operator new (sizeof(S), std::align_val_t{alignof(S)}));
        return *s_;
    }

  private:
    S* s_ = nullptr;
};

// This thread's S. MinGW-w64 frees a thread's TLS storage before its thread_local
// destructors run, so a destructor there reads freed memory at thread exit (seen: the
// Wine run of hearth-greedy crashing as threads ended). There the S is held by a plain
// pointer and left to the process: one per pool thread and kernel type, made again only
// when a new engine starts its pool. (The shipped Windows build is MSVC's.)
template <typename S>
S& thread_scratch() {
#if defined(__MINGW32__)
    static thread_local S* s = nullptr;
    if (!s) s = static_cast<S*>(::operator new (sizeof(S), std::align_val_t{alignof(S)}));
    return *s;
#else
    static thread_local ThreadScratch<S> holder;
    return holder.get();
#endif
}

}  // namespace

}  // namespace hearth::kernels::cpu::avx2
