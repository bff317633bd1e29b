// Scalar activation quantisers; the AVX2 ones in act_quant_avx2.cpp do the same float
// operations in the same order, so both produce identical bytes.
#include <cmath>
#include <cstring>

#include "cpu/act_quant.h"
#include "quant/fp16.h"

namespace hearth::kernels::cpu {

namespace {

// Quantises n values with one scale; returns Σq. q[i] = nearbyint(x[i] · 127/amax) in
// the default (nearest-even) rounding mode, as _mm256_round_ps(_MM_FROUND_TO_NEAREST_INT).
int32_t quantize_block(const float* x, int n, int8_t* q, float* d_out) {
    float amax = 0.0f;
    for (int i = 0; i < n; ++i) amax = std::fmax(amax, std::fabs(x[i]));
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    int32_t sum = 0;
    for (int i = 0; i < n; ++i) {
        const auto v = static_cast<int32_t>(std::nearbyint(x[i] * id));
        q[i] = static_cast<int8_t>(v);
        sum += v;
    }
    *d_out = d;
    return sum;
}

float round_fp16(float v) {
    return quant::fp16_to_f32(quant::f32_to_fp16(v));
}

}  // namespace

void quantize_q8x32_scalar(const float* x, std::size_t x_stride, int nt, int G, int64_t nb,
                           Q8Sums sums, uint8_t* out) {
    auto* qs = reinterpret_cast<int8_t*>(out);                          // [nb][G][32]
    auto* ds = reinterpret_cast<float*>(out + q8x32_ds_offset(nb, G));  // [nb][2][G]
    for (int64_t b = 0; b < nb; ++b) {
        for (int t = 0; t < G; ++t) {
            int8_t* q = qs + (b * G + t) * 32;
            float* dsb = ds + b * 2 * G;
            if (t >= nt) {
                std::memset(q, 0, 32);
                dsb[t] = 0.0f;
                dsb[G + t] = 0.0f;
                continue;
            }
            float d = 0.0f;
            const int32_t sum =
                quantize_block(x + static_cast<std::size_t>(t) * x_stride + b * 32, 32, q, &d);
            const float dh = round_fp16(d);
            dsb[t] = dh;
            dsb[G + t] = sums == Q8Sums::Q8_1 ? round_fp16(d * static_cast<float>(sum))
                                              : dh * static_cast<float>(sum);
        }
    }
}

void quantize_q8k_scalar(const float* x, int64_t nb, uint8_t* out) {
    auto* qs = reinterpret_cast<int8_t*>(out);                             // [nb][256]
    auto* bsums = reinterpret_cast<int16_t*>(out + q8k_bsums_offset(nb));  // [nb][16]
    auto* d = reinterpret_cast<float*>(out + q8k_d_offset(nb));            // [nb]
    for (int64_t b = 0; b < nb; ++b) {
        int8_t* q = qs + b * 256;
        quantize_block(x + b * 256, 256, q, d + b);
        for (int j = 0; j < 16; ++j) {
            int32_t s = 0;
            for (int i = 0; i < 16; ++i) s += q[16 * j + i];
            bsums[b * 16 + j] = static_cast<int16_t>(s);
        }
    }
}

}  // namespace hearth::kernels::cpu
