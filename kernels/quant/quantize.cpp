// Round-to-nearest GGUF encoders; the error bounds they guarantee are derived in
// quantize.h. The pattern for every type: pick the block's scales from its range,
// round them up onto their storage grid (fp16, 6 or 8 bits) so the range stays covered,
// then round each element to the nearest level of the *stored* scales.
#include "quant/quantize.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "quant/fp16.h"

namespace hearth::quant {

namespace {

constexpr uint16_t kFp16MaxFinite = 0x7bff;  // 65504

// Smallest finite fp16 ≥ v (v ≥ 0), saturating at 65504.
uint16_t ceil16(float v) {
    v = std::max(v, 0.0f);
    uint16_t h = f32_to_fp16(v);
    if (h >= 0x7c00u) return kFp16MaxFinite;
    if (fp16_to_f32(h) < v) ++h;  // positive fp16 bit patterns are ordered like their values
    return std::min(h, kFp16MaxFinite);
}

// Largest finite fp16 ≤ v, saturating at ±65504.
uint16_t floor16(float v) {
    uint16_t h = f32_to_fp16(v);
    if (fp16_to_f32(h) > v) {
        if ((h & 0x7fffu) == 0) {
            h = 0x8001;  // below ±0: the smallest negative subnormal
        } else if (h & 0x8000u) {
            ++h;  // negative: a larger magnitude is a smaller value
        } else {
            --h;
        }
    }
    if ((h & 0x7fffu) >= 0x7c00u) h = static_cast<uint16_t>((h & 0x8000u) | kFp16MaxFinite);
    return h;
}

// Nearest fp16, saturating instead of overflowing to inf.
uint16_t nearest16(float v) {
    uint16_t h = f32_to_fp16(v);
    if ((h & 0x7fffu) >= 0x7c00u) h = static_cast<uint16_t>((h & 0x8000u) | kFp16MaxFinite);
    return h;
}

// round(v) clamped to [lo, hi]; ties to even.
int round_clamp(float v, int lo, int hi) {
    const float r = std::nearbyint(v);
    if (!(r >= static_cast<float>(lo))) return lo;  // also catches NaN
    if (r > static_cast<float>(hi)) return hi;
    return static_cast<int>(r);
}

int ceil_clamp(float v, int hi) {
    const float r = std::ceil(v);
    if (!(r >= 0.0f)) return 0;
    return r > static_cast<float>(hi) ? hi : static_cast<int>(r);
}

// Levels of one 32-element block in the symmetric ggml style of Q4_0/Q5_0: the element
// of largest magnitude maps to level -half exactly (d carries its sign), so that side
// gets `half` levels and the other side half - 1. Writes q + half (0 .. 2·half - 1).
uint16_t symmetric_levels(const float* x, int half, uint8_t* q) {
    float amax = 0.0f, xmax = 0.0f;
    for (int j = 0; j < kQK; ++j) {
        if (std::fabs(x[j]) > amax) {
            amax = std::fabs(x[j]);
            xmax = x[j];
        }
    }
    const uint16_t d16 = nearest16(xmax / static_cast<float>(-half));
    const float d = fp16_to_f32(d16);
    for (int j = 0; j < kQK; ++j) {
        q[j] =
            static_cast<uint8_t>(d != 0.0f ? round_clamp(x[j] / d, -half, half - 1) + half : half);
    }
    return d16;
}

// Levels 0..steps of one 32-element block with an offset: y = q·d + m. m is rounded
// down and d up so that [lo, hi] ⊆ [m, m + steps·d] and nothing is clamped.
void offset_levels(const float* x, int steps, uint8_t* q, uint16_t* d16, uint16_t* m16) {
    const float lo = *std::min_element(x, x + kQK);
    const float hi = *std::max_element(x, x + kQK);
    *m16 = floor16(lo);
    const float m = fp16_to_f32(*m16);
    *d16 = ceil16((hi - m) / static_cast<float>(steps));
    const float d = fp16_to_f32(*d16);
    for (int j = 0; j < kQK; ++j) {
        q[j] = static_cast<uint8_t>(d != 0.0f ? round_clamp((x[j] - m) / d, 0, steps) : 0);
    }
}

// Packs 32 levels of 4 (or the low 4 of 5) bits: element j in the low nibble of qs[j],
// element j + 16 in the high nibble; the fifth bit of element j goes to bit j of qh.
void pack_32(const uint8_t* q, uint8_t* qs, uint8_t* qh) {
    uint32_t high = 0;
    for (int j = 0; j < kQK / 2; ++j) {
        qs[j] = static_cast<uint8_t>((q[j] & 15) | ((q[j + 16] & 15) << 4));
    }
    for (int j = 0; j < kQK; ++j) high |= static_cast<uint32_t>(q[j] >> 4) << j;
    if (qh) {
        for (int b = 0; b < 4; ++b) qh[b] = static_cast<uint8_t>(high >> (8 * b));
    }
}

// A Q4_K/Q5_K super-block before packing.
struct KLevels {
    uint16_t d, dmin;
    uint8_t sc[8], m[8];
    uint8_t q[kQKK];  // 0..steps
};

// Chooses the scales and levels of one super-block (see quantize.h for the bound).
void k_levels(const float* x, int steps, KLevels* out) {
    float lo[8], hi[8], need[8], offset[8];
    float max_neg = 0.0f;
    for (int j = 0; j < 8; ++j) {
        lo[j] = std::min(0.0f, *std::min_element(x + 32 * j, x + 32 * j + 32));
        hi[j] = *std::max_element(x + 32 * j, x + 32 * j + 32);
        max_neg = std::max(max_neg, -lo[j]);
    }
    out->dmin = ceil16(max_neg / 63.0f);
    const float dmin = fp16_to_f32(out->dmin);
    float max_need = 0.0f;
    for (int j = 0; j < 8; ++j) {
        out->m[j] = static_cast<uint8_t>(dmin > 0.0f ? ceil_clamp(-lo[j] / dmin, 63) : 0);
        offset[j] = dmin * out->m[j];  // ≥ -lo[j]: the grid starts at or below lo[j]
        need[j] = std::max(0.0f, (hi[j] + offset[j]) / static_cast<float>(steps));
        max_need = std::max(max_need, need[j]);
    }
    out->d = ceil16(max_need / 63.0f);
    const float d = fp16_to_f32(out->d);
    for (int j = 0; j < 8; ++j) {
        out->sc[j] = static_cast<uint8_t>(d > 0.0f ? ceil_clamp(need[j] / d, 63) : 0);
        const float step = d * out->sc[j];  // ≥ need[j], ≤ need[j] + d
        for (int l = 0; l < 32; ++l) {
            const float v = x[32 * j + l];
            out->q[32 * j + l] = static_cast<uint8_t>(
                step > 0.0f ? round_clamp((v + offset[j]) / step, 0, steps) : 0);
        }
    }
}

// Inverse of k_scale_min (dequant_rows.h): 8 six-bit scales and mins into 12 bytes.
void pack_k_scales(const KLevels& k, uint8_t* scales) {
    for (int j = 0; j < 4; ++j) {
        scales[j] = static_cast<uint8_t>(k.sc[j] | ((k.sc[j + 4] >> 4) << 6));
        scales[j + 4] = static_cast<uint8_t>(k.m[j] | ((k.m[j + 4] >> 4) << 6));
        scales[j + 8] = static_cast<uint8_t>((k.sc[j + 4] & 15) | ((k.m[j + 4] & 15) << 4));
    }
}

}  // namespace

void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t n) {
    assert(n % kQK == 0);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        uint8_t q[kQK];
        y[i].d = symmetric_levels(x, 8, q);
        pack_32(q, y[i].qs, nullptr);
    }
}

