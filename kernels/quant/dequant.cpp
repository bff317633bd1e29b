// CPU dequantisation, one function per GGUF type over whole blocks. The inner loops are
// fixed-length, branch-free and write contiguous output so the compiler vectorises them;
// the block layouts are described in quant/quant_types.h and, per format, below.
#include "quant/dequant.h"

#include <bit>
#include <cassert>
#include <cstring>

#include "quant/dequant_rows.h"
#include "quant/fp16.h"

namespace hearth::quant {

namespace {

// The 32 high bits of a Q5_0/Q5_1 block, stored as a little-endian u32: bit j is the
// fifth bit of element j.
inline uint32_t load_qh(const uint8_t* qh) {
    return static_cast<uint32_t>(qh[0]) | (static_cast<uint32_t>(qh[1]) << 8) |
           (static_cast<uint32_t>(qh[2]) << 16) | (static_cast<uint32_t>(qh[3]) << 24);
}

inline float to_float(int v) {
    return static_cast<float>(v);
}

// fp16 → f32 without branches, so dequantize_row_f16 vectorises (fp16_to_f32 in
// quant/fp16.h loops over subnormals). Same results, bit for bit, NaN payloads included.
inline float fp16_bits_to_f32(uint16_t h) {
    const uint32_t em = h & 0x7fffu;  // exponent and mantissa
    const uint32_t sign = (h & 0x8000u) << 16;
    uint32_t bits = (em << 13) + 0x38000000u;  // rebias exponent 15 → 127
    if (em >= 0x7c00u) bits += 0x38000000u;    // inf/NaN: exponent 31 → 255
    // Subnormal halves are mant · 2^-24: an exact int → float conversion and scaling.
    const uint32_t sub = std::bit_cast<uint32_t>(static_cast<float>(em) * 0x1p-24f);
    return std::bit_cast<float>(sign | (em < 0x400u ? sub : bits));
}

}  // namespace

// Q4_0, 18 bytes: fp16 d, qs[16]. Element j < 16 is the low nibble of qs[j], element
// j + 16 its high nibble; y = (q - 8) · d.
void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t n) {
    assert(n % kQK == 0);
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_f32(x[i].d);
        const uint8_t* qs = x[i].qs;
        for (int j = 0; j < kQK / 2; ++j) {
            y[j] = to_float((qs[j] & 15) - 8) * d;
            y[j + kQK / 2] = to_float((qs[j] >> 4) - 8) * d;
        }
    }
}

// Q4_1, 20 bytes: fp16 d, fp16 m, qs[16] as in Q4_0; y = q · d + m.
void dequantize_row_q4_1(const BlockQ4_1* x, float* y, int64_t n) {
    assert(n % kQK == 0);
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_f32(x[i].d);
        const float m = fp16_to_f32(x[i].m);
        const uint8_t* qs = x[i].qs;
        for (int j = 0; j < kQK / 2; ++j) {
            y[j] = to_float(qs[j] & 15) * d + m;
            y[j + kQK / 2] = to_float(qs[j] >> 4) * d + m;
        }
    }
}

// Q5_0, 22 bytes: fp16 d, qh[4] (bit j = fifth bit of element j), qs[16] as in Q4_0;
// y = (q - 16) · d with q in 0..31.
void dequantize_row_q5_0(const BlockQ5_0* x, float* y, int64_t n) {
    assert(n % kQK == 0);
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_f32(x[i].d);
        const uint32_t qh = load_qh(x[i].qh);
        const uint8_t* qs = x[i].qs;
        for (int j = 0; j < kQK / 2; ++j) {
            const int h0 = static_cast<int>(((qh >> j) << 4) & 0x10u);
            const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10u);
            y[j] = to_float(((qs[j] & 15) | h0) - 16) * d;
            y[j + kQK / 2] = to_float(((qs[j] >> 4) | h1) - 16) * d;
        }
    }
}

// Q5_1, 24 bytes: fp16 d, fp16 m, qh[4], qs[16] as in Q5_0; y = q · d + m.
void dequantize_row_q5_1(const BlockQ5_1* x, float* y, int64_t n) {
    assert(n % kQK == 0);
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_f32(x[i].d);
        const float m = fp16_to_f32(x[i].m);
        const uint32_t qh = load_qh(x[i].qh);
        const uint8_t* qs = x[i].qs;
        for (int j = 0; j < kQK / 2; ++j) {
            const int h0 = static_cast<int>(((qh >> j) << 4) & 0x10u);
            const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10u);
            y[j] = to_float((qs[j] & 15) | h0) * d + m;
            y[j + kQK / 2] = to_float((qs[j] >> 4) | h1) * d + m;
        }
    }
}

// Q8_0, 34 bytes: fp16 d, int8 qs[32]; y = q · d.
void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t n) {
    assert(n % kQK == 0);
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_f32(x[i].d);
        for (int j = 0; j < kQK; ++j) y[j] = to_float(x[i].qs[j]) * d;
    }
}

