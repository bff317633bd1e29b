// AVX2 kernel for Q4_0 weights repacked 8 rows at a time (weight_pack.h), against Q8x32
// activations. One 32-byte load holds 4 elements of each of the 8 rows (low nibbles) and
// 4 more (high nibbles), so one maddubs against 4 activation bytes broadcast to every
// lane gives all 8 rows their partial sums side by side: the 8 rows' block sums end in
// the 8 lanes of one register with no horizontal adds, and each block's scaling is one
// 8-lane multiply and fused add. Per row and token, in block order:
//     isum  = Σ q·qa                     (exact integers, q the unsigned nibbles 0..15)
//     acc   = fma(float(isum), dw·da, acc)
//     acc_m = fma(dw, s, acc_m)          (s = da·Σ qa: the -8 offset of Q4_0)
//     out   = acc + (-8)·acc_m
// gemm_scalar.cpp computes the same per row on the file layout, so the bits are equal.
// Decode (one token) and prefill (groups of 4 tokens) run the same chain per row and
// token, which keeps a row's result independent of its company.
#include "cpu/act_quant.h"
#include "cpu/avx2_util.h"
#include "cpu/gemm_kernels.h"
#include "cpu/weight_pack.h"

namespace hearth::kernels::cpu {

namespace {

constexpr std::size_t kBlock = kQ4_0x8BlockBytes;

// The 8 rows' fp16 scales of block p as floats.
static inline __m256 scales8(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Activation bytes 4j..4j+3 of a block broadcast to the 8 lanes.
static inline __m256i act4(const int8_t* qa, int j) {
    return _mm256_set1_epi32(static_cast<int>(avx2::load_u32(qa + 4 * j)));
}

// The 8 rows' integer block sums against one token's 32 activation bytes: w[c] holds
// elements 4c..4c+3 (low nibbles, w[c] for c < 4) and 16+4c.. (w[c + 4]) of every row.
// Each maddubs pair sum is at most 2·15·127, so 8 of them fit int16 before the widening.
static inline __m256i block_sums8(const __m256i w[8], const int8_t* qa) {
    __m256i s = _mm256_maddubs_epi16(w[0], act4(qa, 0));
    HEARTH_UNROLL
    for (int c = 1; c < 4; ++c) s = _mm256_add_epi16(s, _mm256_maddubs_epi16(w[c], act4(qa, c)));
    HEARTH_UNROLL
    for (int c = 0; c < 4; ++c)
        s = _mm256_add_epi16(s, _mm256_maddubs_epi16(w[4 + c], act4(qa, 4 + c)));
    return _mm256_madd_epi16(s, _mm256_set1_epi16(1));
}

// The block's 8 × 32 nibbles as bytes (see block_sums8).
static inline void unpack8(const uint8_t* p, __m256i w[8]) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    HEARTH_UNROLL
    for (int c = 0; c < 4; ++c) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16 + 32 * c));
        w[c] = _mm256_and_si256(v, m4);
        w[4 + c] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
    }
}

// acc + (-8)·acc_m for rows [0, n) of the group, to out[0..n).
static inline void store_rows(__m256 acc, __m256 acc_m, float* out, int n) {
    const __m256 v = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(-8.0f), acc_m));
    if (n == kQ4_0x8Rows) {
        _mm256_storeu_ps(out, v);
        return;
    }
    alignas(32) float tmp[kQ4_0x8Rows];
    _mm256_store_ps(tmp, v);
    for (int r = 0; r < n; ++r) out[r] = tmp[r];
}

// The 144-byte block's cache lines, kPrefetchBytes ahead.
static inline void prefetch_block(const uint8_t* p) {
    avx2::prefetch_ahead(p);
    avx2::prefetch_ahead(p + 48);
    avx2::prefetch_ahead(p + 96);
}

// One row group × one token. qa [nb][32], ds [nb][2] = {da, s}.
static inline void gemv8(const uint8_t* w, int64_t nb, const int8_t* qa, const float* ds,
                         float* out, int n) {
    __m256 acc = _mm256_setzero_ps(), acc_m = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* p = w + static_cast<std::size_t>(b) * kBlock;
        prefetch_block(p);
        __m256i q[8];
        unpack8(p, q);
        const __m256 d = scales8(p);
        const __m256 isum = _mm256_cvtepi32_ps(block_sums8(q, qa + 32 * b));
        acc = _mm256_fmadd_ps(isum, _mm256_mul_ps(d, _mm256_set1_ps(ds[2 * b])), acc);
        acc_m = _mm256_fmadd_ps(d, _mm256_set1_ps(ds[2 * b + 1]), acc_m);
    }
    store_rows(acc, acc_m, out, n);
}

