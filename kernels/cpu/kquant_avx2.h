// K-quant helpers shared by the AVX2 (gemm_avx2_kquant.cpp) and AVX-512
// (gemm_avx512_kquant.cpp) kernels: what the kernels need to know of each type (KTraits),
// scale unpacking, the 5th bit of Q5_K, the quants of the low-bit types (Q2_K, Q3_K,
// IQ4_XS, AVX2 only), one token's Q8xK activations.
//
// Include only from files compiled with AVX2 (or more) enabled. Everything here is in an
// unnamed namespace: each kernel file gets its own copy, compiled for its own instruction
// set, which the linker can never merge (see avx2_util.h).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "cpu/act_quant.h"
#include "cpu/avx2_util.h"
#include "cpu/gemm_kernels.h"
#include "quant/quant_types.h"

namespace hearth::kernels::cpu {

namespace {

// What the kernels need to know of a K-quant type, in terms of the order of kquant_few.h:
//   sub16  scales per 16 elements (Q6_K, Q2_K, Q3_K; IQ4_XS gives each 32-element
//          scale twice), else per 32 (Q4_K, Q5_K)
//   mins   S2 = Σ_j m_j·Σa and f = fl(S1)·d − dmin·fl(S2) (Q4_K, Q5_K, Q2_K)
//   shift  quants stored with an offset of 2^shift (Q6_K: 32, Q3_K: 4) that comes off S1
//          as (Σ_j sc_j·Σa) << shift; 0: none
//   sign   signed quants (IQ4_XS's grid values): each product taken as |w|·(a with w's sign)
//   flush  4-byte groups whose maddubs pair sums add up in int16 without overflow (at most
//          2·max|q|·127 each: Q4_K 3810, Q5_K 7874, Q6_K 16002, Q2_K 762, Q3_K 1778,
//          IQ4_XS 32258)
//   d, dmin  byte offsets of the fp16 super-block scales
struct KTraits {
    std::size_t bytes;
    bool sub16, mins;
    int shift;
    bool sign;
    int flush;
    std::size_t d, dmin;
};

template <quant::TensorType T>
inline constexpr KTraits kK = [] {
    using quant::TensorType;
    if constexpr (T == TensorType::Q4_K) {
        return KTraits{sizeof(quant::BlockQ4_K), false, true, 0, false, 8, 0, 2};
    } else if constexpr (T == TensorType::Q5_K) {
        return KTraits{sizeof(quant::BlockQ5_K), false, true, 0, false, 4, 0, 2};
    } else if constexpr (T == TensorType::Q6_K) {
        return KTraits{sizeof(quant::BlockQ6_K), true, false, 5, false, 2, 208, 0};
    } else if constexpr (T == TensorType::Q2_K) {
        return KTraits{sizeof(quant::BlockQ2_K), true, true, 0, false, 4, 80, 82};
    } else if constexpr (T == TensorType::Q3_K) {
        return KTraits{sizeof(quant::BlockQ3_K), true, false, 2, false, 4, 108, 0};
    } else {
        static_assert(T == TensorType::IQ4_XS);
        return KTraits{sizeof(quant::BlockIQ4_XS), true, false, 0, true, 1, 0, 0};
    }
}();

// Bytes of one super-block of T.
template <quant::TensorType T>
inline constexpr std::size_t kKBlockBytes = kK<T>.bytes;

// Q2_K, Q3_K and IQ4_XS: their quants are made by lowk_quants.
template <quant::TensorType T>
inline constexpr bool kLowK =
    T == quant::TensorType::Q2_K || T == quant::TensorType::Q3_K || T == quant::TensorType::IQ4_XS;

// Unpacks the 12 scale bytes of a Q4_K/Q5_K super-block into sc[0..7] and m[0..7]
// (6 bits each), returned as bytes [sc0..sc7, m0..m7].
static inline __m128i k4_scales_mins(const uint8_t* s) {
    const uint32_t u0 = avx2::load_u32(s), u1 = avx2::load_u32(s + 4), u2 = avx2::load_u32(s + 8);
    const uint32_t sc_lo = u0 & 0x3f3f3f3fu;
    const uint32_t m_lo = u1 & 0x3f3f3f3fu;
    const uint32_t sc_hi = (u2 & 0x0f0f0f0fu) | (((u0 >> 6) & 0x03030303u) << 4);
    const uint32_t m_hi = ((u2 >> 4) & 0x0f0f0f0fu) | (((u1 >> 6) & 0x03030303u) << 4);
    return _mm_set_epi32(static_cast<int>(m_hi), static_cast<int>(m_lo), static_cast<int>(sc_hi),
                         static_cast<int>(sc_lo));
}

// One token's Q8xK activations (act_quant.h).
struct TokenAct {
    const int8_t* qa;
    const int16_t* bsums;
    const float* da;
};

// Bit k of every byte of h moved to bit 4 (the other bits cleared): the 5th bit of a Q5_K
// quant. The 16-bit shifts move a masked bit only within its byte.
template <int k>
static inline __m256i bit_to_0x10(__m256i h) {
    const __m256i b = _mm256_and_si256(h, _mm256_set1_epi8(static_cast<char>(1 << k)));
    if constexpr (k < 4) {
        return _mm256_slli_epi16(b, 4 - k);
    } else if constexpr (k > 4) {
        return _mm256_srli_epi16(b, k - 4);
    } else {
        return b;
    }
}

// The quants of 32-byte group c of a Q4_K/Q5_K super-block (qs: its 128 bytes of low
// nibbles) as bytes: lo = elements 64c..64c+31, hi = 64c+32..64c+63. Q5_K adds the 5th bit
// from hbits (its 32 qh bytes): bit 2c of each byte for lo, bit 2c+1 for hi.
template <bool kFive, int c>
static inline void q45k_quants(const uint8_t* qs, __m256i hbits, __m256i& lo, __m256i& hi) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * c));
    lo = _mm256_and_si256(bits, m4);
    hi = _mm256_and_si256(_mm256_srli_epi16(bits, 4), m4);
    if constexpr (kFive) {
        lo = _mm256_or_si256(lo, bit_to_0x10<2 * c>(hbits));
        hi = _mm256_or_si256(hi, bit_to_0x10<2 * c + 1>(hbits));
    }
}

