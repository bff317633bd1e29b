// float → GGUF block encoders, round to nearest. Used to build small synthetic models
// and test data; they favour a provable error bound over llama.cpp's error-minimising
// search (ggml's quantize_row_*_ref), but write the same formats, which any GGUF reader
// (ours or llama.cpp) decodes with the standard dequantisation.
//
// Every function encodes n finite floats (n a multiple of the block size: 32, or 256 for
// the K-quants, any n for F16/BF16). Scales are rounded *up* to fp16 / to their 6- or
// 8-bit grids so that no element is clamped; each element is then rounded to the nearest
// level. Per block or sub-block, with amax = max |x|, lo/hi = min/max of the elements,
// ceil16(v) ≤ v·(1 + 2^-10) + 2^-24 the fp16 rounding up, the error |dequant - x| is at
// most (plus a float-rounding slack below 2^-20·amax; tst_quantize checks these):
//   Q8_0  d = ceil16(amax / 127)                                     error ≤ d / 2
//   Q4_0  d = fp16(-x_amax / 8) as ggml (x_amax: the element of largest magnitude, which
//         maps to level -8); elements of the other sign reach at most 7|d|, and
//         |fp16(d) - d| ≤ 2^-11·|d| + 2^-25:              error ≤ amax/8 + 2^-11·amax + 2^-22
//   Q5_0  as Q4_0, levels -16..15                         error ≤ amax/16 + 2^-11·amax + 2^-21
//   Q4_1  m = floor16(lo), d = ceil16((hi - m) / 15)                  error ≤ d / 2
//   Q5_1  as Q4_1 with 31 steps                                      error ≤ d / 2
//   Q4_K  per super-block: dmin = ceil16(max_j(-lo_j⁻) / 63), where lo_j⁻ = min(lo_j, 0);
//         per sub-block j of 32: m_j = ceil(-lo_j⁻ / dmin) ≤ 63,
//         need_j = (hi_j + dmin·m_j) / 15, d = ceil16(max_j need_j / 63),
//         sc_j = ceil(need_j / d) ≤ 63                              error ≤ (need_j + d) / 2
//   Q5_K  as Q4_K with 31 steps
//   Q6_K  per sub-block j of 16: need_j = amax_j / 31, d = ceil16(max_j need_j / 127),
//         sc_j = ceil(need_j / d) ≤ 127, q in -31..31               error ≤ (need_j + d) / 2
//   F16   round to nearest even (|x| ≤ 65504)                        error ≤ 2^-11·|x| + 2^-25
//   BF16  round to nearest even                                      error ≤ 2^-8·|x| + 2^-134
// Values whose scale would exceed the fp16 range (|x| beyond ~10^6) saturate.
#pragma once

#include <cstdint>

#include "quant/quant_types.h"

namespace hearth::quant {

void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t n);
void quantize_row_q4_1(const float* x, BlockQ4_1* y, int64_t n);
void quantize_row_q5_0(const float* x, BlockQ5_0* y, int64_t n);
void quantize_row_q5_1(const float* x, BlockQ5_1* y, int64_t n);
void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n);
void quantize_row_q4_k(const float* x, BlockQ4_K* y, int64_t n);
void quantize_row_q5_k(const float* x, BlockQ5_K* y, int64_t n);
void quantize_row_q6_k(const float* x, BlockQ6_K* y, int64_t n);
void quantize_row_f16(const float* x, uint16_t* y, int64_t n);
void quantize_row_bf16(const float* x, uint16_t* y, int64_t n);

// Bytes that n elements of `type` take, or -1 for an unsupported type or an n that is
// negative or not a multiple of the block size.
int64_t quantized_size(TensorType type, int64_t n);

// Encodes n floats as `type` into dst (quantized_size(type, n) bytes). F32 is a copy.
// Returns false (writing nothing) when quantized_size would be -1, and for the types Hearth
// reads but does not write (Q2_K, Q3_K, IQ4_NL, IQ4_XS).
bool quantize(TensorType type, const float* src, void* dst, int64_t n);

}  // namespace hearth::quant
