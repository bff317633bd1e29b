// Scalar models of the SIMD levels' own float orders, for the K-quants
// (kernels/cpu/kquant_few.h) and Q8_0 / IQ4_NL (kernels/cpu/gemm_avx2_q8_0.cpp,
// gemm_avx512_q8_0.cpp), the same at the AVX2 and AVX-512 levels, written from the GGUF
// block layouts (ggml's dequantize_row_*) one element at a time: the kernels must give
// their bits exactly.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cpu/act_quant.h"
#include "quant/dequant_rows.h"
#include "quant/fp16.h"
#include "quant/quant_types.h"

namespace hearth::test {

// One super-block's quants in element order as the values they stand for (Q6_K: q − 32,
// Q3_K: −4..3, IQ4_XS: the grid values; the others unsigned), its sub-blocks' scales
// (signed where the format's are) and mins (Q4_K/Q5_K/Q2_K), their count (8 of 32 or
// 16 of 16 elements), d and dmin.
struct KBlockRaw {
    int q[256];
    int sc[16];
    int m[16];
    int n_sub;
    bool mins;
    float d, dmin;
};

inline float half_at(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return quant::fp16_to_f32(h);
}

inline KBlockRaw decode_k_block(quant::TensorType type, const uint8_t* p) {
    using quant::TensorType;
    KBlockRaw r{};
    if (type == TensorType::Q6_K) {
        const uint8_t* ql = p;
        const uint8_t* qh = p + 128;
        for (int n = 0; n < 2; ++n)
            for (int l = 0; l < 32; ++l) {
                const uint8_t* L = ql + 64 * n;
                const uint8_t H = qh[32 * n + l];
                r.q[128 * n + l] = ((L[l] & 0xF) | ((H & 3) << 4)) - 32;
                r.q[128 * n + l + 32] = ((L[l + 32] & 0xF) | (((H >> 2) & 3) << 4)) - 32;
                r.q[128 * n + l + 64] = ((L[l] >> 4) | (((H >> 4) & 3) << 4)) - 32;
                r.q[128 * n + l + 96] = ((L[l + 32] >> 4) | (((H >> 6) & 3) << 4)) - 32;
            }
        for (int j = 0; j < 16; ++j) r.sc[j] = static_cast<int8_t>(p[192 + j]);
        r.n_sub = 16;
        r.d = half_at(p + 208);
        return r;
    }
    if (type == TensorType::Q2_K || type == TensorType::Q3_K) {
        // Element 128n + 32j + l: bits 2j of qs[32n + l]; Q3_K's third bit: bit 4n + j of
        // hmask[l], −4 when clear.
        const bool two = type == TensorType::Q2_K;
        const uint8_t* qs = p + (two ? 16 : 32);
        for (int n = 0; n < 2; ++n)
            for (int j = 0; j < 4; ++j)
                for (int l = 0; l < 32; ++l) {
                    int q = (qs[32 * n + l] >> (2 * j)) & 3;
                    if (!two && !((p[l] >> (4 * n + j)) & 1)) q -= 4;
                    r.q[128 * n + 32 * j + l] = q;
                }
        for (int j = 0; j < 16; ++j) {
            if (two) {
                r.sc[j] = p[j] & 15;
                r.m[j] = p[j] >> 4;
            } else {
                r.sc[j] = quant::q3_k_scale(j, p + 96) - 32;
            }
        }
        r.n_sub = 16;
        r.mins = two;
        r.d = half_at(p + (two ? 80 : 108));
        if (two) r.dmin = half_at(p + 82);
        return r;
    }
    if (type == TensorType::IQ4_XS) {
        quant::BlockIQ4_XS b;
        std::memcpy(&b, p, sizeof b);
        for (int j = 0; j < 8; ++j) {
            r.sc[j] = quant::iq4_xs_scale(j, b) - 32;
            for (int l = 0; l < 16; ++l) {
                r.q[32 * j + l] = quant::kIq4nlValues[b.qs[16 * j + l] & 15];
                r.q[32 * j + 16 + l] = quant::kIq4nlValues[b.qs[16 * j + l] >> 4];
            }
        }
        r.n_sub = 8;
        r.d = half_at(p);
        return r;
    }
    const bool five = type == TensorType::Q5_K;
    const uint8_t* qh = p + 4 + quant::kKScaleBytes;
    const uint8_t* qs = five ? qh + 32 : qh;
    for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l) {
            r.q[64 * c + l] = qs[32 * c + l] & 0xF;
            r.q[64 * c + 32 + l] = qs[32 * c + l] >> 4;
            if (five) {
                r.q[64 * c + l] += ((qh[l] >> (2 * c)) & 1) << 4;
                r.q[64 * c + 32 + l] += ((qh[l] >> (2 * c + 1)) & 1) << 4;
            }
        }
    for (int j = 0; j < 8; ++j) {
        uint8_t sc, m;
        quant::k_scale_min(j, p + 4, &sc, &m);
        r.sc[j] = sc;
        r.m[j] = m;
    }
    r.n_sub = 8;
    r.mins = true;
    r.d = half_at(p);
    r.dmin = half_at(p + 2);
    return r;
}