// The 6-bit quants (0..63) of 32-element group 4n+i of a Q6_K super-block, from l0 and
// l1 (its ql bytes 64n.. and 64n+32..) and h (its qh bytes 32n..).
static inline __m256i q6k_quants(__m256i l0, __m256i l1, __m256i h, int i) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    switch (i) {
        case 0:
            return _mm256_or_si256(
                _mm256_and_si256(l0, m4),
                _mm256_slli_epi16(_mm256_and_si256(h, _mm256_set1_epi8(0x03)), 4));
        case 1:
            return _mm256_or_si256(
                _mm256_and_si256(l1, m4),
                _mm256_slli_epi16(_mm256_and_si256(h, _mm256_set1_epi8(0x0c)), 2));
        case 2:
            return _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                                   _mm256_and_si256(h, _mm256_set1_epi8(0x30)));
        default:
            return _mm256_or_si256(
                _mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                _mm256_srli_epi16(_mm256_and_si256(h, _mm256_set1_epi8(static_cast<char>(0xc0))),
                                  2));
    }
}

// The quants of 32-element group k (elements 32k..32k+31) of a Q2_K, Q3_K or IQ4_XS
// super-block p, as bytes in element order: Q2_K 0..3; Q3_K the quant + 4 (0..7); IQ4_XS
// the signed grid values. (16-bit shifts: the masks drop the bits that cross bytes.)
template <quant::TensorType T, int k>
static inline __m256i lowk_quants(const uint8_t* p) {
    if constexpr (T == quant::TensorType::IQ4_XS) {
        return avx2::iq4_values(p + 8 + 16 * k);
    } else {
        constexpr int n = k / 4, j = k % 4;  // bits 2j.. of qs[32n + l]
        constexpr bool two = T == quant::TensorType::Q2_K;
        const uint8_t* qs = p + (two ? 16 : 32);
        const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * n));
        const __m256i lo = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * j), _mm256_set1_epi8(3));
        if constexpr (two) return lo;
        // Q3_K: + 4 where the third bit (bit 4n + j of hmask[l]) is set.
        const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(hm, 4 * n + j), _mm256_set1_epi8(1));
        return _mm256_or_si256(lo, _mm256_slli_epi16(hi, 2));
    }
}

