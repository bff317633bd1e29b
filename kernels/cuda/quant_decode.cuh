// Decoding GGUF weight rows in registers, for the CUDA matrix products: decode16 turns 16
// consecutive elements of a row (group g = elements [16g, 16g + 16)) into floats, for
// every type the CPU backend reads. The formulas and their evaluation order are those of
// quant/dequant.cpp (and kernels/cuda/dequant.cu), so a decoded value equals the CPU's
// dequantised value bit for bit. __host__ __device__: the host twins run the same code.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "quant/fp16.h"
#include "quant/quant_types.h"

namespace hearth::gpu::decode {

using quant::TensorType;

__host__ __device__ __forceinline__ float bits_float(uint32_t u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
#endif
}

// IEEE binary16 bits → float, branch-free, exact for every input (NaN payload kept).
__host__ __device__ __forceinline__ float fp16(uint16_t h) {
    const uint32_t em = h & 0x7fffu;
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t bits = (em << 13) + 0x38000000u;  // rebias exponent 15 → 127
    if (em >= 0x7c00u) bits += 0x38000000u;    // inf/NaN: exponent 31 → 255
    const uint32_t sub = quant::float_to_bits(static_cast<float>(em) * 0x1p-24f);  // subnormal
    return bits_float(sign | (em < 0x400u ? sub : bits));
}

__host__ __device__ __forceinline__ float bf16(uint16_t h) {
    return bits_float(static_cast<uint32_t>(h) << 16);
}

// The 6-bit scale and min of sub-block j of a Q4_K/Q5_K super-block.
__host__ __device__ __forceinline__ void k_scale_min(int j, const uint8_t* q, int* sc, int* m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// kIq4nlValues[i] (i < 16) from two 64-bit constants: a host array is not visible in
// device code, and a local copy would be rebuilt in every call.
__host__ __device__ __forceinline__ int iq4nl_value(int i) {
    constexpr uint64_t kLo = 0xf6eaddcfbfad9881ull;  // -127 -104 -83 -65 -49 -35 -22 -10
    constexpr uint64_t kHi = 0x7159453526190d01ull;  //    1   13  25  38  53  69  89 113
    return static_cast<int8_t>(((i < 8 ? kLo : kHi) >> (8 * (i & 7))) & 0xffu);
}

// Q5_0/Q5_1's qh[4] as a little-endian u32 (not 4-aligned in the block).
__host__ __device__ __forceinline__ uint32_t load_qh(const uint8_t* qh) {
    return qh[0] | (qh[1] << 8) | (qh[2] << 16) | (static_cast<uint32_t>(qh[3]) << 24);
}

// Group g of a row whose blocks start at `row` (cols elements; only the float types may
// have a partial last group: its missing elements decode as 0).
template <TensorType T>
__host__ __device__ __forceinline__ void decode16(const void* row, int64_t g, int64_t cols,
                                                  float* y) {
    using namespace quant;
    if constexpr (T == TensorType::F32 || T == TensorType::F16 || T == TensorType::BF16) {
        const int64_t k0 = 16 * g;
        for (int i = 0; i < 16; ++i) {
            const int64_t k = k0 + i;
            float v = 0.0f;
            if (k < cols) {
                if constexpr (T == TensorType::F32) v = static_cast<const float*>(row)[k];
                if constexpr (T == TensorType::F16) v = fp16(static_cast<const uint16_t*>(row)[k]);
                if constexpr (T == TensorType::BF16) v = bf16(static_cast<const uint16_t*>(row)[k]);
            }
            y[i] = v;
        }
    } else if constexpr (T == TensorType::Q4_0 || T == TensorType::Q4_1 || T == TensorType::Q5_0 ||
                         T == TensorType::Q5_1) {
        // Half h of a 32-block: h = 0 the low nibbles of qs[0..15], h = 1 the high ones;
        // the fifth bit of element e (Q5) is bit e of qh.
        constexpr bool kMin = T == TensorType::Q4_1 || T == TensorType::Q5_1;
        constexpr bool kFive = T == TensorType::Q5_0 || T == TensorType::Q5_1;
        using Block = std::conditional_t<
            T == TensorType::Q4_0, BlockQ4_0,
            std::conditional_t<T == TensorType::Q4_1, BlockQ4_1,
                               std::conditional_t<T == TensorType::Q5_0, BlockQ5_0, BlockQ5_1>>>;
        const Block& b = static_cast<const Block*>(row)[g / 2];
        const int h = static_cast<int>(g % 2);
        const float d = fp16(b.d);
        float m = 0.0f;
        if constexpr (kMin) m = fp16(b.m);
        uint32_t qh = 0;
        if constexpr (kFive) qh = load_qh(b.qh) >> (16 * h);
        for (int i = 0; i < 16; ++i) {
            int q = h ? (b.qs[i] >> 4) : (b.qs[i] & 15);
            if constexpr (kFive) q |= static_cast<int>((qh >> i) & 1u) << 4;
            if constexpr (kMin) {
                y[i] = static_cast<float>(q) * d + m;
            } else {
                y[i] = static_cast<float>(q - (kFive ? 16 : 8)) * d;
            }
        }
    } else if constexpr (T == TensorType::Q8_0) {
        const BlockQ8_0& b = static_cast<const BlockQ8_0*>(row)[g / 2];
        const float d = fp16(b.d);
        const int8_t* q = b.qs + 16 * (g % 2);
        for (int i = 0; i < 16; ++i) y[i] = static_cast<float>(q[i]) * d;
    } else if constexpr (T == TensorType::Q4_K || T == TensorType::Q5_K) {
        // Super-block of 256 = 4 chunks of 64: chunk c's low nibbles of qs[32c..32c+31] are
        // sub-block 2c, its high nibbles sub-block 2c + 1. Group j (of 16) of the
        // super-block: chunk j / 4, part j % 4 (parts 0-1 low nibbles, 2-3 high).
        using Block = std::conditional_t<T == TensorType::Q4_K, BlockQ4_K, BlockQ5_K>;
        const Block& b = static_cast<const Block*>(row)[g / 16];
        const int j = static_cast<int>(g % 16), c = j / 4, part = j % 4;
        const int sub = 2 * c + part / 2, l0 = (part % 2) * 16;
        int sc, mn;
        k_scale_min(sub, b.scales, &sc, &mn);
        const float dl = fp16(b.d) * static_cast<float>(sc);
        const float ml = fp16(b.dmin) * static_cast<float>(mn);
        const uint8_t* qs = b.qs + 32 * c + l0;
        for (int i = 0; i < 16; ++i) {
            int q = part < 2 ? (qs[i] & 15) : (qs[i] >> 4);
            if constexpr (T == TensorType::Q5_K) q |= ((b.qh[l0 + i] >> sub) & 1) << 4;
            y[i] = dl * static_cast<float>(q) - ml;
        }
    } else if constexpr (T == TensorType::Q2_K || T == TensorType::Q3_K) {
        // Group j of the super-block is sub-block j: half j / 8, bit pair (j % 8) / 2 of
        // qs[32·half + 16·(j % 2) + i]; Q3_K's third bit is bit 4·half + pair of
        // hmask[16·(j % 2) + i] (see quant/quant_types.h).
        using Block = std::conditional_t<T == TensorType::Q2_K, BlockQ2_K, BlockQ3_K>;
        const Block& b = static_cast<const Block*>(row)[g / 16];
        const int j = static_cast<int>(g % 16), half = j / 8, pair = (j % 8) / 2;
        const int l0 = 16 * (j % 2);
        const uint8_t* qs = b.qs + 32 * half + l0;
        if constexpr (T == TensorType::Q2_K) {
            const float dl = fp16(b.d) * static_cast<float>(b.scales[j] & 15);
            const float ml = fp16(b.dmin) * static_cast<float>(b.scales[j] >> 4);
            for (int i = 0; i < 16; ++i)
                y[i] = dl * static_cast<float>((qs[i] >> (2 * pair)) & 3) - ml;
        } else {
            const int lo = j < 8 ? b.scales[j] & 15 : b.scales[j - 8] >> 4;
            const int sc = lo | (((b.scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4);
            const float dl = fp16(b.d) * static_cast<float>(sc - 32);
            for (int i = 0; i < 16; ++i) {
                const int q = ((qs[i] >> (2 * pair)) & 3) -
                              (((b.hmask[l0 + i] >> (4 * half + pair)) & 1) ? 0 : 4);
                y[i] = dl * static_cast<float>(q);
            }
        }
    } else if constexpr (T == TensorType::IQ4_NL || T == TensorType::IQ4_XS) {
        // 32-element runs of nibbles: the low nibbles of 16 bytes, then their high ones;
        // IQ4_XS: eight runs per super-block, each with its 6-bit scale.
        const uint8_t* qs;
        float dl;
        int h;
        if constexpr (T == TensorType::IQ4_NL) {
            const BlockIQ4_NL& b = static_cast<const BlockIQ4_NL*>(row)[g / 2];
            qs = b.qs;
            dl = fp16(b.d);
            h = static_cast<int>(g % 2);
        } else {
            const BlockIQ4_XS& b = static_cast<const BlockIQ4_XS*>(row)[g / 16];
            const int j = static_cast<int>(g % 16), sub = j / 2;
            const int ls = ((b.scales_l[sub / 2] >> (4 * (sub % 2))) & 15) |
                           (((b.scales_h >> (2 * sub)) & 3) << 4);
            qs = b.qs + 16 * sub;
            dl = fp16(b.d) * static_cast<float>(ls - 32);
            h = j % 2;
        }
        for (int i = 0; i < 16; ++i)
            y[i] = dl * static_cast<float>(iq4nl_value(h ? qs[i] >> 4 : qs[i] & 15));
    } else if constexpr (T == TensorType::Q6_K) {
        // Super-block halves of 128; in a half, element 32·quarter + l (l < 32) comes from
        // ql[l] / ql[l + 32] (low nibble: quarters 0, 1; high: 2, 3) and qh[l] bits
        // 2·quarter, with scale sc[l / 16 + 2·quarter].
        const BlockQ6_K& b = static_cast<const BlockQ6_K*>(row)[g / 16];
        const int j = static_cast<int>(g % 16), half = j / 8, quarter = (j % 8) / 2;
        const int l0 = (j % 2) * 16;
        const uint8_t* ql = b.ql + 64 * half + (quarter % 2) * 32 + l0;
        const uint8_t* qh = b.qh + 32 * half + l0;
        const float d = fp16(b.d);
        const float s = static_cast<float>(b.scales[8 * half + l0 / 16 + 2 * quarter]);
        for (int i = 0; i < 16; ++i) {
            const int lo = quarter < 2 ? (ql[i] & 15) : (ql[i] >> 4);
            const int q = (lo | (((qh[i] >> (2 * quarter)) & 3) << 4)) - 32;
            y[i] = d * s * static_cast<float>(q);
        }
    }
}

// Calls f(std::integral_constant<TensorType, T>{}) for `type`; false for an unknown type.
template <typename F>
bool with_type(TensorType type, F&& f) {
    switch (type) {
#define HEARTH_DECODE_CASE(X)                                   \
    case TensorType::X:                                         \
        f(std::integral_constant<TensorType, TensorType::X>{}); \
        return true;
        HEARTH_DECODE_CASE(F32)
        HEARTH_DECODE_CASE(F16)
        HEARTH_DECODE_CASE(BF16)
        HEARTH_DECODE_CASE(Q4_0)
        HEARTH_DECODE_CASE(Q4_1)
        HEARTH_DECODE_CASE(Q5_0)
        HEARTH_DECODE_CASE(Q5_1)
        HEARTH_DECODE_CASE(Q8_0)
        HEARTH_DECODE_CASE(Q4_K)
        HEARTH_DECODE_CASE(Q5_K)
        HEARTH_DECODE_CASE(Q6_K)
        HEARTH_DECODE_CASE(Q2_K)
        HEARTH_DECODE_CASE(Q3_K)
        HEARTH_DECODE_CASE(IQ4_NL)
        HEARTH_DECODE_CASE(IQ4_XS)
#undef HEARTH_DECODE_CASE
    }
    return false;
}

}  // namespace hearth::gpu::decode