// Q2_K, 84 bytes: scales[16] (sub-block j: scale in the low nibble, min in the high),
// qs[64], fp16 d, fp16 dmin (layout in quant_types.h). y = d·sc · q − dmin·m.
void dequantize_row_q2_k(const BlockQ2_K* x, float* y, int64_t n) {
    assert(n % kQKK == 0);
    for (int64_t i = 0; i < n / kQKK; ++i, y += kQKK) {
        const float d = fp16_to_f32(x[i].d);
        const float dmin = fp16_to_f32(x[i].dmin);
        for (int e = 0; e < kQKK; ++e) {
            const int sub = e / 16, half = e / 128, j = (e % 128) / 32;
            const int q = (x[i].qs[32 * half + e % 32] >> (2 * j)) & 3;
            const uint8_t sc = x[i].scales[sub];
            y[e] = d * to_float(sc & 15) * to_float(q) - dmin * to_float(sc >> 4);
        }
    }
}

// Q3_K, 110 bytes: hmask[32], qs[64], scales[12], fp16 d (layout in quant_types.h).
// y = d·(sc − 32) · (q − 4·(1 − third bit)).
void dequantize_row_q3_k(const BlockQ3_K* x, float* y, int64_t n) {
    assert(n % kQKK == 0);
    for (int64_t i = 0; i < n / kQKK; ++i, y += kQKK) {
        const float d = fp16_to_f32(x[i].d);
        float dl[16];
        for (int j = 0; j < 16; ++j) dl[j] = d * to_float(q3_k_scale(j, x[i].scales) - 32);
        for (int e = 0; e < kQKK; ++e) {
            const int half = e / 128, j = (e % 128) / 32;
            const int lo = (x[i].qs[32 * half + e % 32] >> (2 * j)) & 3;
            const int hi = (x[i].hmask[e % 32] >> (4 * half + j)) & 1;
            y[e] = dl[e / 16] * to_float(lo - (hi ? 0 : 4));
        }
    }
}

// IQ4_NL, 18 bytes: fp16 d, qs[16] (4-bit indices as Q4_0's nibbles); y = d·kIq4nlValues[q].
void dequantize_row_iq4_nl(const BlockIQ4_NL* x, float* y, int64_t n) {
    assert(n % kQK == 0);
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_f32(x[i].d);
        for (int j = 0; j < kQK / 2; ++j) {
            y[j] = d * to_float(kIq4nlValues[x[i].qs[j] & 15]);
            y[j + kQK / 2] = d * to_float(kIq4nlValues[x[i].qs[j] >> 4]);
        }
    }
}

// IQ4_XS, 136 bytes: fp16 d, scales_h, scales_l[4], qs[128]: 8 IQ4_NL-shaped sub-blocks
// of 32 with 6-bit scales (iq4_xs_scale). y = d·(ls − 32) · kIq4nlValues[q].
void dequantize_row_iq4_xs(const BlockIQ4_XS* x, float* y, int64_t n) {
    assert(n % kQKK == 0);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d);
        for (int j = 0; j < 8; ++j, y += 32) {
            const float dl = d * to_float(iq4_xs_scale(j, x[i]) - 32);
            const uint8_t* qs = x[i].qs + 16 * j;
            for (int l = 0; l < 16; ++l) {
                y[l] = dl * to_float(kIq4nlValues[qs[l] & 15]);
                y[l + 16] = dl * to_float(kIq4nlValues[qs[l] >> 4]);
            }
        }
    }
}

// Q4_K, 144 bytes: fp16 d, fp16 dmin, scales[12] (8 × 6-bit scale and min, see
// k_scale_min), qs[128]. Four chunks of 64 outputs; chunk c uses qs[32c .. 32c+31]:
// low nibbles give outputs 64c + l (sub-block 2c), high nibbles 64c + 32 + l (2c + 1).
// y = d·sc · q - dmin·m.
void dequantize_row_q4_k(const BlockQ4_K* x, float* y, int64_t n) {
    assert(n % kQKK == 0);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d);
        const float dmin = fp16_to_f32(x[i].dmin);
        const uint8_t* q = x[i].qs;
        for (int is = 0; is < 8; is += 2, q += 32, y += 64) {
            uint8_t sc, m;
            k_scale_min(is, x[i].scales, &sc, &m);
            const float d1 = d * sc, m1 = dmin * m;
            k_scale_min(is + 1, x[i].scales, &sc, &m);
            const float d2 = d * sc, m2 = dmin * m;
            for (int l = 0; l < 32; ++l) y[l] = d1 * to_float(q[l] & 15) - m1;
            for (int l = 0; l < 32; ++l) y[l + 32] = d2 * to_float(q[l] >> 4) - m2;
        }
    }
}