// The scales of a Q2_K, Q3_K or IQ4_XS super-block p as int16, one per 16 elements (sc16:
// Q2_K 0..15, Q3_K and IQ4_XS −32..31, IQ4_XS's each twice), and the weights of its
// activation-sum term (aux16: Q2_K's mins, Q3_K's scales again; IQ4_XS: zero).
template <quant::TensorType T>
static inline void lowk_scales(const uint8_t* p, __m256i& sc16, __m256i& aux16) {
    if constexpr (T == quant::TensorType::Q2_K) {
        const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i m4 = _mm_set1_epi8(0x0f);
        sc16 = _mm256_cvtepu8_epi16(_mm_and_si128(s, m4));
        aux16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), m4));
    } else if constexpr (T == quant::TensorType::Q3_K) {
        // quant::q3_k_scale for all 16 at once (ggml's aux dance).
        const uint32_t a0 = avx2::load_u32(p + 96), a1 = avx2::load_u32(p + 100),
                       t = avx2::load_u32(p + 104);
        const uint32_t s0 = (a0 & 0x0f0f0f0fu) | (((t >> 0) & 0x03030303u) << 4);
        const uint32_t s1 = (a1 & 0x0f0f0f0fu) | (((t >> 2) & 0x03030303u) << 4);
        const uint32_t s2 = ((a0 >> 4) & 0x0f0f0f0fu) | (((t >> 4) & 0x03030303u) << 4);
        const uint32_t s3 = ((a1 >> 4) & 0x0f0f0f0fu) | (((t >> 6) & 0x03030303u) << 4);
        const __m128i s = _mm_sub_epi8(_mm_set_epi32(static_cast<int>(s3), static_cast<int>(s2),
                                                     static_cast<int>(s1), static_cast<int>(s0)),
                                       _mm_set1_epi8(32));
        sc16 = _mm256_cvtepi8_epi16(s);
        aux16 = sc16;
    } else {
        static_assert(T == quant::TensorType::IQ4_XS);
        // Lane j: ((l >> 4j) & 15) | (((h >> 2j) & 3) << 4), less 32, as the int16 pair
        // (ls_j, ls_j). (A scalar loop through a stack array cost a store-forwarding stall
        // per super-block, a large share of a decode step's time.)
        const __m256i l = _mm256_set1_epi32(static_cast<int>(avx2::load_u32(p + 4)));
        const __m256i h = _mm256_set1_epi32(static_cast<int>(avx2::load_u16(p + 2)));
        const __m256i lo =
            _mm256_and_si256(_mm256_srlv_epi32(l, _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
                             _mm256_set1_epi32(15));
        const __m256i hi =
            _mm256_and_si256(_mm256_srlv_epi32(h, _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
                             _mm256_set1_epi32(3));
        const __m256i v =
            _mm256_sub_epi32(_mm256_or_si256(lo, _mm256_slli_epi32(hi, 4)), _mm256_set1_epi32(32));
        sc16 = _mm256_or_si256(_mm256_and_si256(v, _mm256_set1_epi32(0xffff)),
                               _mm256_slli_epi32(v, 16));
        aux16 = _mm256_setzero_si256();
    }
}

// Built for AVX512-VNNI with VL (the AVX-512 level's files): the few-token kernel adds a
// madd's int16 pair products straight into its int32 sums (vpdpwssd on 256-bit registers,
// full rate on a core that runs 512-bit vectors on 256-bit units), in two chains of sums
// so that the instruction's latency does not serialise a super-block. Integer sums are
// exact, so the bits are the AVX2 build's; which of the two runs faster on a processor
// is the kernel choice's to measure (kernel_choice.h: avx512 against avx2).
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define HEARTH_KQUANT_VNNI 1
#else
#define HEARTH_KQUANT_VNNI 0
#endif

// sum += madd(maddubs(u0, a0), s0) + madd(maddubs(u1, a1), s1): two 32-byte products of
// unsigned by signed bytes, their int16 pair sums weighted by s0 and s1 into int32. With
// VNNI the second adds into its own chain, sum_odd (the caller adds the chains at the
// end); without, sum_odd is not touched.
static inline void add_two_products(__m256i& sum, [[maybe_unused]] __m256i& sum_odd, __m256i u0,
                                    __m256i a0, __m256i s0, __m256i u1, __m256i a1, __m256i s1) {
#if HEARTH_KQUANT_VNNI
    sum = _mm256_dpwssd_epi32(sum, _mm256_maddubs_epi16(u0, a0), s0);
    sum_odd = _mm256_dpwssd_epi32(sum_odd, _mm256_maddubs_epi16(u1, a1), s1);
    avx2::pin(sum_odd);
#else
    const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(u0, a0), s0);
    const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(u1, a1), s1);
    sum = _mm256_add_epi32(sum, _mm256_add_epi32(p0, p1));
