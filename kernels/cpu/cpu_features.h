// Which SIMD kernels the CPU backend runs. Chosen once per backend: the best level the
// processor and the operating system support, unless the environment variable
// HEARTH_CPU_SIMD=scalar (or a constructor argument) forces the portable fallback.
#pragma once

#include <string_view>

namespace hearth::kernels::cpu {

enum class SimdLevel {
    Auto,    // request only: the best supported level
    Scalar,  // portable C++ (any processor)
    Avx2,    // x86-64 AVX2 + FMA + F16C (Haswell / Zen and later)
};

// AVX2, FMA and F16C present and the OS saves the YMM registers (XGETBV), and the AVX2
// kernels were compiled in (HEARTH_HAVE_AVX2_KERNELS: x86 builds).
bool cpu_has_avx2();

// Resolves a request: Auto → Scalar if HEARTH_CPU_SIMD=scalar, else the best supported
// level. A level the CPU lacks falls back to Scalar.
SimdLevel resolve_simd_level(SimdLevel requested);

std::string_view simd_level_name(SimdLevel level);  // "scalar", "AVX2"

}  // namespace hearth::kernels::cpu
