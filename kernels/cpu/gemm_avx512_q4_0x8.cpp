// AVX-512 (VNNI) kernel for Q4_0 weights repacked 8 rows at a time (weight_pack.h), the
// same layout as the AVX2 kernel's: two 8-row groups side by side fill one 512-bit
// register (16 rows, one per 32-bit lane), and vpdpbusd multiplies and sums 4 bytes per
// lane in one instruction where AVX2 needs maddubs, an add and a madd. Per row and token
// the operations are gemm_avx2_q4_0x8.cpp's, in the same order:
//     isum  = Σ q·qa                     (exact integers: the same sums, summed otherwise)
//     acc   = fma(float(isum), dw·da, acc)
//     acc_m = fma(dw, s, acc_m)
//     out   = acc + (-8)·acc_m
// so the results are the AVX2 kernel's (and the scalar kernel's) bits.
//
// Prefill only (more than kGroup tokens); fewer run the AVX2 kernel. Built with AVX-512
// F/BW/VL/VNNI enabled; called only when cpu_has_avx512(). Everything here has internal
// linkage and no std:: templates are instantiated (see avx2_util.h).
#include "cpu/act_quant.h"
#include "cpu/avx2_util.h"
#include "cpu/gemm_kernels.h"
#include "cpu/weight_pack.h"

namespace hearth::kernels::cpu {

namespace {

constexpr std::size_t kBlock = kQ4_0x8BlockBytes;
constexpr int kRows = 2 * kQ4_0x8Rows;

// 32 bytes of group g1 (or zeros when there is no second group) above 32 bytes of g0.
static inline __m512i load_pair(const uint8_t* p0, const uint8_t* p1) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p0));
    if (!p1) return _mm512_zextsi256_si512(lo);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p1)), 1);
}

// The 16 rows' fp16 scales of block b as floats (rows of g1 zero when there is none).
static inline __m512 scales16(const uint8_t* p0, const uint8_t* p1) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p0));
    const __m128i hi =
        p1 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(p1)) : _mm_setzero_si128();
    return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1));
}

// Activation bytes 4j..4j+3 of a block broadcast to the 16 lanes.
static inline __m512i act4(const int8_t* qa, int j) {
    return _mm512_set1_epi32(static_cast<int>(avx2::load_u32(qa + 4 * j)));
}

// The block's 16 × 32 nibbles as bytes: w[c] holds elements 4c..4c+3 (c < 4) and
// 16+4(c−4).. (c ≥ 4) of every row, as in gemm_avx2_q4_0x8.cpp.
static inline void unpack16(const uint8_t* p0, const uint8_t* p1, __m512i w[8]) {
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    HEARTH_UNROLL
    for (int c = 0; c < 4; ++c) {
        const __m512i v = load_pair(p0 + 16 + 32 * c, p1 ? p1 + 16 + 32 * c : nullptr);
        w[c] = _mm512_and_si512(v, m4);
        w[4 + c] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
    }
}

// The 16 rows' integer block sums against one token's 32 activation bytes, in two
// independent chains (the dpbusd latency would otherwise serialise them).
static inline __m512i block_sums16(const __m512i w[8], const int8_t* qa) {
    __m512i s0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[0], act4(qa, 0));
    __m512i s1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[4], act4(qa, 4));
    HEARTH_UNROLL
    for (int c = 1; c < 4; ++c) {
        s0 = _mm512_dpbusd_epi32(s0, w[c], act4(qa, c));
        s1 = _mm512_dpbusd_epi32(s1, w[4 + c], act4(qa, 4 + c));
    }
    return _mm512_add_epi32(s0, s1);
}

// acc + (-8)·acc_m for rows [0, n) of the pair, to out[0..n).
static inline void store_rows(__m512 acc, __m512 acc_m, float* out, int n) {
    const __m512 v = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_set1_ps(-8.0f), acc_m));
    if (n == kRows) {
        _mm512_storeu_ps(out, v);
        return;
    }
    _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << n) - 1u), v);
}

// Groups w0 and w1 × one group of kGroup tokens: each block is unpacked once for the 4
// tokens. qs [nb][4][32], ds [nb][2][4]; out[t·os + r].
static inline void gemm16x4(const uint8_t* w0, const uint8_t* w1, int64_t nb, const int8_t* qs,
                            const float* ds, float* out, std::size_t os, int nt, int n) {
    __m512 acc[kGroup];
    HEARTH_UNROLL
    for (int t = 0; t < kGroup; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* p0 = w0 + static_cast<std::size_t>(b) * kBlock;
        const uint8_t* p1 = w1 ? w1 + static_cast<std::size_t>(b) * kBlock : nullptr;
        __m512i q[8];
        unpack16(p0, p1, q);
        const __m512 d = scales16(p0, p1);
        HEARTH_UNROLL
        for (int t = 0; t < kGroup; ++t) {
            const __m512 isum = _mm512_cvtepi32_ps(block_sums16(q, qs + (b * kGroup + t) * 32));
            const __m512 sc = _mm512_mul_ps(d, _mm512_set1_ps(ds[b * 2 * kGroup + t]));
            acc[t] = _mm512_fmadd_ps(isum, sc, acc[t]);
        }
    }
    __m512 acc_m[kGroup];
    HEARTH_UNROLL
    for (int t = 0; t < kGroup; ++t) acc_m[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const __m512 d = scales16(w0 + static_cast<std::size_t>(b) * kBlock,
                                  w1 ? w1 + static_cast<std::size_t>(b) * kBlock : nullptr);
        HEARTH_UNROLL
        for (int t = 0; t < kGroup; ++t)
            acc_m[t] =
                _mm512_fmadd_ps(d, _mm512_set1_ps(ds[b * 2 * kGroup + kGroup + t]), acc_m[t]);
    }
    for (int t = 0; t < nt; ++t)
        store_rows(acc[t], acc_m[t], out + static_cast<std::size_t>(t) * os, n);
}

}  // namespace

void gemm_avx512_q4_0x8(const GemmArgs& a) {
    // Decode and a few tokens stream the weights from memory once: the AVX2 kernel reads
    // one row group at a time and keeps closer to the bandwidth (measured, 2 threads, Zen
    // 5: cold 1B-shaped products 10-30 % faster); the bits are the same either way.
    if (a.n_tokens <= kGroup) return gemm_avx2_q4_0x8(a);
    const int n_groups8 = (a.n_rows + kQ4_0x8Rows - 1) / kQ4_0x8Rows;
    // Group pair g, g+1: the second is null past the last group.
    const auto group = [&](int g) -> const uint8_t* {
        return g < n_groups8 ? a.w + static_cast<std::size_t>(g) * a.w_stride : nullptr;
    };
    const auto rows_of = [&](int g) {
        const int left = a.n_rows - g * kQ4_0x8Rows;
        return left < kRows ? left : kRows;
    };
    // Row groups outer, token groups inner: the pair's blocks stay in L1 while the tile's
    // tokens stream past.
    const int n_token_groups = (a.n_tokens + kGroup - 1) / kGroup;
    for (int g = 0; g < n_groups8; g += 2) {
        for (int tg = 0; tg < n_token_groups; ++tg) {
            const auto [qs, ds, nt] =
                q8x32_group(a.act, a.act_stride, a.nb, kGroup, tg, a.n_tokens);
            gemm16x4(group(g), group(g + 1), a.nb, qs, ds,
                     a.out + static_cast<std::size_t>(tg) * kGroup * a.out_stride + g * kQ4_0x8Rows,
                     a.out_stride, nt, rows_of(g));
        }
    }
}

}  // namespace hearth::kernels::cpu