#endif
    avx2::pin(sum);
}

// Token t's Q8xK activations in a tile.
static inline TokenAct token_act(const GemmArgs& a, int t) {
    const uint8_t* row = a.act + static_cast<std::size_t>(t) * a.act_stride;
    return {reinterpret_cast<const int8_t*>(row),
            reinterpret_cast<const int16_t*>(row + q8k_bsums_offset(a.nb)),
            reinterpret_cast<const float*>(row + q8k_d_offset(a.nb))};
}

// Q4_K (kFive = false) / Q5_K super-block p against N tokens' activations of block b:
// per token, 8 int32 lanes whose sum is Σ_j sc_j · Σ_{i∈j} q_i·a_i (exact). The quants
// are unpacked once for all N tokens, multiplied by maddubs into int16 pair sums and
// weighted with the sub-block scales by madd. mins16 gets [m0, m0, m1, m1, .., m7, m7]
// (int16), to pair with the token's 16 bsums.
template <bool kFive, int N>
static inline void q45k_block_sums(const uint8_t* p, const TokenAct* act, int64_t b, __m256i* sumi,
                                   __m256i& mins16) {
    const uint8_t* qh = p + 4 + quant::kKScaleBytes;
    const uint8_t* qs = kFive ? qh + 32 : qh;
    const __m128i sm = k4_scales_mins(p + 4);  // bytes [sc0..7, m0..7]
    // [sc0, sc1, .., sc7] in both 128-bit halves.
    const __m256i sc16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi64(sm, sm));
    mins16 = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(sm, sm));
    const __m256i hbits =
        kFive ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh)) : _mm256_setzero_si256();
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) sumi[t] = _mm256_setzero_si256();
    __m256i sum_hi[N];  // VNNI: the odd sub-blocks' chain
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) sum_hi[t] = _mm256_setzero_si256();
    const auto step = [&](auto c_const) {
        constexpr int c = decltype(c_const)::value;
        __m256i lo, hi;
        q45k_quants<kFive, c>(qs, hbits, lo, hi);
        // Sub-block scales 2c and 2c+1 in every int16 lane.
        const __m256i s_lo = _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(0x0100 + 0x0202 * 2 * c));
        const __m256i s_hi =
            _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(0x0100 + 0x0202 * (2 * c + 1)));
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) {
            const int8_t* q8 = act[t].qa + 256 * b;
            const __m256i a_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 64 * c));
            const __m256i a_hi =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 64 * c + 32));
            add_two_products(sumi[t], sum_hi[t], lo, a_lo, s_lo, hi, a_hi, s_hi);
        }
    };
    step(std::integral_constant<int, 0>{});
    step(std::integral_constant<int, 1>{});
    step(std::integral_constant<int, 2>{});
    step(std::integral_constant<int, 3>{});
