// K-quant helpers shared by the AVX2 (gemm_avx2_kquant.cpp) and AVX-512
// (gemm_avx512_kquant.cpp) kernels: scale unpacking, the 5th bit of Q5_K, one token's
// Q8xK activations.
//
// Include only from files compiled with AVX2 (or more) enabled. Everything here is in an
// unnamed namespace: each kernel file gets its own copy, compiled for its own instruction
// set, which the linker can never merge (see avx2_util.h).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "cpu/act_quant.h"
#include "cpu/avx2_util.h"
#include "cpu/gemm_kernels.h"
#include "quant/quant_types.h"

namespace hearth::kernels::cpu {

namespace {

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

// Token t's Q8xK activations in a tile.
static inline TokenAct token_act(const GemmArgs& a, int t) {
    const uint8_t* row = a.act + static_cast<std::size_t>(t) * a.act_stride;
    return {reinterpret_cast<const int8_t*>(row),
            reinterpret_cast<const int16_t*>(row + q8k_bsums_offset(a.nb)),
            reinterpret_cast<const float*>(row + q8k_d_offset(a.nb))};
}

// Bytes of one super-block of T.
template <quant::TensorType T>
inline constexpr std::size_t kKBlockBytes = T == quant::TensorType::Q6_K ? sizeof(quant::BlockQ6_K)
                                            : T == quant::TensorType::Q5_K
                                                ? sizeof(quant::BlockQ5_K)
                                                : sizeof(quant::BlockQ4_K);

}  // namespace

}  // namespace hearth::kernels::cpu