void quantize_row_q5_0(const float* x, BlockQ5_0* y, int64_t n) {
    assert(n % kQK == 0);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        uint8_t q[kQK];
        y[i].d = symmetric_levels(x, 16, q);
        pack_32(q, y[i].qs, y[i].qh);
    }
}

void quantize_row_q4_1(const float* x, BlockQ4_1* y, int64_t n) {
    assert(n % kQK == 0);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        uint8_t q[kQK];
        offset_levels(x, 15, q, &y[i].d, &y[i].m);
        pack_32(q, y[i].qs, nullptr);
    }
}

void quantize_row_q5_1(const float* x, BlockQ5_1* y, int64_t n) {
    assert(n % kQK == 0);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        uint8_t q[kQK];
        offset_levels(x, 31, q, &y[i].d, &y[i].m);
        pack_32(q, y[i].qs, y[i].qh);
    }
}

void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n) {
    assert(n % kQK == 0);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float amax = 0.0f;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        y[i].d = ceil16(amax / 127.0f);
        const float d = fp16_to_f32(y[i].d);
        for (int j = 0; j < kQK; ++j) {
            y[i].qs[j] = static_cast<int8_t>(d > 0.0f ? round_clamp(x[j] / d, -127, 127) : 0);
        }
    }
}

void quantize_row_q4_k(const float* x, BlockQ4_K* y, int64_t n) {
    assert(n % kQKK == 0);
    KLevels k;
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        k_levels(x, 15, &k);
        y[i].d = k.d;
        y[i].dmin = k.dmin;
        pack_k_scales(k, y[i].scales);
        // Chunk c of 64 outputs: qs[32c + l] holds output 64c + l (low nibble) and
        // output 64c + 32 + l (high nibble).
        for (int c = 0; c < 4; ++c) {
            for (int l = 0; l < 32; ++l) {
                y[i].qs[32 * c + l] =
                    static_cast<uint8_t>(k.q[64 * c + l] | (k.q[64 * c + 32 + l] << 4));
            }
        }
    }
}