#if HEARTH_KQUANT_VNNI
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) sumi[t] = _mm256_add_epi32(sumi[t], sum_hi[t]);
#endif
}

// Q6_K super-block p against N tokens' activations of block b: per token, 8 int32 lanes
// whose sum is Σ_j sc_j · Σ_{i∈j} q_i·a_i with q in 0..63 (the −32 offset left to the
// caller: 32 · Σ_j sc_j · bsums_j); sc16 gets the 16 scales (int16).
template <int N>
static inline void q6k_block_sums(const uint8_t* p, const TokenAct* act, int64_t b, __m256i* sumi,
                                  __m256i& sc16) {
    // Per 32-element group k the scales of sub-blocks 2k (low 128 bits) and 2k+1 (high).
    const __m256i pick = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2,
                                          3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
    const uint8_t* ql = p;
    const uint8_t* qh = p + 128;
    sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 192)));
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) sumi[t] = _mm256_setzero_si256();
#if HEARTH_KQUANT_VNNI
    __m256i sum_odd[N];  // the odd groups' chain
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) sum_odd[t] = _mm256_setzero_si256();
#endif
    HEARTH_UNROLL
    for (int n = 0; n < 2; ++n) {
        const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 64 * n));
        const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 64 * n + 32));
        const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh + 32 * n));
        HEARTH_UNROLL
        for (int i = 0; i < 4; ++i) {
            const int k = 4 * n + i;  // 32-element group: sub-blocks 2k, 2k+1
            // The 6-bit quants of group k, made only when used (fewer live registers).
            const __m256i q = q6k_quants(l0, l1, h, i);
            const __m256i scv =
                _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(sc16, _mm256_set1_epi32(k)), pick);
            HEARTH_UNROLL
            for (int t = 0; t < N; ++t) {
                const __m256i a = _mm256_loadu_si256(
                    reinterpret_cast<const __m256i*>(act[t].qa + 256 * b + 32 * k));
#if HEARTH_KQUANT_VNNI
                __m256i& acc = i % 2 == 0 ? sumi[t] : sum_odd[t];
                acc = _mm256_dpwssd_epi32(acc, _mm256_maddubs_epi16(q, a), scv);
                avx2::pin(acc);
#else
                sumi[t] =
                    _mm256_add_epi32(sumi[t], _mm256_madd_epi16(_mm256_maddubs_epi16(q, a), scv));
                avx2::pin(sumi[t]);
#endif
            }
        }
    }
#if HEARTH_KQUANT_VNNI
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) sumi[t] = _mm256_add_epi32(sumi[t], sum_odd[t]);
#endif
}

// Q2_K / Q3_K super-block p against N tokens' activations of block b: per token, 8 int32
// lanes whose sum is Σ_j sc_j · Σ_{i∈j} q_i·a_i over the 16-element sub-blocks, with q as
// lowk_quants gives it (Q3_K's + 4 offset left to the caller: 4 · Σ_j sc_j · bsums_j); sc16
// and aux16 as lowk_scales gives them. (IQ4_XS: iq4xs_block_sums.)
template <quant::TensorType T, int N>
static inline void lowk_block_sums(const uint8_t* p, const TokenAct* act, int64_t b, __m256i* sumi,
                                   __m256i& sc16, __m256i& aux16) {
    static_assert(!kK<T>.sign);
    // Per 32-element group k the scales of sub-blocks 2k (low 128 bits) and 2k+1 (high).
    const __m256i pick = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2,
                                          3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
    lowk_scales<T>(p, sc16, aux16);
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) sumi[t] = _mm256_setzero_si256();
#if HEARTH_KQUANT_VNNI
    __m256i sum_odd[N];  // the odd groups' chain
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) sum_odd[t] = _mm256_setzero_si256();
#endif
    const auto step = [&](auto k_const) {
        constexpr int k = decltype(k_const)::value;
        const __m256i q = lowk_quants<T, k>(p);
        const __m256i lane_k = _mm256_permutevar8x32_epi32(sc16, _mm256_set1_epi32(k));
        const __m256i scv = _mm256_shuffle_epi8(lane_k, pick);
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) {
            const __m256i a =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act[t].qa + 256 * b + 32 * k));