// Q5_K, 176 bytes: fp16 d, fp16 dmin, scales[12], qh[32], qs[128]. As Q4_K, plus 16
// when the fifth bit is set: output 64c + l takes bit 2c of qh[l], output 64c + 32 + l
// bit 2c + 1 (so bit k of qh[l] belongs to sub-block k).
void dequantize_row_q5_k(const BlockQ5_K* x, float* y, int64_t n) {
    assert(n % kQKK == 0);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d);
        const float dmin = fp16_to_f32(x[i].dmin);
        const uint8_t* ql = x[i].qs;
        const uint8_t* qh = x[i].qh;
        for (int is = 0; is < 8; is += 2, ql += 32, y += 64) {
            uint8_t sc, m;
            k_scale_min(is, x[i].scales, &sc, &m);
            const float d1 = d * sc, m1 = dmin * m;
            k_scale_min(is + 1, x[i].scales, &sc, &m);
            const float d2 = d * sc, m2 = dmin * m;
            for (int l = 0; l < 32; ++l) {
                y[l] = d1 * to_float((ql[l] & 15) | (((qh[l] >> is) & 1) << 4)) - m1;
            }
            for (int l = 0; l < 32; ++l) {
                y[l + 32] = d2 * to_float((ql[l] >> 4) | (((qh[l] >> (is + 1)) & 1) << 4)) - m2;
            }
        }
    }
}

// Q6_K, 210 bytes: ql[128] (low 4 bits), qh[64] (high 2 bits), int8 scales[16], fp16 d.
// Two halves of 128 outputs, each using 64 bytes of ql, 32 of qh and 8 scales. In a
// half, for l < 32: output l     = low nibble of ql[l]      | qh[l] bits 0-1 << 4,
//                   output l+32  = low nibble of ql[l + 32] | qh[l] bits 2-3 << 4,
//                   output l+64  = high nibble of ql[l]     | qh[l] bits 4-5 << 4,
//                   output l+96  = high nibble of ql[l + 32]| qh[l] bits 6-7 << 4,
// and output k uses scale k / 16 of the half. y = d·sc · (q - 32).
void dequantize_row_q6_k(const BlockQ6_K* x, float* y, int64_t n) {
    assert(n % kQKK == 0);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d);
        const uint8_t* ql = x[i].ql;
        const uint8_t* qh = x[i].qh;
        const int8_t* sc = x[i].scales;
        for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, y += 128) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 15) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l] = d * sc[is] * to_float(q1);
                y[l + 32] = d * sc[is + 2] * to_float(q2);
                y[l + 64] = d * sc[is + 4] * to_float(q3);
                y[l + 96] = d * sc[is + 6] * to_float(q4);
            }
        }
    }
}

void dequantize_row_f32(const float* x, float* y, int64_t n) {
    if (n > 0) std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
}

void dequantize_row_f16(const uint16_t* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = fp16_bits_to_f32(x[i]);
}

void dequantize_row_bf16(const uint16_t* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = bf16_to_f32(x[i]);
}

namespace {

// Adapts a typed row function to DequantizeRowFn.
template <typename T, void (*Fn)(const T*, float*, int64_t)>
void erased(const void* x, float* y, int64_t n) {
    Fn(static_cast<const T*>(x), y, n);
}

}  // namespace

DequantizeRowFn dequantize_row_fn(TensorType type) {
    switch (type) {
        case TensorType::F32:
            return erased<float, dequantize_row_f32>;
        case TensorType::F16:
            return erased<uint16_t, dequantize_row_f16>;
        case TensorType::BF16:
            return erased<uint16_t, dequantize_row_bf16>;
        case TensorType::Q4_0:
            return erased<BlockQ4_0, dequantize_row_q4_0>;
        case TensorType::Q4_1:
            return erased<BlockQ4_1, dequantize_row_q4_1>;
        case TensorType::Q5_0:
            return erased<BlockQ5_0, dequantize_row_q5_0>;
        case TensorType::Q5_1:
            return erased<BlockQ5_1, dequantize_row_q5_1>;
        case TensorType::Q8_0:
            return erased<BlockQ8_0, dequantize_row_q8_0>;
        case TensorType::Q2_K:
            return erased<BlockQ2_K, dequantize_row_q2_k>;
        case TensorType::Q3_K:
            return erased<BlockQ3_K, dequantize_row_q3_k>;
        case TensorType::IQ4_NL:
            return erased<BlockIQ4_NL, dequantize_row_iq4_nl>;
        case TensorType::IQ4_XS:
            return erased<BlockIQ4_XS, dequantize_row_iq4_xs>;
        case TensorType::Q4_K:
            return erased<BlockQ4_K, dequantize_row_q4_k>;
        case TensorType::Q5_K:
            return erased<BlockQ5_K, dequantize_row_q5_k>;
        case TensorType::Q6_K:
            return erased<BlockQ6_K, dequantize_row_q6_k>;
    }
    return nullptr;  // an id outside the enum (the caller cast an unchecked file value)
}

bool dequantize(TensorType type, const void* src, float* dst, int64_t n) {
    const auto t = traits(type);
    const DequantizeRowFn fn = dequantize_row_fn(type);
    if (!t || !fn || n < 0 || n % t->block_elems != 0) return false;
    if (n > 0) fn(src, dst, n);
    return true;
}

}  // namespace hearth::quant
