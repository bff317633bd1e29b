// Scalar conversions between float and the 16-bit float formats stored in model files.
// f32_to_fp16 also compiles as CUDA device code (the KV append writes the same bits on
// the GPU as on the CPU).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define HEARTH_HOST_DEVICE __host__ __device__
#else
#define HEARTH_HOST_DEVICE
#endif

namespace hearth::quant {

HEARTH_HOST_DEVICE inline uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    return std::bit_cast<uint32_t>(f);
#endif
}

// IEEE 754 binary16 → float, exact for every input including subnormals, inf and NaN.
inline float fp16_to_f32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);  // inf or NaN
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (mant << 13);  // normal: rebias 15 → 127
    } else if (mant == 0) {
        bits = sign;  // ±0
    } else {
        // Subnormal half: normalise the mantissa into a normal float.
        uint32_t e = 113;
        while ((mant & 0x400u) == 0) {
            mant <<= 1;
            --e;
        }
        bits = sign | (e << 23) | ((mant & 0x3ffu) << 13);
    }
    return std::bit_cast<float>(bits);
}

// float → binary16, round to nearest even; overflow gives inf, NaN stays NaN.
HEARTH_HOST_DEVICE inline uint16_t f32_to_fp16(float f) {
    const uint32_t x = float_to_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u)
        return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to ≥ 65520
    if (abs < 0x38800000u) {
        // Result is subnormal or zero: shift with round-to-nearest-even.
        if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
        const uint32_t e = abs >> 23;
        const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126 - e;  // 14..24
        uint32_t half = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1);
        const uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) ++half;
        return static_cast<uint16_t>(sign | half);
    }
    uint32_t half = ((abs - 0x38000000u) >> 13);
    const uint32_t rem = abs & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
}

inline float bf16_to_f32(uint16_t h) {
    return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

inline uint16_t f32_to_bf16(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
    x += 0x7fffu + ((x >> 16) & 1u);                      // round to nearest even
    return static_cast<uint16_t>(x >> 16);
}

}  // namespace hearth::quant
