// Small AVX2/FMA/F16C helpers shared by the *_avx2.cpp translation units, which are the
// only files compiled with -mavx2 -mfma -mf16c (MSVC: /arch:AVX2).
//
// Everything here has internal linkage (static): an inline function with external
// linkage compiled once with AVX2 and once without would be merged by the linker, and the
// AVX2 copy could then run on a processor without AVX2. For the same reason the AVX2
// files avoid std:: templates that other files also instantiate.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cpu/weight_pack.h"
#include "quant/quant_types.h"

// Fully unrolls the next loop. The kernels index small register arrays (accumulators
// per row / token) by loop counters; only a complete unroll lets the compiler keep them
// in registers instead of on the stack (GCC at -O2 does not unroll such loops itself).
#if defined(__clang__)
#define HEARTH_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define HEARTH_UNROLL _Pragma("GCC unroll 16")
#else
#define HEARTH_UNROLL
#endif

namespace hearth::kernels::cpu::avx2 {

// Makes v a value the compiler must hold in a register here. Integer adds are
// associative, so GCC regroups an accumulation chain sum += a; sum += b; ... into a tree
// whose many pending products spill to the stack; a pin after each add keeps the chain
// (and the register count) as written. No instruction is emitted.
static inline void pin(__m256i& v) {
#if defined(__GNUC__)
    __asm__("" : "+x"(v));
#else
    (void)v;
#endif
}

// Weights streamed from DRAM (decode) are prefetched this far ahead of the row being
// read: with the hardware prefetcher alone, decode ran ~25 % slower (measured
// on the 2-core Zen test machine, 1 and 2 threads; 2–9 KB ahead all did about as well).
inline constexpr int kPrefetchBytes = 3072;

template <int Bytes = kPrefetchBytes>
static inline void prefetch_ahead(const void* p) {
    _mm_prefetch(static_cast<const char*>(p) + Bytes, _MM_HINT_T0);
}

static inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline int32_t hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

static inline uint32_t load_u32(const void* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

static inline uint16_t load_u16(const void* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}

// One fp16 bit pattern → float.
static inline float fp16(uint16_t h) {
    return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(h))));
}

// x rounded to the nearest fp16 value (ties to even), back as float.
static inline float round_fp16(float x) {
    return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(x), _MM_FROUND_TO_NEAREST_INT)));
}

// Two adjacent fp16 values at p → lanes 0 and 1 (lanes 2, 3 are zero).
static inline __m128 fp16x2(const void* p) {
    return _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(load_u32(p))));
}

// 16 bytes of packed nibbles → 32 bytes: byte j = low nibble of p[j], byte 16 + j = high
// nibble of p[j] (the element order of Q4_0/Q4_1/Q5_0/Q5_1 blocks).
static inline __m256i nibbles32(__m128i t) {
    const __m256i b = _mm256_insertf128_si256(_mm256_castsi128_si256(t), _mm_srli_epi16(t, 4), 1);
    return _mm256_and_si256(b, _mm256_set1_epi8(0x0f));
}
static inline __m256i nibbles32(const uint8_t* p) {
    return nibbles32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// quant::kIq4nlValues in both halves of a register, for pshufb.
static inline __m256i iq4_grid() {
    return _mm256_broadcastsi128_si256(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(quant::kIq4nlValues)));
}

// The 32 signed grid values of an IQ4 block's 16 index bytes at qs (low nibbles, then
// high ones), looked up in quant::kIq4nlValues.
static inline __m256i iq4_values(const uint8_t* qs) {
    return _mm256_shuffle_epi8(iq4_grid(), nibbles32(qs));
}

