// Shared helpers of the CPU kernel suites: random weights in every GGUF block format and
// error measures. Weights are random bytes (every bit pattern of a quantised block is a
// valid block) with the fp16 scale fields overwritten by random finite scales, so the
// tests need no quantiser; the reference dequantises them.
#pragma once

#include <QString>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "quant/fp16.h"
#include "quant/quant_types.h"

// QVERIFY2 builds its message even when the check passes; per-element checks use this.
#define HEARTH_CHECK(cond, msg)              \
    do {                                     \
        if (!(cond)) QFAIL(qPrintable(msg)); \
    } while (0)

namespace hearth::test {

using quant::TensorType;

inline const std::vector<TensorType>& all_weight_types() {
    static const std::vector<TensorType> types = {
        TensorType::F32,  TensorType::F16,    TensorType::BF16,  TensorType::Q4_0,
        TensorType::Q4_1, TensorType::Q5_0,   TensorType::Q5_1,  TensorType::Q8_0,
        TensorType::Q2_K, TensorType::Q3_K,   TensorType::Q4_K,  TensorType::Q5_K,
        TensorType::Q6_K, TensorType::IQ4_NL, TensorType::IQ4_XS};
    return types;
}

// The 256-element super-block types (Q8xK activations, the K-quant order).
inline bool is_k_quant(TensorType t) {
    return t == TensorType::Q2_K || t == TensorType::Q3_K || t == TensorType::Q4_K ||
           t == TensorType::Q5_K || t == TensorType::Q6_K || t == TensorType::IQ4_XS;
}
inline bool is_float_type(TensorType t) {
    return t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16;
}
inline int64_t block_of(TensorType t) {
    return quant::traits(t)->block_elems;
}

inline QString type_name(TensorType t) {
    return QString::fromLatin1(quant::traits(t)->name);
}

inline std::vector<float> random_floats(std::mt19937& rng, std::size_t n, float lo = -1.0f,
                                        float hi = 1.0f) {
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
}

// rows × cols weights of `type` in GGUF layout. Scales: |d| in [0.002, 0.05] with a random
// sign for the symmetric formats, positive d and a random min for Q4_1/Q5_1 and the K-quants.
inline std::vector<uint8_t> random_weights(std::mt19937& rng, TensorType type, int64_t rows,
                                           int64_t cols) {
    const auto tr = *quant::traits(type);
    const int64_t nblocks = rows * cols / tr.block_elems;
    std::vector<uint8_t> w(static_cast<std::size_t>(nblocks * tr.block_bytes));
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(0.002f, 0.05f), sign(-1.0f, 1.0f);
    const auto put16 = [&](std::size_t off, float v) {
        const uint16_t h = quant::f32_to_fp16(v);
        std::memcpy(&w[off], &h, 2);
    };
    if (type == TensorType::F32 || type == TensorType::F16 || type == TensorType::BF16) {
        const std::vector<float> f = random_floats(rng, static_cast<std::size_t>(rows * cols));
        for (std::size_t i = 0; i < f.size(); ++i) {
            if (type == TensorType::F32) {
                std::memcpy(&w[4 * i], &f[i], 4);
            } else {
                const uint16_t h =
                    type == TensorType::F16 ? quant::f32_to_fp16(f[i]) : quant::f32_to_bf16(f[i]);
                std::memcpy(&w[2 * i], &h, 2);
            }
        }
        return w;
    }
    for (uint8_t& b : w) b = static_cast<uint8_t>(byte(rng));
    for (int64_t b = 0; b < nblocks; ++b) {
        const auto off = static_cast<std::size_t>(b * tr.block_bytes);
        const float s = sign(rng) < 0 ? -1.0f : 1.0f;
        switch (type) {
            case TensorType::Q4_0:
            case TensorType::Q5_0:
            case TensorType::Q8_0:
                put16(off, s * scale(rng));
                break;
            case TensorType::Q4_1:
            case TensorType::Q5_1:
                put16(off, scale(rng));
                put16(off + 2, -8.0f * scale(rng) * sign(rng));
                break;
            case TensorType::Q4_K:
            case TensorType::Q5_K:
                put16(off, scale(rng) * 0.05f);  // × 6-bit sub-block scales
                put16(off + 2, scale(rng) * 0.05f);
                break;
            case TensorType::Q6_K:
                put16(off + 208, s * scale(rng) * 0.05f);
                break;
            case TensorType::Q2_K:  // × 4-bit scales and mins
                put16(off + 80, scale(rng) * 0.2f);
                put16(off + 82, scale(rng) * 0.2f);
                break;
            case TensorType::Q3_K:  // × 6-bit signed scales (−32..31)
                put16(off + 108, s * scale(rng) * 0.05f);
                break;
            case TensorType::IQ4_NL:  // × grid values up to 127
                put16(off, s * scale(rng) * 0.05f);
                break;
            case TensorType::IQ4_XS:  // × scales (−32..31) × grid values
                put16(off, s * scale(rng) * 0.002f);
                break;
            default:
                break;
        }
    }
    return w;
}

// ‖a − b‖ / ‖b‖
inline double rel_l2(const float* a, const float* b, std::size_t n) {
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        num += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
        den += static_cast<double>(b[i]) * b[i];
    }
    return den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
}

inline double max_abs_diff(const float* a, const float* b, std::size_t n) {
    double m = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]));
    return m;
}

}  // namespace hearth::test
