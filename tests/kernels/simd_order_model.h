// Scalar models of the SIMD levels' own float orders, for the K-quants
// (kernels/cpu/kquant_few.h) and Q8_0 (kernels/cpu/gemm_avx2_q8_0.cpp,
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

// One super-block's unsigned quants in element order, sub-block scales (Q4_K/Q5_K: 8,
// Q6_K: 16, signed) and mins, d and dmin.
struct KBlockRaw {
    int q[256];
    int sc[16];
    int m[8];
    float d, dmin;
};

inline KBlockRaw decode_k_block(quant::TensorType type, const uint8_t* p) {
    KBlockRaw r{};
    uint16_t h;
    if (type == quant::TensorType::Q6_K) {
        const uint8_t* ql = p;
        const uint8_t* qh = p + 128;
        for (int n = 0; n < 2; ++n)
            for (int l = 0; l < 32; ++l) {
                const uint8_t* L = ql + 64 * n;
                const uint8_t H = qh[32 * n + l];
                r.q[128 * n + l] = (L[l] & 0xF) | ((H & 3) << 4);
                r.q[128 * n + l + 32] = (L[l + 32] & 0xF) | (((H >> 2) & 3) << 4);
                r.q[128 * n + l + 64] = (L[l] >> 4) | (((H >> 4) & 3) << 4);
                r.q[128 * n + l + 96] = (L[l + 32] >> 4) | (((H >> 6) & 3) << 4);
            }
        for (int j = 0; j < 16; ++j) r.sc[j] = static_cast<int8_t>(p[192 + j]);
        std::memcpy(&h, p + 208, 2);
        r.d = quant::fp16_to_f32(h);
        return r;
    }
    const bool five = type == quant::TensorType::Q5_K;
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
    std::memcpy(&h, p, 2);
    r.d = quant::fp16_to_f32(h);
    std::memcpy(&h, p + 2, 2);
    r.dmin = quant::fp16_to_f32(h);
    return r;
}

// Row `row` (nb super-blocks of type) against one token's Q8xK activations q8k.
inline float kquant_order_model(quant::TensorType type, const uint8_t* row, const uint8_t* q8k,
                                int64_t nb) {
    const auto* qa = reinterpret_cast<const int8_t*>(q8k);
    float da[64];  // nb ≤ 64 in the tests
    std::memcpy(da, q8k + kernels::cpu::q8k_d_offset(nb), static_cast<std::size_t>(nb) * 4);
    const std::size_t bytes = type == quant::TensorType::Q6_K   ? sizeof(quant::BlockQ6_K)
                              : type == quant::TensorType::Q5_K ? sizeof(quant::BlockQ5_K)
                                                                : sizeof(quant::BlockQ4_K);
    const bool six = type == quant::TensorType::Q6_K;
    const int sub = six ? 16 : 32;
    float acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        const KBlockRaw k = decode_k_block(type, row + static_cast<std::size_t>(b) * bytes);
        const int8_t* a = qa + 256 * b;
        int32_t s1 = 0, s2 = 0;
        for (int j = 0; j < 256 / sub; ++j) {
            int32_t dot = 0, sum = 0;
            for (int i = j * sub; i < (j + 1) * sub; ++i) {
                dot += k.q[i] * a[i];
                sum += a[i];
            }
            if (six) {
                s1 += k.sc[j] * (dot - 32 * sum);
            } else {
                s1 += k.sc[j] * dot;
                s2 += k.m[j] * sum;
            }
        }
        float f = static_cast<float>(s1) * k.d;
        if (!six) f = std::fma(-k.dmin, static_cast<float>(s2), f);
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

// Q8_0 weights (rows × cols) against tokens rows of x, as the AVX2 and AVX-512 levels compute them:
// per block S = Σ w·a exact, f = fl(S)·dw, acc = fma(f, da, acc); plus bias[r] if given.
inline std::vector<float> q8_0_order_model_matmul(const uint8_t* w, int rows, int64_t cols,
                                                  const float* x, int tokens, const float* bias) {
    const int64_t nb = cols / 32;
    const std::size_t row_bytes = static_cast<std::size_t>(nb) * sizeof(quant::BlockQ8_0);
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
                const uint8_t* p = row + static_cast<std::size_t>(b) * sizeof(quant::BlockQ8_0);
                uint16_t h;
                std::memcpy(&h, p, 2);
                int32_t s = 0;
                for (int i = 0; i < 32; ++i) s += static_cast<int8_t>(p[2 + i]) * qa[32 * b + i];
                const float f = static_cast<float>(s) * quant::fp16_to_f32(h);
                acc = std::fma(f, da[b], acc);
            }
            out[static_cast<std::size_t>(t) * static_cast<std::size_t>(rows) +
                static_cast<std::size_t>(r)] = bias ? acc + bias[r] : acc;
        }
    }
    return out;
}

}  // namespace hearth::test
