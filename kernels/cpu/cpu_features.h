// Which SIMD kernels the CPU backend runs. Chosen once per backend: the best level the
// processor and the operating system support, unless the environment variable
// HEARTH_CPU_SIMD caps it (`avx2`: no AVX-512 kernels; `scalar`: the portable fallback)
// or a constructor argument asks for a level.
#pragma once

#include <string>
#include <string_view>

namespace hearth::kernels::cpu {

enum class SimdLevel {
    Auto,    // request only: the best supported level
    Scalar,  // portable C++ (any processor)
    Avx2,    // x86-64 AVX2 + FMA + F16C (Haswell / Zen and later)
    Avx512,  // Avx2 plus AVX-512 F/BW/VL/VNNI (Ice Lake / Zen 4 and later): the prefill
             // products of the quantised types in 512-bit registers, the rest as Avx2.
             // The same bits as Avx2 for every op (the K-quants and Q8_0 follow orders
             // of their own at both levels: kquant_few.h, gemm_avx2_q8_0.cpp).
};

// Whether a resolved level runs the AVX2 kernels (Avx512 runs them for every op it has no
// AVX-512 kernel of its own for).
inline bool uses_avx2(SimdLevel level) {
    return level == SimdLevel::Avx2 || level == SimdLevel::Avx512;
}

// AVX2, FMA and F16C present and the OS saves the YMM registers (XGETBV), and the AVX2
// kernels were compiled in (HEARTH_HAVE_AVX2_KERNELS: x86 builds).
bool cpu_has_avx2();

// cpu_has_avx2(), AVX-512 F, BW, VL and VNNI present, the OS saves the ZMM and mask
// registers, and the AVX-512 kernels were compiled in (HEARTH_HAVE_AVX512_KERNELS).
bool cpu_has_avx512();

// Resolves a request: Auto → the best supported level, capped by HEARTH_CPU_SIMD (scalar,
// avx2). A level the CPU lacks falls back to the best one below it that it has.
SimdLevel resolve_simd_level(SimdLevel requested);

std::string_view simd_level_name(SimdLevel level);  // "scalar", "AVX2", "AVX-512"

// What identifies this processor to the kernel choice (kernel_tuner.h): vendor, family,
// model and stepping, the brand string and the SIMD features the kernels use, e.g.
// "AuthenticAMD 25/1/1 AMD EPYC avx2 fma f16c". "unknown" where there is no CPUID.
std::string cpu_identity();

}  // namespace hearth::kernels::cpu
