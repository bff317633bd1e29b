// Float arithmetic of the scalar kernels that must give the AVX2 kernels' (and
// llama.cpp's) bits: a fused multiply-add that needs no FMA instructions, and e^x as
// llama.cpp's CPU backend computes it. For the scalar files only (the AVX2 ones use
// avx2_util.h; see its note on inline code shared between files built with different
// flags).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace hearth::kernels::cpu {

// a · b + c rounded once, as std::fma, without calling it: std::fma is a slow software
// routine on processors that lack FMA, and MinGW-w64's fmaf rounds wrongly (a quarter of
// random inputs differ; scripts/windows-cross found it). The product is exact in double
// (24 + 24 bits); the double sum is made round-to-odd (its error, by TwoSum, decides the
// last bit when the sum is inexact), and rounding a round-to-odd value with 29 more bits
// to float gives the correctly rounded result, subnormal results included.
inline float fma_exact(float a, float b, float c) {
    const double p = static_cast<double>(a) * static_cast<double>(b);
    const double cd = static_cast<double>(c);
    const double s = p + cd;
    const uint64_t bits = std::bit_cast<uint64_t>(s);
    // Exact already, or the last bit odd: the double sum rounds to float correctly as it is.
    if ((bits & 1u) != 0 || !std::isfinite(s)) return static_cast<float>(s);
    const double v = s - p;
    const double err = (p - (s - v)) + (cd - v);  // s + err == p + c exactly
    if (err == 0.0) return static_cast<float>(s);
    // Inexact with an even last bit: the odd neighbour on the side of the exact value.
    const bool away = (err > 0.0) == (s > 0.0);
    return static_cast<float>(std::bit_cast<double>(away ? bits + 1 : bits - 1));
}

// e^x as ggml_v_expf (ggml-cpu/vec.h, AVX2 + FMA) computes it, one float at a time: the
// operations of avx2::expv in the same order, the fused ones as fma_exact.
inline float expv(float x) {
    const float r = 0x1.8p23f;
    const float z = fma_exact(x, 0x1.715476p+0f, r);
    const float n = z - r;
    const float b = fma_exact(-n, 0x1.7f7d1cp-20f, fma_exact(-n, 0x1.62e4p-1f, x));
    const uint32_t e = std::bit_cast<uint32_t>(z) << 23;
    const float k = std::bit_cast<float>(e + std::bit_cast<uint32_t>(1.0f));
    const float u = b * b;
    const float j = fma_exact(fma_exact(fma_exact(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u,
                                        fma_exact(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                              u, 0x1.ffffecp-1f * b);
    if (!(std::fabs(n) > 126.0f)) return fma_exact(k, j, k);
    // |x| beyond the range of 2^n as one exponent: two factors (or underflow / overflow).
    const uint32_t g = n <= 0.0f ? 0x82000000u : 0u;
    const float s1 = std::bit_cast<float>(g + 0x7f000000u);
    if (std::fabs(n) > 192.0f) return s1 * s1;
    const float s2 = std::bit_cast<float>(e - g);
    return fma_exact(s2, j, s2) * s1;
}

}  // namespace hearth::kernels::cpu
