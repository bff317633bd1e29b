// AVX2 row kernels of elementwise.h.
#include "cpu/avx2_util.h"
#include "cpu/elementwise_fns.h"

namespace hearth::kernels::cpu {

namespace {

// The arithmetic of rms_norm_scalar (elementwise.cpp): float squares summed in double,
// lane j of lo / hi holding elements 8k + j / 8k + 4 + j.
void rms_norm_avx2(const float* x, const float* w, int64_t rows, int64_t n, float eps, float* out) {
    const int64_t n8 = n & ~int64_t{7};
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * n;
        float* o = out + r * n;
        __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
        int64_t i = 0;
        for (; i < n8; i += 8) {
            const __m256 a = _mm256_loadu_ps(xr + i);
            const __m256 sq = _mm256_mul_ps(a, a);
            lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(sq)));
            hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(sq, 1)));
        }
        // [p0+p4, p1+p5, p2+p6, p3+p7] → ((p0+p4) + (p2+p6)) + ((p1+p5) + (p3+p7)).
        const __m256d t = _mm256_add_pd(lo, hi);
        const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(t), _mm256_extractf128_pd(t, 1));
        double ss = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
        for (; i < n; ++i) ss += static_cast<double>(xr[i] * xr[i]);
        const auto mean = static_cast<float>(ss / static_cast<double>(n));
        const float scale = 1.0f / _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(mean + eps)));
        const __m256 sv = _mm256_set1_ps(scale);
        for (i = 0; i < n8; i += 8)
            _mm256_storeu_ps(o + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(xr + i), sv),
                                                  _mm256_loadu_ps(w + i)));
        for (; i < n; ++i) o[i] = xr[i] * scale * w[i];
    }
}

// ggml_v_silu(g) · u, as ggml's swiglu.
static inline __m256 silu_mul(__m256 g, __m256 u) {
    const __m256 e = avx2::expv(_mm256_sub_ps(_mm256_setzero_ps(), g));
    return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
}

void swiglu_avx2(const float* gate, const float* up, int64_t n, float* out) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, silu_mul(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
    if (i < n) {
        // Tail through a padded vector so the scalar tail uses the same exp as the body.
        alignas(32) float g[8] = {}, u[8] = {}, o[8];
        for (int64_t j = i; j < n; ++j) {
            g[j - i] = gate[j];
            u[j - i] = up[j];
        }
        _mm256_store_ps(o, silu_mul(_mm256_load_ps(g), _mm256_load_ps(u)));
        for (int64_t j = i; j < n; ++j) out[j] = o[j - i];
    }
}

void add_avx2(float* x, const float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, _mm256_add_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; ++i) x[i] += y[i];
}

void to_fp16_avx2(const float* x, int64_t n, uint16_t* out) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(
            reinterpret_cast<__m128i*>(out + i),
            _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < n; ++i)
        out[i] = static_cast<uint16_t>(_mm_extract_epi16(
            _mm_cvtps_ph(_mm_set_ss(x[i]), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), 0));
}

// The scalar kernel's steps eight at a time: gate rounded to fp16 (F16C, round to nearest
// even as quant::f32_to_fp16), the table gathered at its bits, times up; 0 at gate ≤ −10,
// gate · up at gate ≥ 10. The same bits.
static inline __m256 gelu_mul(const float* table, __m256 g, __m256 u) {
    const __m256i h =
        _mm256_cvtepu16_epi32(_mm256_cvtps_ph(g, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    __m256 y = _mm256_mul_ps(_mm256_i32gather_ps(table, h, 4), u);
    y = _mm256_blendv_ps(y, _mm256_mul_ps(g, u),
                         _mm256_cmp_ps(g, _mm256_set1_ps(10.0f), _CMP_GE_OQ));
    return _mm256_blendv_ps(y, _mm256_setzero_ps(),
                            _mm256_cmp_ps(g, _mm256_set1_ps(-10.0f), _CMP_LE_OQ));
}

void geglu_avx2(const float* table, const float* gate, const float* up, int64_t n, float* out) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i,
                         gelu_mul(table, _mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
    if (i < n) {
        alignas(32) float g[8] = {}, u[8] = {}, o[8];
        for (int64_t j = i; j < n; ++j) {
            g[j - i] = gate[j];
            u[j - i] = up[j];
        }
        _mm256_store_ps(o, gelu_mul(table, _mm256_load_ps(g), _mm256_load_ps(u)));
        for (int64_t j = i; j < n; ++j) out[j] = o[j - i];
    }
}

const ElementwiseFns kAvx2{rms_norm_avx2, swiglu_avx2, add_avx2, to_fp16_avx2, geglu_avx2};

}  // namespace

const ElementwiseFns& elementwise_fns_avx2() {
    return kAvx2;
}

}  // namespace hearth::kernels::cpu
