// Row kernels of the elementwise ops for one SIMD level (elementwise.cpp: scalar,
// elementwise_avx2.cpp: AVX2). Kept apart from elementwise.h so that the AVX2 file
// includes nothing with inline code shared with other files (see avx2_util.h).
#pragma once

#include <cstdint>

#include "cpu/cpu_features.h"

namespace hearth::kernels::cpu {

struct ElementwiseFns {
    // out[r, :] = x[r, :] / sqrt(mean(x[r, :]²) + eps) · w.   x, out [rows, n]; in place ok.
    void (*rms_norm)(const float* x, const float* w, int64_t rows, int64_t n, float eps,
                     float* out);
    // out[i] = gate[i] / (1 + e^-gate[i]) · up[i]. In place (out = gate or up) ok.
    void (*swiglu)(const float* gate, const float* up, int64_t n, float* out);
    void (*add)(float* x, const float* y, int64_t n);  // x[i] += y[i]
    // fp16 bit patterns, round to nearest even (as quant::f32_to_fp16).
    void (*to_fp16)(const float* x, int64_t n, uint16_t* out);
    // Backend::geglu with table[h] = fp16-rounded gelu of the fp16 value h (elementwise.cpp
    // builds it). In place (out = gate or up) ok.
    void (*geglu)(const float* table, const float* gate, const float* up, int64_t n, float* out);
};

const ElementwiseFns& elementwise_fns(SimdLevel level);
const ElementwiseFns& elementwise_fns_avx2();  // elementwise_avx2.cpp

}  // namespace hearth::kernels::cpu
