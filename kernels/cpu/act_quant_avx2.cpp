// AVX2 activation quantisers: the float operations of act_quant.cpp (max|x|, d = amax /
// 127, q = nearest-even(x · (127 / amax)), the fp16 roundings of d and s) eight lanes at a
// time, so the bytes are the same as the scalar path's.
#include "cpu/act_quant.h"
#include "cpu/avx2_util.h"

namespace hearth::kernels::cpu {

namespace {

// Quantises 32 floats at x to 32 bytes at q; returns Σq and writes the scale.
static inline int32_t quantize32(const float* x, int8_t* q, float* d_out) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
    HEARTH_UNROLL
    for (int i = 0; i < 4; ++i) {
        v[i] = _mm256_loadu_ps(x + 8 * i);
        amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, v[i]));
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float amax_s = _mm_cvtss_f32(m4);
    *d_out = amax_s / 127.0f;
    const __m256 id = _mm256_set1_ps(amax_s != 0.0f ? 127.0f / amax_s : 0.0f);
    __m256i iv[4];
    HEARTH_UNROLL
    for (int i = 0; i < 4; ++i)
        iv[i] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[i], id),
                                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const int32_t sum = avx2::hsum_i32(
        _mm256_add_epi32(_mm256_add_epi32(iv[0], iv[1]), _mm256_add_epi32(iv[2], iv[3])));
    // Pack 32 × int32 → 32 × int8; the packs work per 128-bit lane, the permute restores order.
    const __m256i p16a = _mm256_packs_epi32(iv[0], iv[1]);
    const __m256i p16b = _mm256_packs_epi32(iv[2], iv[3]);
    const __m256i p8 = _mm256_packs_epi16(p16a, p16b);
    const __m256i ordered =
        _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), ordered);
    return sum;
}

}  // namespace

void quantize_q8x32_avx2(const float* x, std::size_t x_stride, int nt, int G, int64_t nb,
                         Q8Sums sums, uint8_t* out) {
    auto* qs = reinterpret_cast<int8_t*>(out);                          // [nb][G][32]
    auto* ds = reinterpret_cast<float*>(out + q8x32_ds_offset(nb, G));  // [nb][2][G]
    for (int64_t b = 0; b < nb; ++b) {
        float* dsb = ds + b * 2 * G;
        for (int t = 0; t < G; ++t) {
            int8_t* q = qs + (b * G + t) * 32;
            if (t >= nt) {
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), _mm256_setzero_si256());
                dsb[t] = 0.0f;
                dsb[G + t] = 0.0f;
                continue;
            }
            float d = 0.0f;
            const int32_t sum =
                quantize32(x + static_cast<std::size_t>(t) * x_stride + b * 32, q, &d);
            const float dh = avx2::round_fp16(d);
            dsb[t] = dh;
            dsb[G + t] = sums == Q8Sums::Q8_1 ? avx2::round_fp16(d * static_cast<float>(sum))
                                              : dh * static_cast<float>(sum);
        }
    }
}

void quantize_q8k_avx2(const float* x, int64_t nb, uint8_t* out) {
    auto* qs = reinterpret_cast<int8_t*>(out);                             // [nb][256]
    auto* bsums = reinterpret_cast<int16_t*>(out + q8k_bsums_offset(nb));  // [nb][16]
    auto* d = reinterpret_cast<float*>(out + q8k_d_offset(nb));            // [nb]
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int64_t b = 0; b < nb; ++b) {
        const float* xb = x + b * 256;
        __m256 amax = _mm256_setzero_ps();
        for (int i = 0; i < 32; ++i)
            amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, _mm256_loadu_ps(xb + 8 * i)));
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        const float amax_s = _mm_cvtss_f32(m4);
        d[b] = amax_s / 127.0f;
        const __m256 id = _mm256_set1_ps(amax_s != 0.0f ? 127.0f / amax_s : 0.0f);
        int8_t* q = qs + b * 256;
        for (int j = 0; j < 16; ++j) {
            // 16 elements → 16 bytes and their sum.
            const __m256i i0 =
                _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(xb + 16 * j), id),
                                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
            const __m256i i1 = _mm256_cvtps_epi32(
                _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(xb + 16 * j + 8), id),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
            bsums[b * 16 + j] = static_cast<int16_t>(avx2::hsum_i32(_mm256_add_epi32(i0, i1)));
            const __m256i p16 = _mm256_packs_epi32(i0, i1);  // [0-3 8-11 | 4-7 12-15]
            const __m128i p8 =
                _mm_packs_epi16(_mm256_castsi256_si128(p16), _mm256_extracti128_si256(p16, 1));
            // p8 = [0-3, 8-11, 4-7, 12-15] → reorder dwords 0, 2, 1, 3.
            _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16 * j),
                             _mm_shuffle_epi32(p8, _MM_SHUFFLE(3, 1, 2, 0)));
        }
    }
}

}  // namespace hearth::kernels::cpu