// One row group × one group of kGroup tokens: each block is unpacked once for the 4
// tokens. qs [nb][4][32], ds [nb][2][4]; out[t·os + r]. `stream`: the weights come from
// memory once (a few tokens of decode), so they are prefetched.
static inline void gemm8x4(const uint8_t* w, int64_t nb, const int8_t* qs, const float* ds,
                           float* out, std::size_t os, int nt, int n, bool stream) {
    __m256 acc[kGroup];
    HEARTH_UNROLL
    for (int t = 0; t < kGroup; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* p = w + static_cast<std::size_t>(b) * kBlock;
        if (stream) prefetch_block(p);
        __m256i q[8];
        unpack8(p, q);
        HEARTH_UNROLL
        for (int t = 0; t < kGroup; ++t) {
            const __m256 isum = _mm256_cvtepi32_ps(block_sums8(q, qs + (b * kGroup + t) * 32));
            const __m256 sc = _mm256_mul_ps(scales8(p), _mm256_set1_ps(ds[b * 2 * kGroup + t]));
            acc[t] = _mm256_fmadd_ps(isum, sc, acc[t]);
        }
    }
    // The offsets, in a second pass over the scales (the first needs every register).
    __m256 acc_m[kGroup];
    HEARTH_UNROLL
    for (int t = 0; t < kGroup; ++t) acc_m[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const __m256 d = scales8(w + static_cast<std::size_t>(b) * kBlock);
        HEARTH_UNROLL
        for (int t = 0; t < kGroup; ++t)
            acc_m[t] =
                _mm256_fmadd_ps(d, _mm256_set1_ps(ds[b * 2 * kGroup + kGroup + t]), acc_m[t]);
    }
    for (int t = 0; t < nt; ++t)
        store_rows(acc[t], acc_m[t], out + static_cast<std::size_t>(t) * os, n);
}

}  // namespace

void gemm_avx2_q4_0x8(const GemmArgs& a) {
    const int n_groups8 = (a.n_rows + kQ4_0x8Rows - 1) / kQ4_0x8Rows;
    if (a.group == 1) {
        for (int t = 0; t < a.n_tokens; ++t) {
            const uint8_t* row = a.act + static_cast<std::size_t>(t) * a.act_stride;
            const auto* qa = reinterpret_cast<const int8_t*>(row);
            const auto* ds = reinterpret_cast<const float*>(row + q8x32_ds_offset(a.nb, 1));
            float* out = a.out + static_cast<std::size_t>(t) * a.out_stride;
            for (int g = 0; g < n_groups8; ++g) {
                const int r = g * kQ4_0x8Rows;
                gemv8(a.w + static_cast<std::size_t>(g) * a.w_stride, a.nb, qa, ds, out + r,
                      a.n_rows - r < kQ4_0x8Rows ? a.n_rows - r : kQ4_0x8Rows);
            }
        }
        return;
    }
    // Row groups outer, token groups inner: a group's blocks (nb · 144 bytes) stay in L1
    // while the tile's tokens stream past.
    const int n_token_groups = (a.n_tokens + kGroup - 1) / kGroup;
    for (int g = 0; g < n_groups8; ++g) {
        const int r = g * kQ4_0x8Rows;
        const int n = a.n_rows - r < kQ4_0x8Rows ? a.n_rows - r : kQ4_0x8Rows;
        const uint8_t* w = a.w + static_cast<std::size_t>(g) * a.w_stride;
        for (int tg = 0; tg < n_token_groups; ++tg) {
            const auto [qs, ds, nt] =
                q8x32_group(a.act, a.act_stride, a.nb, kGroup, tg, a.n_tokens);
            gemm8x4(w, a.nb, qs, ds,
                    a.out + static_cast<std::size_t>(tg) * kGroup * a.out_stride + r, a.out_stride,
                    nt, n, n_token_groups == 1);
        }
    }
}

}  // namespace hearth::kernels::cpu
