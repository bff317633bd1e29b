// Per-type dequantisation of whole blocks, for callers that already know the type (the
// CPU matmul fallbacks dequantise one row of weights at a time). dequant.h's
// dequantize() validates its arguments and dispatches to these.
//
// Every function converts n elements: n must be a multiple of the type's block size
// (kQK = 32 for Q4_0..Q8_0, kQKK = 256 for the K-quants, 1 for F32/F16/BF16), x must hold
// n / block_elems blocks and y n floats. Output element i is element i of the tensor in
// GGUF order (block b covers elements [b * block_elems, (b + 1) * block_elems)).
//
// Exactness: each output is the correctly rounded float of its exact value. The block
// scales are fp16 (11 significant bits) and the quants are small integers, so every
// product below fits a float's 24-bit significand and only a final "+ m" / "- dmin*m"
// rounds (IQ4_XS: d·(ls − 32) is exact and its product with an 8-bit grid value rounds
// once). Results are therefore independent of evaluation order and FMA contraction,
// which is what lets the CUDA kernels and the test reference match them bit for bit.
#pragma once

#include <cstdint>

#include "quant/quant_types.h"

namespace hearth::quant {

void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t n);
void dequantize_row_q4_1(const BlockQ4_1* x, float* y, int64_t n);
void dequantize_row_q5_0(const BlockQ5_0* x, float* y, int64_t n);
void dequantize_row_q5_1(const BlockQ5_1* x, float* y, int64_t n);
void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t n);
void dequantize_row_q2_k(const BlockQ2_K* x, float* y, int64_t n);
void dequantize_row_q3_k(const BlockQ3_K* x, float* y, int64_t n);
void dequantize_row_iq4_nl(const BlockIQ4_NL* x, float* y, int64_t n);
void dequantize_row_iq4_xs(const BlockIQ4_XS* x, float* y, int64_t n);
void dequantize_row_q4_k(const BlockQ4_K* x, float* y, int64_t n);
void dequantize_row_q5_k(const BlockQ5_K* x, float* y, int64_t n);
void dequantize_row_q6_k(const BlockQ6_K* x, float* y, int64_t n);
void dequantize_row_f32(const float* x, float* y, int64_t n);
void dequantize_row_f16(const uint16_t* x, float* y, int64_t n);  // IEEE binary16 bits
void dequantize_row_bf16(const uint16_t* x, float* y, int64_t n);

// Type-erased form of the functions above, for tables keyed by tensor type.
using DequantizeRowFn = void (*)(const void* x, float* y, int64_t n);

// The row function of `type`, or nullptr when Hearth does not support it.
DequantizeRowFn dequantize_row_fn(TensorType type);

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K super-block, packed in
// scales[12] as: bytes 0-3 hold sc[0..3] in bits 0-5 and bits 4-5 of sc[4..7] in bits
// 6-7; bytes 4-7 the same for the mins; bytes 8-11 hold bits 0-3 of sc[4..7] (low
// nibble) and of m[4..7] (high nibble).
inline void k_scale_min(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = static_cast<uint8_t>((q[j + 4] & 15) | ((q[j - 4] >> 6) << 4));
        *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// The 6-bit scale (0..63, before the −32 offset) of sub-block j (0..15) of a Q3_K
// super-block, packed in scales[12] as: the low 4 bits of scale j in the low nibble of
// byte j (j < 8) or the high nibble of byte j − 8; the high 2 bits in bits 2·(j / 4) and
// up of byte 8 + j % 4.
inline int q3_k_scale(int j, const uint8_t* s) {
    const int lo = j < 8 ? s[j] & 15 : s[j - 8] >> 4;
    return lo | (((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4);
}

// The 6-bit scale (0..63, before the −32 offset) of sub-block j (0..7) of an IQ4_XS
// super-block.
inline int iq4_xs_scale(int j, const BlockIQ4_XS& b) {
    return ((b.scales_l[j / 2] >> (4 * (j % 2))) & 15) | (((b.scales_h >> (2 * j)) & 3) << 4);
}

}  // namespace hearth::quant