#if HEARTH_KQUANT_VNNI
            __m256i& acc = k % 2 == 0 ? sumi[t] : sum_odd[t];
            acc = _mm256_dpwssd_epi32(acc, _mm256_maddubs_epi16(q, a), scv);
            avx2::pin(acc);
#else
            sumi[t] = _mm256_add_epi32(sumi[t], _mm256_madd_epi16(_mm256_maddubs_epi16(q, a), scv));
            avx2::pin(sumi[t]);
#endif
        }
    };
    step(std::integral_constant<int, 0>{});
    step(std::integral_constant<int, 1>{});
    step(std::integral_constant<int, 2>{});
    step(std::integral_constant<int, 3>{});
    step(std::integral_constant<int, 4>{});
    step(std::integral_constant<int, 5>{});
    step(std::integral_constant<int, 6>{});
    step(std::integral_constant<int, 7>{});
#if HEARTH_KQUANT_VNNI
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) sumi[t] = _mm256_add_epi32(sumi[t], sum_odd[t]);
#endif
}

// IQ4_XS super-block p against N tokens' activations of block b: per token, 8 int32 lanes
// whose sum is S1 = Σ_j sc_j · Σ_{i∈j} w_i·a_i (w the signed grid values); sc16 as
// lowk_scales gives it. Two 32-element groups at a time: one 32-byte load holds both
// groups' index bytes, whose low nibbles are elements 0..15 of each and high nibbles
// elements 16..31, so the grid look-up makes [group 2m, 0..15 | group 2m+1, 0..15] and
// [.., 16..31 | .., 16..31], each against the activations laid out alike (two 16-byte
// loads) and one scale vector [sc_2m | sc_2m+1] for both: per pair of groups 17 vector
// operations where one group at a time took 20. Products as |w| · (a with w's sign).
template <int N>
static inline void iq4xs_block_sums(const uint8_t* p, const TokenAct* act, int64_t b, __m256i* sumi,
                                    __m256i& sc16) {
    __m256i aux16;
    lowk_scales<quant::TensorType::IQ4_XS>(p, sc16, aux16);
    const __m256i grid = avx2::iq4_grid();
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) sumi[t] = _mm256_setzero_si256();
    __m256i sum_hi[N];  // VNNI: the high halves' chain
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) sum_hi[t] = _mm256_setzero_si256();
    const auto halves = [](const int8_t* lo, const int8_t* hi) {
        return _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(lo))),
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(hi)), 1);
    };
    HEARTH_UNROLL
    for (int m = 0; m < 4; ++m) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 8 + 32 * m));
        const __m256i w_lo = _mm256_shuffle_epi8(grid, _mm256_and_si256(v, m4));
        const __m256i w_hi =
            _mm256_shuffle_epi8(grid, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
        const __m256i abs_lo = _mm256_abs_epi8(w_lo), abs_hi = _mm256_abs_epi8(w_hi);
        const __m256i scv = _mm256_permutevar8x32_epi32(
            sc16, _mm256_setr_epi32(2 * m, 2 * m, 2 * m, 2 * m, 2 * m + 1, 2 * m + 1, 2 * m + 1,
                                    2 * m + 1));
        HEARTH_UNROLL
        for (int t = 0; t < N; ++t) {
            const int8_t* q8 = act[t].qa + 256 * b + 64 * m;
            const __m256i a_lo = _mm256_sign_epi8(halves(q8, q8 + 32), w_lo);
            const __m256i a_hi = _mm256_sign_epi8(halves(q8 + 16, q8 + 48), w_hi);
            add_two_products(sumi[t], sum_hi[t], abs_lo, a_lo, scv, abs_hi, a_hi, scv);
        }
    }
