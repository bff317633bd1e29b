#include "cpu/cpu_features.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

// HEARTH_HAVE_AVX2_KERNELS is defined by the build on x86, where the *_avx2.cpp files
// are compiled.
#if defined(HEARTH_HAVE_AVX2_KERNELS) && defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#include <immintrin.h>
#include <intrin.h>
#define HEARTH_X86 1
#elif defined(HEARTH_HAVE_AVX2_KERNELS) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#define HEARTH_X86 1
#endif

namespace hearth::kernels::cpu {

namespace {

#ifdef HEARTH_X86
void cpuid(uint32_t leaf, uint32_t sub, uint32_t regs[4]) {
#ifdef _MSC_VER
    int r[4];
    __cpuidex(r, static_cast<int>(leaf), static_cast<int>(sub));
    for (int i = 0; i < 4; ++i) regs[i] = static_cast<uint32_t>(r[i]);
#else
    __cpuid_count(leaf, sub, regs[0], regs[1], regs[2], regs[3]);
#endif
}

uint64_t xgetbv0() {
#ifdef _MSC_VER
    return _xgetbv(0);
#else
    uint32_t lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (static_cast<uint64_t>(hi) << 32) | lo;
#endif
}
#endif

}  // namespace

bool cpu_has_avx2() {
#ifdef HEARTH_X86
    uint32_t r[4];
    cpuid(0, 0, r);
    if (r[0] < 7) return false;
    cpuid(1, 0, r);
    const bool fma = (r[2] >> 12) & 1u;
    const bool osxsave = (r[2] >> 27) & 1u;
    const bool avx = (r[2] >> 28) & 1u;
    const bool f16c = (r[2] >> 29) & 1u;
    if (!(fma && osxsave && avx && f16c)) return false;
    // The OS must save XMM (bit 1) and YMM (bit 2) state on context switches.
    if ((xgetbv0() & 0x6u) != 0x6u) return false;
    cpuid(7, 0, r);
    return (r[1] >> 5) & 1u;  // EBX bit 5: AVX2
#else
    return false;
#endif
}

bool cpu_has_avx512() {
#if defined(HEARTH_X86) && defined(HEARTH_HAVE_AVX512_KERNELS)
    if (!cpu_has_avx2()) return false;
    // XCR0: XMM, YMM (bits 1, 2), opmask, upper ZMM0-15 and ZMM16-31 (bits 5, 6, 7).
    if ((xgetbv0() & 0xe6u) != 0xe6u) return false;
    uint32_t r[4];
    cpuid(7, 0, r);
    const bool f = (r[1] >> 16) & 1u;     // EBX bit 16: AVX512F
    const bool bw = (r[1] >> 30) & 1u;    // EBX bit 30: AVX512BW
    const bool vl = (r[1] >> 31) & 1u;    // EBX bit 31: AVX512VL
    const bool vnni = (r[2] >> 11) & 1u;  // ECX bit 11: AVX512_VNNI
    return f && bw && vl && vnni;
#else
    return false;
#endif
}

SimdLevel resolve_simd_level(SimdLevel requested) {
    if (requested == SimdLevel::Auto) {
        requested = SimdLevel::Avx512;
        if (const char* env = std::getenv("HEARTH_CPU_SIMD")) {
            if (std::strcmp(env, "scalar") == 0) requested = SimdLevel::Scalar;
            if (std::strcmp(env, "avx2") == 0) requested = SimdLevel::Avx2;
        }
    }
    if (requested == SimdLevel::Avx512 && !cpu_has_avx512()) requested = SimdLevel::Avx2;
    if (requested == SimdLevel::Avx2 && !cpu_has_avx2()) requested = SimdLevel::Scalar;
    return requested;
}

std::string cpu_identity() {
#ifdef HEARTH_X86
    uint32_t r[4];
    cpuid(0, 0, r);
    const uint32_t max_leaf = r[0];
    char vendor[13] = {};
    std::memcpy(vendor, &r[1], 4);
    std::memcpy(vendor + 4, &r[3], 4);
    std::memcpy(vendor + 8, &r[2], 4);
    cpuid(1, 0, r);
    const uint32_t eax = r[0];
    uint32_t family = (eax >> 8) & 0xfu, model = (eax >> 4) & 0xfu;
    if (family == 0xfu) family += (eax >> 20) & 0xffu;
    if (family >= 6) model |= ((eax >> 16) & 0xfu) << 4;
    std::string id = std::string(vendor) + " " + std::to_string(family) + "/" +
                     std::to_string(model) + "/" + std::to_string(eax & 0xfu);
    cpuid(0x80000000u, 0, r);
    if (r[0] >= 0x80000004u) {
        char brand[49] = {};
        for (uint32_t i = 0; i < 3; ++i) {
            cpuid(0x80000002u + i, 0, r);
            std::memcpy(brand + 16 * i, r, 16);
        }
        std::string b(brand);
        while (!b.empty() && b.back() == ' ') b.pop_back();
        std::size_t start = b.find_first_not_of(' ');
        if (start != std::string::npos) id += " " + b.substr(start);
    }
    if (cpu_has_avx2()) id += " avx2 fma f16c";
    if (max_leaf >= 7) {
        cpuid(7, 0, r);
        if ((r[1] >> 16) & 1u) id += " avx512f";
        if ((r[2] >> 11) & 1u) id += " avx512vnni";
        cpuid(7, 1, r);
        if ((r[0] >> 4) & 1u) id += " avxvnni";
    }
    if (cpu_has_avx512()) id += " os-zmm";
    return id;
#else
    return "unknown";
#endif
}

std::string_view simd_level_name(SimdLevel level) {
    switch (level) {
        case SimdLevel::Avx512:
            return "AVX-512";
        case SimdLevel::Avx2:
            return "AVX2";
        case SimdLevel::Scalar:
            return "scalar";
        case SimdLevel::Auto:
            break;
    }
    return "auto";
}

}  // namespace hearth::kernels::cpu