void quantize_row_q5_k(const float* x, BlockQ5_K* y, int64_t n) {
    assert(n % kQKK == 0);
    KLevels k;
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        k_levels(x, 31, &k);
        y[i].d = k.d;
        y[i].dmin = k.dmin;
        pack_k_scales(k, y[i].scales);
        // Low nibbles as Q4_K; the fifth bit of output 32·sb + l is bit sb of qh[l].
        std::memset(y[i].qh, 0, sizeof(y[i].qh));
        for (int c = 0; c < 4; ++c) {
            for (int l = 0; l < 32; ++l) {
                const uint8_t lo = k.q[64 * c + l], hi = k.q[64 * c + 32 + l];
                y[i].qs[32 * c + l] = static_cast<uint8_t>((lo & 15) | ((hi & 15) << 4));
                y[i].qh[l] |=
                    static_cast<uint8_t>(((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
            }
        }
    }
}

void quantize_row_q6_k(const float* x, BlockQ6_K* y, int64_t n) {
    assert(n % kQKK == 0);
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        float need[16], max_need = 0.0f;
        for (int j = 0; j < 16; ++j) {
            float amax = 0.0f;
            for (int l = 0; l < 16; ++l) amax = std::max(amax, std::fabs(x[16 * j + l]));
            need[j] = amax / 31.0f;
            max_need = std::max(max_need, need[j]);
        }
        y[i].d = ceil16(max_need / 127.0f);
        const float d = fp16_to_f32(y[i].d);
        std::memset(y[i].ql, 0, sizeof(y[i].ql));
        std::memset(y[i].qh, 0, sizeof(y[i].qh));
        for (int e = 0; e < kQKK; ++e) {
            const int j = e / 16;
            if (e % 16 == 0)
                y[i].scales[j] = static_cast<int8_t>(d > 0.0f ? ceil_clamp(need[j] / d, 127) : 0);
            const float step = d * y[i].scales[j];
            const int q = (step > 0.0f ? round_clamp(x[e] / step, -32, 31) : 0) + 32;  // 0..63
            // Output e = 128·half + 32·k + l: low nibble in ql[64·half + l + 32·(k & 1)]
            // (high nibble when k ≥ 2), top two bits at bits 2k of qh[32·half + l].
            const int half = e / 128, k = (e % 128) / 32, l = e % 32;
            y[i].ql[64 * half + l + 32 * (k & 1)] |=
                static_cast<uint8_t>((q & 15) << (k >= 2 ? 4 : 0));
            y[i].qh[32 * half + l] |= static_cast<uint8_t>((q >> 4) << (2 * k));
        }
    }
}

void quantize_row_f16(const float* x, uint16_t* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = f32_to_fp16(x[i]);
}

void quantize_row_bf16(const float* x, uint16_t* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = f32_to_bf16(x[i]);
}

int64_t quantized_size(TensorType type, int64_t n) {
    const auto t = traits(type);
    if (!t || n < 0 || n % t->block_elems != 0) return -1;
    return n / t->block_elems * t->block_bytes;
}

bool quantize(TensorType type, const float* src, void* dst, int64_t n) {
    if (quantized_size(type, n) < 0) return false;
    switch (type) {
        case TensorType::F32:
            if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
            return true;
        case TensorType::F16:
            quantize_row_f16(src, static_cast<uint16_t*>(dst), n);
            return true;
        case TensorType::BF16:
            quantize_row_bf16(src, static_cast<uint16_t*>(dst), n);
            return true;
        case TensorType::Q4_0:
            quantize_row_q4_0(src, static_cast<BlockQ4_0*>(dst), n);
            return true;
        case TensorType::Q4_1:
            quantize_row_q4_1(src, static_cast<BlockQ4_1*>(dst), n);
            return true;
        case TensorType::Q5_0:
            quantize_row_q5_0(src, static_cast<BlockQ5_0*>(dst), n);
            return true;
        case TensorType::Q5_1:
            quantize_row_q5_1(src, static_cast<BlockQ5_1*>(dst), n);
            return true;
        case TensorType::Q8_0:
            quantize_row_q8_0(src, static_cast<BlockQ8_0*>(dst), n);
            return true;
        case TensorType::Q4_K:
            quantize_row_q4_k(src, static_cast<BlockQ4_K*>(dst), n);
            return true;
        case TensorType::Q5_K:
            quantize_row_q5_k(src, static_cast<BlockQ5_K*>(dst), n);
            return true;
        case TensorType::Q6_K:
            quantize_row_q6_k(src, static_cast<BlockQ6_K*>(dst), n);
            return true;
        case TensorType::Q2_K:
        case TensorType::Q3_K:
        case TensorType::IQ4_NL:
        case TensorType::IQ4_XS:
            // Read, never written by Hearth: files of these types come from llama.cpp's
            // quantize tool (its searches for the scales are not worth a copy here).
            return false;
    }
    return false;
}

}  // namespace hearth::quant