// IQ4_NL rows repacked 8 at a time (weight_pack.h: an IQ4_NL block has Q4_0's shape, so
// it takes the Q4_0x8 layout unchanged): block b of row `lane` in the group at g, as its
// scale bits and its 32 grid values (the same bytes iq4_values gives from the file).
static inline uint16_t iq4_x8_scale(const uint8_t* g, int lane, int64_t b) {
    return load_u16(g + static_cast<std::size_t>(b) * kQ4_0x8BlockBytes + 2 * lane);
}
static inline __m256i iq4_x8_values(const uint8_t* g, int lane, int64_t b) {
    const uint8_t* q = g + static_cast<std::size_t>(b) * kQ4_0x8BlockBytes + 16 + 4 * lane;
    const __m128i t =
        _mm_setr_epi32(static_cast<int>(load_u32(q)), static_cast<int>(load_u32(q + 32)),
                       static_cast<int>(load_u32(q + 64)), static_cast<int>(load_u32(q + 96)));
    return _mm256_shuffle_epi8(iq4_grid(), nibbles32(t));
}

// 32 bits → 32 bytes, byte i = 0x10 where bit i is set (the 5th bit of Q5_0/Q5_1).
static inline __m256i bits32_to_0x10(uint32_t bits) {
    const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                           0x0101010101010101, 0x0000000000000000);
    __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)), shuf);
    // Each byte keeps one bit of its source byte: byte i tests bit i % 8.
    const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
    b = _mm256_cmpeq_epi8(_mm256_and_si256(b, bit), bit);
    return _mm256_and_si256(b, _mm256_set1_epi8(0x10));
}

// Σ over byte pairs of unsigned a × signed b, widened to 8 × int32. Exact as long as each
// pair sum a0·b0 + a1·b1 fits int16 (maddubs saturates): true for a ≤ 128 with |b| ≤ 127,
// which holds for every weight format here against the Q8 activations.
static inline __m256i dot_u8s8(__m256i a, __m256i b) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1));
}

// Σ over byte pairs of signed a × signed b (the sign of a moved onto b).
static inline __m256i dot_s8s8(__m256i a, __m256i b) {
    return dot_u8s8(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
}

// ggml_v_expf of ggml-cpu/vec.h (MIT, the ggml authors), unchanged: e^x within about
// 1.5 ulp, the exponential of llama.cpp's softmax and SiLU, so that ours give its bits.
// scalar_math.h has the same operations for one float.
static inline __m256 expv(__m256 x) {
    const __m256 r = _mm256_set1_ps(0x1.8p23f);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), r);
    const __m256 n = _mm256_sub_ps(z, r);
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f),
                                      _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
    const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
    const __m256 k =
        _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_castps_si256(_mm256_set1_ps(1))));
    const __m256i c = _mm256_castps_si256(
        _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.f), n), _mm256_set1_ps(126), _CMP_GT_OQ));
    const __m256 u = _mm256_mul_ps(b, b);
    const __m256 j = _mm256_fmadd_ps(
        _mm256_fmadd_ps(
            _mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
            _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
        u, _mm256_mul_ps(_mm256_set1_ps(0x1.ffffecp-1f), b));
    if (!_mm256_movemask_ps(_mm256_castsi256_ps(c))) return _mm256_fmadd_ps(j, k, k);
    const __m256i g =
        _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ)),
                         _mm256_set1_epi32(static_cast<int>(0x82000000u)));
    const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(g, _mm256_set1_epi32(0x7f000000)));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, g));
    const __m256i d = _mm256_castps_si256(
        _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.f), n), _mm256_set1_ps(192), _CMP_GT_OQ));
    return _mm256_or_ps(
        _mm256_and_ps(_mm256_castsi256_ps(d), _mm256_mul_ps(s1, s1)),
        _mm256_andnot_ps(
            _mm256_castsi256_ps(d),
            _mm256_or_ps(_mm256_and_ps(_mm256_castsi256_ps(c),
                                       _mm256_mul_ps(_mm256_fmadd_ps(s2, j, s2), s1)),
                         _mm256_andnot_ps(_mm256_castsi256_ps(c), _mm256_fmadd_ps(k, j, k)))));
}

}  // namespace hearth::kernels::cpu::avx2