// Row `row` (nb super-blocks of type) against one token's Q8xK activations q8k: per
// super-block S1 = Σ_j sc_j·Σ q·a and S2 = Σ_j m_j·Σ a (exact), f = fl(S1)·d, minus
// dmin·fl(S2) in one rounding where the type has mins, acc = fma(f, da, acc).
inline float kquant_order_model(quant::TensorType type, const uint8_t* row, const uint8_t* q8k,
                                int64_t nb) {
    const auto* qa = reinterpret_cast<const int8_t*>(q8k);
    float da[64];  // nb ≤ 64 in the tests
    std::memcpy(da, q8k + kernels::cpu::q8k_d_offset(nb), static_cast<std::size_t>(nb) * 4);
    const auto bytes = static_cast<std::size_t>(quant::traits(type)->block_bytes);
    float acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        const KBlockRaw k = decode_k_block(type, row + static_cast<std::size_t>(b) * bytes);
        const int8_t* a = qa + 256 * b;
        const int sub = 256 / k.n_sub;
        int32_t s1 = 0, s2 = 0;
        for (int j = 0; j < k.n_sub; ++j) {
            int32_t dot = 0, sum = 0;
            for (int i = j * sub; i < (j + 1) * sub; ++i) {
                dot += k.q[i] * a[i];
                sum += a[i];
            }
            s1 += k.sc[j] * dot;
            s2 += k.m[j] * sum;
        }
        float f = static_cast<float>(s1) * k.d;
        if (k.mins) f = std::fma(-k.dmin, static_cast<float>(s2), f);
        acc = std::fma(f, da[b], acc);
    }
    return acc;
}

// The whole product as the AVX2 and AVX-512 levels compute it: rows × cols weights of type
// (K-quant) against tokens rows of x, quantised as the kernels quantise them (the scalar
// quantiser, whose bytes the AVX2 one matches); out[t · rows + r], plus bias[r] if given.
inline std::vector<float> kquant_order_model_matmul(quant::TensorType type, const uint8_t* w,
                                                    int rows, int64_t cols, const float* x,
                                                    int tokens, const float* bias) {
    const int64_t nb = cols / 256;
    const std::size_t row_bytes = static_cast<std::size_t>(nb) * quant::traits(type)->block_bytes;
    std::vector<uint8_t> q8k(kernels::cpu::q8k_row_bytes(nb));
    std::vector<float> out(static_cast<std::size_t>(rows) * static_cast<std::size_t>(tokens));
    for (int t = 0; t < tokens; ++t) {
        kernels::cpu::quantize_q8k_scalar(x + t * cols, nb, q8k.data());
        for (int r = 0; r < rows; ++r) {
            float v = kquant_order_model(type, w + static_cast<std::size_t>(r) * row_bytes,
                                         q8k.data(), nb);
            if (bias) v += bias[r];
            out[static_cast<std::size_t>(t) * static_cast<std::size_t>(rows) +
                static_cast<std::size_t>(r)] = v;
        }
    }
    return out;
}

// Q8_0 (or IQ4_NL: w its grid values) weights (rows × cols) against tokens rows of x, as
// the AVX2 and AVX-512 levels compute them: per block S = Σ w·a exact, f = fl(S)·dw,
// acc = fma(f, da, acc); plus bias[r] if given.
inline std::vector<float> q8_0_order_model_matmul(quant::TensorType type, const uint8_t* w,
                                                  int rows, int64_t cols, const float* x,
                                                  int tokens, const float* bias) {
    const bool nl = type == quant::TensorType::IQ4_NL;
    const std::size_t block_bytes = nl ? sizeof(quant::BlockIQ4_NL) : sizeof(quant::BlockQ8_0);
    const int64_t nb = cols / 32;
    const std::size_t row_bytes = static_cast<std::size_t>(nb) * block_bytes;
    std::vector<uint8_t> q8(kernels::cpu::q8x32_group_bytes(nb, 1));
    std::vector<float> out(static_cast<std::size_t>(rows) * static_cast<std::size_t>(tokens));
    for (int t = 0; t < tokens; ++t) {
        kernels::cpu::quantize_q8x32_scalar(x + t * cols, static_cast<std::size_t>(cols), 1, 1, nb,
                                            kernels::cpu::Q8Sums::Q8_0, q8.data());
        const auto* qa = reinterpret_cast<const int8_t*>(q8.data());
        float da[64];  // nb ≤ 64 in the tests: ds [nb][2][1], d first
        for (int64_t b = 0; b < nb; ++b)
            std::memcpy(&da[b], q8.data() + kernels::cpu::q8x32_ds_offset(nb, 1) + 8 * b, 4);
        for (int r = 0; r < rows; ++r) {
            const uint8_t* row = w + static_cast<std::size_t>(r) * row_bytes;
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; ++b) {
                const uint8_t* p = row + static_cast<std::size_t>(b) * block_bytes;
                int32_t s = 0;
                for (int i = 0; i < 32; ++i) {
                    const int wi = nl ? quant::kIq4nlValues[(p[2 + i % 16] >> (4 * (i / 16))) & 15]
                                      : static_cast<int8_t>(p[2 + i]);
                    s += wi * qa[32 * b + i];
                }
                const float f = static_cast<float>(s) * half_at(p);
                acc = std::fma(f, da[b], acc);
            }
            out[static_cast<std::size_t>(t) * static_cast<std::size_t>(rows) +
                static_cast<std::size_t>(r)] = bias ? acc + bias[r] : acc;
        }
    }
    return out;
}

}  // namespace hearth::test