#if HEARTH_KQUANT_VNNI
    HEARTH_UNROLL
    for (int t = 0; t < N; ++t) sumi[t] = _mm256_add_epi32(sumi[t], sum_hi[t]);
#endif
}

// Prefetches super-block b of rows [i0, i0 + n) (row i at w + i·w_stride) for the tiles:
// rows lie w_stride apart, a stride the hardware prefetcher does not follow. The tiles ask
// for a pass's next block a band of rows at a time while their micro-kernels run, rather
// than for all the pass's rows at once, which issued more prefetches than the core keeps
// in flight: a 1B-shaped Q5_K_M prefill spent ~8 % of its time waiting on those weight
// loads (perf).
template <quant::TensorType T>
static inline void prefetch_block(const uint8_t* w, std::size_t w_stride, int i0, int n,
                                  int64_t b) {
    for (int i = i0; i < i0 + n; ++i) {
        const uint8_t* p = w + static_cast<std::size_t>(i) * w_stride +
                           static_cast<std::size_t>(b) * kKBlockBytes<T>;
        for (std::size_t line = 0; line < kKBlockBytes<T>; line += 64)
            _mm_prefetch(reinterpret_cast<const char*>(p + line), _MM_HINT_T0);
    }
}

// The 256 quants of super-block p as bytes in element order (Q4_K 0..15, Q5_K 0..31, Q6_K
// 0..63, the others as lowk_quants) into dst (32-byte aligned): the tiles' rows, unpacked
// once per pass.
template <quant::TensorType T>
static inline void unpack_quant_bytes(const uint8_t* p, uint8_t* dst) {
    const auto store = [](uint8_t* at, __m256i v) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(at), v);
    };
    if constexpr (kLowK<T>) {
        const auto group = [&](auto k_const) {
            constexpr int k = decltype(k_const)::value;
            store(dst + 32 * k, lowk_quants<T, k>(p));
        };
        group(std::integral_constant<int, 0>{});
        group(std::integral_constant<int, 1>{});
        group(std::integral_constant<int, 2>{});
        group(std::integral_constant<int, 3>{});
        group(std::integral_constant<int, 4>{});
        group(std::integral_constant<int, 5>{});
        group(std::integral_constant<int, 6>{});
        group(std::integral_constant<int, 7>{});
    } else if constexpr (T == quant::TensorType::Q6_K) {
        const uint8_t* ql = p;
        const uint8_t* qh = p + 128;
        HEARTH_UNROLL
        for (int h = 0; h < 2; ++h) {
            const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 64 * h));
            const __m256i l1 =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 64 * h + 32));
            const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh + 32 * h));
            HEARTH_UNROLL
            for (int k = 0; k < 4; ++k) store(dst + 128 * h + 32 * k, q6k_quants(l0, l1, hb, k));
        }
    } else {
        constexpr bool kFive = T == quant::TensorType::Q5_K;
        const uint8_t* qh = p + 4 + quant::kKScaleBytes;
        const uint8_t* qs = kFive ? qh + 32 : qh;
        const __m256i hbits = kFive ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh))
                                    : _mm256_setzero_si256();
        const auto group = [&](auto c_const) {
            constexpr int c = decltype(c_const)::value;
            __m256i lo, hi;
            q45k_quants<kFive, c>(qs, hbits, lo, hi);
            store(dst + 64 * c, lo);
            store(dst + 64 * c + 32, hi);
        };
        group(std::integral_constant<int, 0>{});
        group(std::integral_constant<int, 1>{});
        group(std::integral_constant<int, 2>{});
        group(std::integral_constant<int, 3>{});
    }
}

}  // namespace

}  // namespace hearth::kernels::cpu
